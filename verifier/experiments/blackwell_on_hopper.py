"""Blackwell on Hopper: what the tool chain and the driver answer for tensor memory code.

One kernel allocates Blackwell's tensor memory and frees it again (tcgen05.alloc, relinquish,
dealloc: instructions of the sm_100a family only, PTX ISA 8.6 and later), one warp doing it as
the PTX ISA requires, and writes the address it got. NVRTC compiles it for each of TARGETS on
the node: the arch-specific sm_100a, the family-specific sm_100f, plain sm_100, Hopper's
sm_90a, and PTX for compute_90a (NVRTC writes PTX without assembling it, so ptxas's refusal is
left to the driver's JIT at load). Every image that compiled is loaded with cuModuleLoadDataEx
(JIT logs captured) and, where it loads, run. The answers are the measurement: the compile's
NVRTC error and log, the load's error name, number, message and JIT log, all as text. A control
(the same shape without tcgen05, built for this GPU) must load and run. The NVRTC version is
recorded beside whether it knows sm_100: an older NVRTC refuses the target itself.

As no_kernel_image.py and arch_matrix.py, one load each, in this process: a refused load
leaves the context usable, and a failed JIT is never cached. Nothing is timed.

Prediction on the H200 nodes (NVRTC 13.0, driver 580): NVRTC compiles the kernel for sm_100a and
sm_100f; for sm_100 and sm_90a it fails with NVRTC_ERROR_COMPILATION, ptxas's log saying
"Instruction 'tcgen05.alloc' not supported on .target 'sm_90a'" (likewise 'sm_100': tensor
memory needs the a or f target). The sm_100a and sm_100f cubins are refused at load with
CUDA_ERROR_NO_BINARY_FOR_GPU ("no kernel image is available for execution on the device"), as
any cubin of another architecture is; the compute_90a PTX compiles in NVRTC and fails at load
with CUDA_ERROR_INVALID_PTX, its JIT log naming the same unsupported instruction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import CudaError, Device, check, compile_source, nvrtc_version, supported_archs
from verifier.experiment import Outcome
from verifier.targets import Needs

ID = "blackwell-on-hopper"
PURPOSE = (
    "What NVRTC and the driver answer for Blackwell tensor memory code (tcgen05) built for sm_100a, "
    "sm_100f, sm_100, sm_90a and compute_90a, and loaded on this GPU"
)

TARGETS = ("sm_100a", "sm_100f", "sm_100", "sm_90a", "compute_90a")
COLUMNS = 32
"""Tensor memory columns allocated: the smallest allocation (a power of two, at least 32)."""
RAN = 0x600D
"""What a kernel that ran writes beside its result."""

NEEDS = {
    "SOURCE": Needs(
        "tcgen05 tensor memory, on arch- and family-specific targets",
        only=("sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f"),
    )
}
"""Checked by make kernels against NVRTC (verifier/targets.py): the targets NVRTC 13.0 compiles it for."""
RUNS_ON = Needs("asks NVRTC and the driver about Blackwell code on whatever GPU the node has")
"""The kernel is for Blackwell targets, but the experiment is the asking: it runs on any GPU."""


SOURCE = rf"""
// One warp allocates {COLUMNS} columns of tensor memory, writes their address, and frees them.
extern "C" __global__ void tmem_alloc(unsigned int* out) {{
    __shared__ unsigned int taddr;
    if (threadIdx.x < 32) {{
        unsigned int dst = (unsigned int)__cvta_generic_to_shared(&taddr);
        asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], {COLUMNS};" :: "r"(dst) : "memory");
        asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
        asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    }}
    __syncthreads();
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    unsigned int address = taddr;
    if (threadIdx.x == 0) {{ out[0] = address; out[1] = {RAN}u; }}
    if (threadIdx.x < 32) {{
        asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, {COLUMNS};" :: "r"(address) : "memory");
    }}
}}
"""
CONTROL_SOURCE = rf"""
// The control: the same shape without tensor memory, built for the GPU it runs on.
extern "C" __global__ void tmem_alloc(unsigned int* out) {{
    __shared__ unsigned int taddr;
    if (threadIdx.x == 0) taddr = 0u;
    __syncthreads();
    if (threadIdx.x == 0) {{ out[0] = taddr; out[1] = {RAN}u; }}
}}
"""


def one_line(log: str) -> str:
    """The first error line of a log, its runs of spaces made one ('' for an empty log)."""
    lines = [" ".join(line.split()) for line in log.splitlines() if line.strip()]
    return next((line for line in lines if "error" in line.lower()), lines[0] if lines else "")


def attempt(device: Device, image: bytes) -> dict[str, Any]:
    """Load the image; where it loads, run tmem_alloc with one warp and read what it wrote."""
    import numpy as np

    drv = device.driver
    try:
        module, log = device.load(image)
    except CudaError as exc:
        return exc.as_result()
    out = check("cuMemAlloc", drv.cuMemAlloc(8))
    try:
        fn = device.function(module, "tmem_alloc")
        check("cuMemsetD32", drv.cuMemsetD32(out, 0xFFFFFFFF, 2))
        arg = np.array([int(out)], dtype=np.uint64)
        pointers = np.array([arg.ctypes.data], dtype=np.uint64)
        try:
            check("cuLaunchKernel", drv.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, 0, pointers.ctypes.data, 0))
            check("cuCtxSynchronize", drv.cuCtxSynchronize())
        except CudaError as exc:
            return exc.as_result() | {"loaded": True, "jit_log": log}
        words = np.zeros(2, dtype=np.uint32)
        check("cuMemcpyDtoH", drv.cuMemcpyDtoH(words.ctypes.data, out, 8))
    finally:
        check("cuMemFree", drv.cuMemFree(out))
        check("cuModuleUnload", drv.cuModuleUnload(module))
    return {"ok": True, "jit_log": log, "address": int(words[0]), "ran": int(words[1]) == RAN}


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    cc = device.describe()["compute_capability"]
    raw: dict[str, Any] = {"nvrtc": nvrtc_version(), "archs": supported_archs(), "compile": {}, "load": {}}
    for target in TARGETS:
        try:
            compiled = compile_source(SOURCE, "tmem.cu", target)
        except CudaError as exc:
            raw["compile"][target] = {"ok": False, "error_name": exc.name, "log": exc.log or exc.message}
            continue
        raw["compile"][target] = {"ok": True, "kind": compiled.kind, "bytes": len(compiled.image), "log": compiled.log}
        image = compiled.image.rstrip(b"\0 ") + b"\0" if compiled.kind == "ptx" else compiled.image
        raw["load"][target] = attempt(device, image)
    control = compile_source(CONTROL_SOURCE, "control.cu", f"sm_{cc.replace('.', '')}")
    raw["control"] = attempt(device, control.image)
    return summarise(raw, cc)


def summarise(raw: dict[str, Any], cc: str) -> Outcome:
    """Results and gates from what NVRTC and the driver answered (pure: the CPU test feeds it)."""
    outcome = Outcome(repeats=1)
    control = raw["control"]
    if not outcome.gate(
        "the control (no tensor memory, built for this GPU) loads and runs",
        control["ok"] and control["ran"],
        "" if control["ok"] else f"{control['error_name']}: {control['error_message']}",
    ):
        return outcome
    outcome.add(
        Result("nvrtc_version", raw["nvrtc"], "", "the NVRTC that compiled the kernel (nvrtcVersion)"),
        Result("nvrtc_knows_sm_100", 100 in raw["archs"], "", "whether sm_100 is in nvrtcGetSupportedArchs"),
    )
    for target in TARGETS:
        c = raw["compile"][target]
        what = f"the tcgen05 kernel compiled by NVRTC for {target}"
        outcome.add(
            Result(
                f"{target}_compile", "compiled" if c["ok"] else c["error_name"], "", f"{what}: 'compiled' or the error"
            ),
            Result(f"{target}_compile_log", c["log"] or None, "", f"{what}: the NVRTC log (ptxas's lines)"),
        )
        if not c["ok"]:
            outcome.add(Result(f"{target}_refusal", one_line(c["log"]), "", f"{what}: the log's first error line"))
            continue
        r = raw["load"][target]
        what = f"the {target} {'PTX' if c['kind'] == 'ptx' else 'cubin'} of the tcgen05 kernel, loaded on this GPU"
        if r["ok"]:
            outcome.add(
                Result(f"{target}_load", "runs" if r["ran"] else "loaded", "", f"{what}: 'runs', or the error"),
                Result(f"{target}_tmem_address", r["address"], "", f"{what}: the tensor memory address it was given"),
            )
            continue
        outcome.add(
            Result(f"{target}_load", r["error_name"], "", f"{what}: the error {r['call']} returned"),
            Result(f"{target}_load_error_code", r["error_code"], "", f"{what}: the error's number"),
            Result(f"{target}_load_error_message", r["error_message"], "", f"{what}: the driver's message"),
            Result(f"{target}_load_jit_log", r["jit_log"] or None, "", f"{what}: the JIT error log"),
        )
    gates(outcome, raw, cc)
    return outcome


def gates(outcome: Outcome, raw: dict[str, Any], cc: str) -> None:
    """The kernel is Blackwell-only (Hopper's target refuses it), and sm_100a runs only on 10.0."""
    hopper = raw["compile"]["sm_90a"]
    outcome.gate(
        "NVRTC refuses the tcgen05 kernel for sm_90a (it is Blackwell-only code)",
        not hopper["ok"] and "tcgen05" in hopper["log"],
        one_line(hopper["log"]) if not hopper["ok"] else "it compiled",
    )
    load = raw["load"].get("sm_100a")
    if load is None:
        detail = f"not compiled by NVRTC {raw['nvrtc']}: nothing to load"
        outcome.gate("the sm_100a cubin runs only on a compute capability 10.0 GPU", True, detail)
        return
    ran = bool(load["ok"] and load.get("ran"))
    said = "ran" if ran else load.get("error_name", "loaded, did not run")
    outcome.gate("the sm_100a cubin runs only on a compute capability 10.0 GPU", ran == (cc == "10.0"), f"{cc}: {said}")
