"""Architecture matrix: which real (SASS) and virtual (PTX) targets load and run on this GPU.

Each target NVRTC can compile for is compiled on the host, then loaded and run in one
fresh process with the JIT cache disabled (so every PTX load is a real JIT compile). A
target this NVRTC cannot compile for is recorded as such, not as a failure of the GPU.
"""

from __future__ import annotations

from pathlib import Path

from cudagloss.model.measurement import Result
from verifier.cuda import CudaError, Device, compile_source, supported_archs
from verifier.experiment import Outcome, failure
from verifier.kernels import saxpy
from verifier.spawn import spawn

ID = "arch-matrix"
PURPOSE = "Whether SASS and PTX built for each architecture from sm_75 to sm_121 load and run on this GPU"
EXTRA = ["90a"]  # architecture-specific targets asked for beside NVRTC's plain list


def targets(supported: list[int]) -> list[str]:
    """sm_XX for every real architecture this NVRTC supports, then compute_XX, with the extras."""
    numbers = sorted({*map(str, supported), *EXTRA}, key=lambda n: (int(n.rstrip("af")), n))
    return [f"sm_{n}" for n in numbers] + [f"compute_{n}" for n in numbers]


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    outcome = Outcome(repeats=1)
    images: dict[str, str] = {}
    not_compiled: dict[str, str] = {}
    for target in targets(supported_archs()):
        try:
            compiled = compile_source(saxpy.SOURCE, "saxpy.cu", target)
        except CudaError as exc:
            not_compiled[target] = f"{exc.name}: {exc.log or exc.message}"
            continue
        path = workdir / f"{target}.{compiled.kind}"
        data = compiled.image.rstrip(b"\0 ") + b"\0" if compiled.kind == "ptx" else compiled.image
        path.write_bytes(data)
        images[target] = str(path)
    found = spawn("kernels.saxpy", "load_each", {"images": images}, {"CUDA_CACHE_DISABLE": "1"})
    if not outcome.gate("the worker process ran", found["ok"], failure(found)):
        return outcome
    wrong = [t for t, r in found.items() if isinstance(r, dict) and r.get("ok") and not r["correct"]]
    outcome.gate("every target that loaded computed correctly", not wrong, ", ".join(wrong))
    cc = device.describe()["compute_capability"].replace(".", "")
    outcome.gate(f"sm_{cc} SASS runs (the control)", bool(found.get(f"sm_{cc}", {}).get("ok")))
    runs = []
    for target in targets(supported_archs()):
        kind = "PTX" if target.startswith("compute_") else "SASS"
        if target in not_compiled:
            outcome.add(Result(f"{target}_outcome", "not compiled", "", f"{kind} for {target}: {not_compiled[target]}"))
            continue
        r = found[target]
        outcome.add(
            Result(f"{target}_runs", bool(r["ok"]), "", f"{kind} for {target}: does it load and run?"),
            Result(
                f"{target}_outcome",
                "runs" if r["ok"] else r["error_name"],
                "",
                f"{kind} for {target}: 'runs', or the driver's error",
            ),
        )
        if not r["ok"]:
            outcome.add(Result(f"{target}_error", failure(r), "", f"{kind} for {target}: the error, with the JIT log"))
        if r["ok"]:
            runs.append(target)
    outcome.add(Result("targets_that_run", ", ".join(runs), "", "every target whose image loaded and ran"))
    return outcome


summarise = None
"""No pure summary: run() judges what it saw as it goes (the experiment contract, verifier/contract.py)."""
