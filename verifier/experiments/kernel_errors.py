"""Kernel errors, triggered for real: the error a programmer pastes, the call that returned it,
and whether the context still works after it.

Each case runs in a fresh process of its own (a fault that spoils its context must not touch the
next case). The process loads the module, allocates a buffer, then does the one wrong thing:
- a kernel stores to an address no allocation holds (16 bytes above zero);
- a kernel stores a 4-byte word at an odd address inside a valid allocation;
- a kernel fails a device-side assert (__assertfail, what assert() calls on the device);
- a kernel executes PTX `trap`;
- cuLaunchKernel with a block one thread over the limit (1025 threads);
- cuMemAlloc of 1 GiB more than the card's whole memory (a plain allocation; nothing is touched);
- cuModuleGetFunction for a kernel the module does not hold.
The first error is recorded with the call that returned it (a kernel's fault is reported by the
next call that waits for it, here cuCtxSynchronize), its name, number and the driver's message,
and the runtime's name and message for the same number (the words most people see). Then the
process launches a kernel that does nothing wrong and waits for it: 'works', or the error that
call returned (the same one again where the error is sticky and the context is lost). A control
process runs that kernel alone and must find it working. Nothing is timed.

Prediction (H100/H200, driver 580): the store to address 16 is CUDA_ERROR_ILLEGAL_ADDRESS ("an
illegal memory access was encountered"), the odd store CUDA_ERROR_MISALIGNED_ADDRESS, the assert
CUDA_ERROR_ASSERT, the trap CUDA_ERROR_LAUNCH_FAILED ("unspecified launch failure"), each at
cuCtxSynchronize and sticky; the 1025-thread block CUDA_ERROR_INVALID_VALUE at cuLaunchKernel (the
runtime's cudaErrorInvalidConfiguration is the same mistake made through <<<>>>), the allocation
CUDA_ERROR_OUT_OF_MEMORY, the missing kernel CUDA_ERROR_NOT_FOUND, none of them sticky.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import CudaError, Device, check, compile_source
from verifier.experiment import Outcome
from verifier.spawn import StepFailed, spawn

ID = "kernel-errors"
PURPOSE = "The error each common kernel mistake returns, at which call, in the driver's and runtime's words, and after"
VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

SOURCE = r"""
// Does nothing wrong: the control, and the kernel that asks whether the context still works.
extern "C" __global__ void fine(unsigned int* out) { out[threadIdx.x] = threadIdx.x; }

// Stores one 4-byte word at address + offset: an address no allocation holds, or an odd one.
extern "C" __global__ void store(unsigned long long address, unsigned long long offset) {
    *(volatile unsigned int*)(address + offset) = 1u;
}

// __assertfail is what assert() calls on the device when its condition is false; NVRTC declares it.
extern "C" __global__ void assert_fails(unsigned int* out) {
    if (out[0] != 12345u) __assertfail("out[0] == 12345u", __FILE__, __LINE__, __func__, sizeof(char));
}

extern "C" __global__ void traps(unsigned int* out) {
    out[0] = 1u;
    asm volatile("trap;");
}
"""

CASES: dict[str, str] = {
    "illegal_address": "a kernel stores to an address no allocation holds (16 bytes above zero)",
    "misaligned_address": "a kernel stores a 4-byte word at an odd address inside an allocation",
    "device_assert": "a kernel's device-side assert fails",
    "trap": "a kernel executes PTX trap",
    "block_too_large": "cuLaunchKernel with a block of 1025 threads, one over the limit",
    "out_of_memory": "cuMemAlloc of 1 GiB more than the card's memory",
    "missing_kernel": "cuModuleGetFunction for a kernel the module does not hold",
}
"""Each case, in the words its results' descriptions use."""
BUFFER_BYTES = 4096
STEP_TIMEOUT_S = 60.0


def _launch(drv: Any, fn: Any, block: int, *args: int) -> None:
    """cuLaunchKernel of one block with 64-bit arguments, then cuCtxSynchronize."""
    import numpy as np

    values = [np.array([a], dtype=np.uint64) for a in args]
    pointers = np.array([v.ctypes.data for v in values], dtype=np.uint64)
    check("cuLaunchKernel", drv.cuLaunchKernel(fn, 1, 1, 1, block, 1, 1, 0, 0, pointers.ctypes.data, 0))
    check("cuCtxSynchronize", drv.cuCtxSynchronize())


def _trigger(case: str, device: Device, module: Any, out: int) -> None:
    """Do the case's one wrong thing; a CudaError is what it returned ('control' does nothing)."""
    if case not in CASES:
        if case == "control":
            return
        raise ValueError(f"no case {case!r}")
    drv = device.driver
    if case == "illegal_address":
        _launch(drv, device.function(module, "store"), 1, 16, 0)
    elif case == "misaligned_address":
        _launch(drv, device.function(module, "store"), 1, out, 1)
    elif case == "device_assert":
        _launch(drv, device.function(module, "assert_fails"), 1, out)
    elif case == "trap":
        _launch(drv, device.function(module, "traps"), 1, out)
    elif case == "block_too_large":
        _launch(drv, device.function(module, "fine"), 1025, out)
    elif case == "out_of_memory":
        total = int(check("cuDeviceTotalMem", drv.cuDeviceTotalMem(device.dev)))
        extra = check("cuMemAlloc", drv.cuMemAlloc(total + (1 << 30)))
        check("cuMemFree", drv.cuMemFree(extra))
    else:  # missing_kernel
        device.function(module, "no_such_kernel")


def step_case(args: dict[str, Any]) -> dict[str, Any]:
    """In a fresh process: load, allocate, trigger the case, then ask whether the context works."""
    device = Device()
    drv = device.driver
    module, _ = device.load(Path(args["image"]).read_bytes())
    out = int(check("cuMemAlloc", drv.cuMemAlloc(BUFFER_BYTES)))
    check("cuMemsetD32", drv.cuMemsetD32(out, 0, BUFFER_BYTES // 4))
    first: dict[str, Any] = {"raised": False}
    try:
        _trigger(args["case"], device, module, out)
    except CudaError as exc:
        first = {"raised": True, **exc.as_result()}
    try:
        _launch(drv, device.function(module, "fine"), 32, out)
        after = "works"
    except CudaError as exc:
        after = exc.name
    return {"first": first, "after": after}


def _runtime_words(code: int) -> tuple[str, str]:
    """The CUDA runtime's name and message for an error number (cudaGetErrorName/String)."""
    from cuda.bindings import runtime

    err = runtime.cudaError_t(code)
    name = check("cudaGetErrorName", runtime.cudaGetErrorName(err))
    text = check("cudaGetErrorString", runtime.cudaGetErrorString(err))
    return name.decode(), text.decode()


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    cc = device.describe()["compute_capability"].replace(".", "")
    image = workdir / "kernel_errors.cubin"
    image.write_bytes(compile_source(SOURCE, "kernel_errors.cu", f"sm_{cc}").image)
    raw: dict[str, Any] = {"cases": {}}
    for case in ("control", *CASES):
        try:
            found = spawn("experiments.kernel_errors", "case", {"image": str(image), "case": case}, {}, STEP_TIMEOUT_S)
        except StepFailed as exc:
            found = {"ok": False, "step_failed": str(exc)[:500]}
        entry = {k: found[k] for k in ("ok", "first", "after", "step_failed", "error_name") if k in found}
        first = entry.get("first", {})
        if first.get("raised"):
            first["runtime_name"], first["runtime_message"] = _runtime_words(first["error_code"])
        raw["cases"][case] = entry
    return summarise(raw)


def summarise(raw: dict[str, Any]) -> Outcome:
    """Per case: the error, the call, both libraries' words, and whether the context works after."""
    outcome = Outcome(repeats=1)
    cases = raw["cases"]
    control = cases["control"]
    if not outcome.gate(
        "the control (a kernel that does nothing wrong, in a fresh process) runs",
        bool(control.get("ok")) and control.get("first", {}).get("raised") is False and control.get("after") == "works",
        control.get("step_failed") or control.get("error_name", "") or str(control.get("after", "")),
    ):
        return outcome
    silent = []
    for case, what in CASES.items():
        entry = cases[case]
        first = entry.get("first", {})
        if not (entry.get("ok") and first.get("raised")):
            silent.append(f"{case}: {entry.get('step_failed') or entry.get('error_name') or 'no error returned'}")
            continue
        outcome.add(
            Result(f"{case}_error", first["error_name"], "", f"{what}: the driver's error"),
            Result(f"{case}_code", first["error_code"], "", f"{what}: the error's number"),
            Result(f"{case}_message", first["error_message"], "", f"{what}: the driver's message (cuGetErrorString)"),
            Result(f"{case}_runtime_error", first["runtime_name"], "", f"{what}: the runtime's name for that number"),
            Result(f"{case}_runtime_message", first["runtime_message"], "", f"{what}: the runtime's message"),
            Result(f"{case}_returned_by", first["call"], "", f"{what}: the call that returned the error"),
            Result(
                f"{case}_context_after",
                entry["after"],
                "",
                f"{what}: then a kernel that does nothing wrong: 'works', or the error it returned",
            ),
        )
    outcome.gate("every case returned a CUDA error", not silent, "; ".join(silent))
    return outcome
