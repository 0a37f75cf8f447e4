"""Instruction availability on the card: each feature of the availability table, run.

`make generations` asks NVRTC which targets compile each feature's kernel
(computed/instruction-availability.json) and runs nothing. This experiment asks the GPU. Each
feature's kernel (verifier/kernels/features.py) is compiled by NVRTC for this GPU's own targets,
the first of sm_XX, sm_XXa and sm_XXf that compiles it (wgmma compiles for sm_90a alone), loaded
and launched in a fresh process of its own, so that a kernel that faults leaves the next one a
clean context. A cell is "ran" where the launch and cuCtxSynchronize returned CUDA_SUCCESS and
the kernel wrote its output; else the driver's error in its own words. A feature none of the
GPU's targets compiles is recorded with NVRTC's refusal for the plain target. tcgen05.mma is
loaded and not launched: its operands are descriptors of tensor memory and shared memory tiles
that its kernel does not build, and a launch with made-up ones would fault by design.

Each kernel's source is a constant of this module named after its feature (MMA_F16 for mma-f16),
set from FEATURES below, so that the recipe hashes and the page shows exactly what was compiled.
Its NEEDS are the targets `make generations` found NVRTC compiles it for, which `make kernels`
checks against NVRTC again.

Prediction on a compute capability 9.0 GPU (H100, H200), from the table: ldmatrix, stmatrix,
mma.sync FP16/BF16/TF32/FP8/INT8/FP64, cp.async, mbarrier, the bulk and tensor copies, clusters,
elect.sync, redux.sync and griddepcontrol compile for sm_90 and run; wgmma and setmaxnreg
compile for sm_90a and run; FP6 and FP4 mma.sync and both tcgen05 features are refused by ptxas
for sm_90 and sm_90a, and NVRTC has no sm_90f.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier import launch_ex
from verifier.cuda import CudaError, Device, check, compile_source, nvrtc_version
from verifier.experiment import ROOT, Outcome
from verifier.kernels.feature import HEAD
from verifier.kernels.features import FEATURES
from verifier.spawn import StepFailed, spawn
from verifier.targets import Needs, refusal

ID = "instruction-availability"
PURPOSE = "Which instructions of the availability table this GPU runs: each feature's kernel compiled for its targets"
USES = ("launch_ex.py",)
VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""
RUNS_ON = Needs("asks each GPU which of the table's features its own targets compile and run; a refusal is a result")

RAN, LOADED, REFUSED = "ran", "loaded", "refused by the compiler"
SENTINEL = 0xFFFFFFFF
"""Every word of the output buffer before a launch: a kernel that ran wrote over some of it."""
BUFFER_BYTES = 1 << 16
PATTERN = 0x3C003C00
"""Every word of the input buffer: two FP16 ones, so the matrix features multiply real numbers."""
DESCRIPTOR = 1024 >> 4
"""A shared-memory matrix descriptor (wgmma, tcgen05.mma) for address 1024 with no strides or
swizzle: inside the 16 KiB of dynamic shared memory wgmma's launch asks for."""
STEP_TIMEOUT_S = 60.0


def constant(feature_id: str) -> str:
    """The module constant holding a feature's source: 'mma-f16' -> 'MMA_F16'."""
    return feature_id.upper().replace("-", "_")


SOURCES: dict[str, str] = {f.id: HEAD + f.source.lstrip("\n") for f in FEATURES}
globals().update({constant(fid): source for fid, source in SOURCES.items()})


def _compiled_targets() -> dict[str, tuple[str, ...]]:
    """Each feature's targets NVRTC compiled it for, from the committed availability table."""
    try:
        doc = json.loads((ROOT / "computed" / "instruction-availability.json").read_text(encoding="utf-8"))
        values = doc["values"]
        return {f.id: tuple(t for t, row in values.items() if row.get(f.id) == "compiled") for f in FEATURES}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


_COMPILED = _compiled_targets()
NEEDS = {
    constant(f.id): Needs(f"{f.ptx} (computed/instruction-availability.json)", only=targets)
    for f in FEATURES
    if (targets := _COMPILED.get(f.id))
}
"""Checked by make kernels against NVRTC (verifier/targets.py); a feature missing here is
declared for every target, and make kernels says where NVRTC refuses it."""


@dataclass(frozen=True)
class Launch:
    """How a feature's kernel k(out, ...) is launched: its block, grid and dynamic shared memory,
    the parameters after `out`, and whether it is launched at all."""

    block: int = 32
    grid: int = 1
    shared: int = 0
    inputs: tuple[str, ...] = ()
    """'in' (a buffer of PATTERN), 'desc' (DESCRIPTOR), 'u32' (zero), 'map' (a 2-D tensor map of 'in')."""
    launched: bool = True


LAUNCHES: dict[str, Launch] = {
    **{f.id: Launch(inputs=("in",)) for f in FEATURES if f.id.startswith("mma-")},
    "wgmma": Launch(block=128, shared=16 << 10, inputs=("desc", "desc")),
    "tcgen05-mma": Launch(inputs=("desc", "desc", "u32", "u32"), launched=False),
    "cp-async": Launch(block=128, inputs=("in",)),
    "bulk-copy": Launch(block=64, inputs=("in",)),
    "tensor-copy": Launch(block=64, inputs=("map",)),
    "cluster-dsmem": Launch(grid=2),
    "setmaxnreg": Launch(block=128),
}
"""Where a feature is not named, Launch(): one warp, k(out)."""


def targets_for(cc: str) -> tuple[str, ...]:
    """This GPU's targets in the order tried: plain, arch-specific, family-specific ('9.0' -> sm_90, sm_90a, sm_90f)."""
    plain = f"sm_{cc.replace('.', '')}"
    return plain, f"{plain}a", f"{plain}f"


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    cc = device.describe()["compute_capability"]
    raw: dict[str, Any] = {"nvrtc": nvrtc_version(), "features": {}}
    for feature in FEATURES:
        entry: dict[str, Any] = {"refusals": {}}
        for target in targets_for(cc):
            try:
                compiled = compile_source(SOURCES[feature.id], f"{feature.id}.cu", target)
            except CudaError as exc:
                entry["refusals"][target] = refusal(exc)
                continue
            image = workdir / f"{feature.id}.cubin"
            image.write_bytes(compiled.image)
            entry["target"] = target
            args = {"image": str(image), "feature": feature.id}
            try:
                entry["run"] = spawn("experiments.instruction_availability", "launch", args, {}, STEP_TIMEOUT_S)
            except StepFailed as exc:
                entry["run"] = {"ok": False, "call": "the step's process", "error_name": "no result", "error_code": -1}
                entry["run"]["error_message"] = str(exc)[:500]
            for key in ("started_at", "finished_at", "import_s", "step_s"):
                entry["run"].pop(key, None)
            break
        raw["features"][feature.id] = entry
    return summarise(raw, cc)


def _arguments(gpu: Any, spec: Launch, out: int, data: int) -> list[Any]:
    import numpy as np

    args: list[Any] = [np.uint64(out)]
    for kind in spec.inputs:
        if kind == "in":
            args.append(np.uint64(data))
        elif kind == "desc":
            args.append(np.uint64(DESCRIPTOR))
        elif kind == "u32":
            args.append(np.uint32(0))
        else:  # "map": one 64-word row of the input buffer, copied whole as one box
            args.append(launch_ex.tensor_map_2d(gpu, data, 1, 64, 256, 1, 64)[0])
    return args


def step_launch(args: dict[str, Any]) -> dict[str, Any]:
    """In a fresh process: load the feature's cubin and, unless it is only loaded, launch it once
    and read back whether it wrote its output."""
    import numpy as np

    from verifier.gpu import Gpu

    t0 = time.perf_counter()
    device = Device()
    gpu = Gpu(device)
    drv = device.driver
    init_s = time.perf_counter() - t0
    spec = LAUNCHES.get(args["feature"], Launch())
    t0 = time.perf_counter()
    module, log = device.load(Path(args["image"]).read_bytes())
    fn = device.function(module, "k")
    load_s = time.perf_counter() - t0
    if not spec.launched:
        return {"outcome": LOADED, "jit_log": log, "init_s": init_s, "load_s": load_s}
    out = check("cuMemAlloc", drv.cuMemAlloc(BUFFER_BYTES))
    data = check("cuMemAlloc", drv.cuMemAlloc(BUFFER_BYTES))
    check("cuMemsetD32", drv.cuMemsetD32(out, SENTINEL, BUFFER_BYTES // 4))
    check("cuMemsetD32", drv.cuMemsetD32(data, PATTERN, BUFFER_BYTES // 4))
    t0 = time.perf_counter()
    launch_ex.launch(gpu, fn, spec.grid, spec.block, _arguments(gpu, spec, int(out), int(data)), spec.shared)
    check("cuCtxSynchronize", drv.cuCtxSynchronize())
    run_s = time.perf_counter() - t0
    words = np.zeros(BUFFER_BYTES // 4, dtype=np.uint32)
    check("cuMemcpyDtoH", drv.cuMemcpyDtoH(words.ctypes.data, out, BUFFER_BYTES))
    written = int(np.count_nonzero(words != SENTINEL))
    return {"outcome": RAN, "words_written": written, "init_s": init_s, "load_s": load_s, "run_s": run_s}


def summarise(raw: dict[str, Any], cc: str) -> Outcome:
    """Per feature: ran, loaded, refused by the compiler, or the driver's error (pure: the CPU test feeds it)."""
    outcome = Outcome(repeats=1)
    outcome.add(Result("nvrtc_version", raw["nvrtc"], "", "the NVRTC that compiled the kernels (nvrtcVersion)"))
    failed: list[str] = []
    ran: list[str] = []
    for feature in FEATURES:
        entry = raw["features"][feature.id]
        key = feature.id.replace("-", "_")
        what = f"{feature.ptx} ({feature.label})"
        target = entry.get("target")
        if target is None:
            plain = targets_for(cc)[0]
            outcome.add(
                Result(f"{key}_on_this_gpu", REFUSED, "", f"{what}: on this GPU's targets"),
                Result(f"{key}_refusal", entry["refusals"].get(plain, ""), "", f"{what}: NVRTC's refusal for {plain}"),
            )
            continue
        step = entry["run"]
        if not step.get("ok"):
            verdict = step["error_name"]
        elif step.get("outcome") == LOADED:
            verdict = LOADED
        else:
            verdict = RAN if step.get("words_written", 0) > 0 else "ran, wrote nothing"
        outcome.add(
            Result(f"{key}_on_this_gpu", verdict, "", f"{what}: 'ran', 'loaded', or the driver's error"),
            Result(f"{key}_target", target, "", f"{what}: the first of this GPU's targets NVRTC compiled it for"),
        )
        if not step.get("ok"):
            detail = f"{step.get('call', '')}: {step['error_message']}"
            outcome.add(Result(f"{key}_error", detail, "", f"{what}: the error, in the driver's words"))
        if verdict == RAN:
            ran.append(feature.id)
        elif verdict != LOADED:
            failed.append(f"{feature.id} ({verdict})")
    outcome.add(Result("features_that_ran", ", ".join(ran), "", "every feature whose kernel ran on this GPU"))
    outcome.gate(
        "every feature NVRTC compiled for this GPU's targets ran on it and wrote its output (tcgen05.mma: loaded)",
        not failed,
        "; ".join(failed),
    )
    return outcome
