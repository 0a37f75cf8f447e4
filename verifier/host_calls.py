"""The host cost of CUDA driver API calls against the runtime API's equivalents, from Python,
and the versions NVML reports (experiments/host_costs.py names this module in USES).

Each kind of call is timed with perf_counter in BATCHES batches of CALLS[kind] calls, the
driver's and the runtime's batches alternating (which goes first alternates too); one batch's
mean per call is one sample. What each call returned is kept and its error codes checked after
the batch, the same way for both APIs, so checking costs neither side time. After every batch
one cuCtxSynchronize, outside the timing, drains what a batch queued (the launches).

cuda.bindings.runtime carries the CUDA runtime linked statically and works on the primary
context the verifier made current; it binds no cudaLaunchKernel (an expected limitation of
cuda-python, whose kernels launch through the driver API), so a launch has a driver side only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from verifier.cuda import CudaError, Device, check

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

BATCHES = 15
CALLS = {"version": 2000, "sync": 1000, "alloc": 100, "launch": 500}
"""Calls per batch: a batch lasts about a millisecond or more, so perf_counter's resolution is
nothing beside it, and the launches (a few µs each to submit) never fill the driver's queue."""
ALLOC_BYTES = 1 << 20


def runtime_check(runtime: Any, call: str, result: Any) -> Any:
    """verifier.cuda.check for cuda.bindings.runtime, whose cudaError_t that check does not know."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != runtime.cudaError_t.cudaSuccess:
        name, text = runtime.cudaGetErrorName(err)[1], runtime.cudaGetErrorString(err)[1]
        raise CudaError(call, name.decode(), int(err), text.decode())
    return rest[0] if len(rest) == 1 else None


def batch(call: Callable[[], Any], calls: int) -> tuple[float, list[Any]]:
    """Mean µs per call over `calls` calls, and what each returned (checked afterwards)."""
    returned: list[Any] = [None] * calls
    began = time.perf_counter()
    for i in range(calls):
        returned[i] = call()
    return (time.perf_counter() - began) * 1e6 / calls, returned


def codes(returned: Any) -> list[int]:
    """The error codes in what a call returned: a tuple's first item, or each of a list's items."""
    if isinstance(returned, list):
        return [code for item in returned for code in codes(item)]
    return [int(returned[0] if isinstance(returned, tuple) else returned)]


def driver_calls(device: Device, empty: Any) -> dict[str, Callable[[], Any]]:
    drv = device.driver

    def alloc_free() -> list[Any]:
        err, ptr = drv.cuMemAlloc(ALLOC_BYTES)
        return [err, drv.cuMemFree(ptr)]

    return {
        "version": drv.cuDriverGetVersion,
        "sync": drv.cuCtxSynchronize,
        "alloc": alloc_free,
        "launch": lambda: drv.cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0),
    }


def runtime_calls(device: Device, raw: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """The runtime's calls, once it has started on this device; none where it cannot be imported
    or started (raw['runtime'] says why) and its version in raw['versions']['runtime']."""
    raw["runtime"] = {"importable": False, "error": "none", "launch_bound": False}
    try:
        from cuda.bindings import runtime
    except ImportError as exc:
        raw["runtime"]["error"] = f"cuda.bindings.runtime is not importable: {exc}"
        return {}
    raw["runtime"] |= {"importable": True, "launch_bound": hasattr(runtime, "cudaLaunchKernel")}
    try:
        runtime_check(runtime, "cudaSetDevice", runtime.cudaSetDevice(int(device.dev)))
        runtime_check(runtime, "cudaFree", runtime.cudaFree(0))  # the runtime starts here
        version = runtime_check(runtime, "cudaRuntimeGetVersion", runtime.cudaRuntimeGetVersion())
    except CudaError as exc:
        raw["runtime"]["error"] = f"{exc.call}: {exc.name} ({exc.code}): {exc.message}"
        return {}
    raw["versions"]["runtime"] = int(version)

    def alloc_free() -> list[Any]:
        err, ptr = runtime.cudaMalloc(ALLOC_BYTES)
        return [err, runtime.cudaFree(ptr)]

    return {"version": runtime.cudaRuntimeGetVersion, "sync": runtime.cudaDeviceSynchronize, "alloc": alloc_free}


def measure(device: Device, empty: Any, raw: dict[str, Any]) -> None:
    """raw['driver_us'] and raw['runtime_us']: per kind, the samples (µs per call); raw['failures']:
    the batches in which a call returned an error."""
    drv = device.driver
    sides = {"driver": driver_calls(device, empty), "runtime": runtime_calls(device, raw)}
    raw["driver_us"], raw["runtime_us"], raw["failures"] = {}, {}, []
    for kind, calls in CALLS.items():
        order = [side for side in sides if kind in sides[side]]
        for side in order:
            batch(sides[side][kind], calls)  # warm-up, not kept
        check("cuCtxSynchronize", drv.cuCtxSynchronize())
        for b in range(BATCHES):
            for side in order if b % 2 == 0 else order[::-1]:
                us, returned = batch(sides[side][kind], calls)
                check("cuCtxSynchronize", drv.cuCtxSynchronize())  # after the batch, outside its timing
                raw[f"{side}_us"].setdefault(kind, []).append(us)
                if any(code != 0 for r in returned for code in codes(r)):
                    raw["failures"].append(f"{side} {kind} batch {b}")


def version_text(number: int) -> str:
    """A CUDA version number (13000, 13030) as major.minor."""
    return f"{number // 1000}.{(number % 1000) // 10}"


def nvml_versions(device: Device) -> dict[str, Any]:
    """NVML's driver version, CUDA driver version and own version, or why they could not be read."""
    from verifier.provenance import nvml_handle

    def text(value: str | bytes) -> str:
        return value.decode() if isinstance(value, bytes) else str(value)

    try:
        pynvml, _ = nvml_handle(device)
        return {
            "driver_version": text(pynvml.nvmlSystemGetDriverVersion()),
            "cuda_driver_version": int(pynvml.nvmlSystemGetCudaDriverVersion()),
            "nvml_version": text(pynvml.nvmlSystemGetNVMLVersion()),
        }
    except ImportError:
        return {"error": "absent (nvidia-ml-py is not installed)"}
    except Exception as exc:  # NVML raises its own error types; a reading is never worth a crash
        return {"error": f"unreadable ({type(exc).__name__}: {str(exc)[:100]})"}
