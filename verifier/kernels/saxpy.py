"""The kernel the experiments load: saxpy, checked against numpy on fresh random data.

Experiments differ in how the kernel's image is made and loaded, not in the kernel, so a
difference in load time or cache behaviour is the loader's, not the code's.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from verifier.cuda import CudaError, Device, check, compile_source

KERNEL = "saxpy"
BLOCK_SIZE = 256
N = 1 << 20  # enough to fill the GPU with the grid-stride loop; host-side checking stays cheap
TOLERANCE = 1e-5

SOURCE = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        y[i] = a * x[i] + y[i];
    }
}
"""


def run(device: Device, module: Any) -> dict[str, Any]:
    """Launch saxpy on a grid that fills the GPU and compare with numpy; report occupancy."""
    import numpy as np

    fn = device.function(module, KERNEL)
    drv = device.driver
    blocks_per_sm = int(
        check(
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, BLOCK_SIZE, 0),
        )
    )
    sm_count = device.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
    grid = blocks_per_sm * sm_count
    rng = np.random.default_rng()
    x = rng.standard_normal(N, dtype=np.float32)
    y = rng.standard_normal(N, dtype=np.float32)
    a = np.float32(rng.uniform(-2, 2))
    nbytes = x.nbytes
    dx = check("cuMemAlloc", drv.cuMemAlloc(nbytes))
    dy = check("cuMemAlloc", drv.cuMemAlloc(nbytes))
    try:
        check("cuMemcpyHtoD", drv.cuMemcpyHtoD(dx, x.ctypes.data, nbytes))
        check("cuMemcpyHtoD", drv.cuMemcpyHtoD(dy, y.ctypes.data, nbytes))
        params: list[np.ndarray] = [
            np.array([a], dtype=np.float32),
            np.array([int(dx)], dtype=np.uint64),
            np.array([int(dy)], dtype=np.uint64),
            np.array([N], dtype=np.int32),
        ]
        pointers = np.array([p.ctypes.data for p in params], dtype=np.uint64)
        check(
            "cuLaunchKernel",
            drv.cuLaunchKernel(fn, grid, 1, 1, BLOCK_SIZE, 1, 1, 0, 0, pointers.ctypes.data, 0),
        )
        check("cuCtxSynchronize", drv.cuCtxSynchronize())
        out = np.full(N, np.nan, dtype=np.float32)
        check("cuMemcpyDtoH", drv.cuMemcpyDtoH(out.ctypes.data, dy, nbytes))
    finally:
        check("cuMemFree", drv.cuMemFree(dx))
        check("cuMemFree", drv.cuMemFree(dy))
    expected = a * x + y
    error = float(np.max(np.abs(out - expected)) / max(1e-30, float(np.max(np.abs(expected)))))
    finite = bool(np.isfinite(out).all())
    return {
        "blocks_per_sm": blocks_per_sm,
        "sm_count": sm_count,
        "grid": grid,
        "max_rel_error": error,
        "finite": finite,
        "correct": finite and error < TOLERANCE,
    }


def load(device: Device, args: dict[str, Any]) -> tuple[Any, str, float, float]:
    """Load the kernel the way args say; returns (module, JIT log, load seconds, compile seconds).

    how: 'data' reads args['image'] and calls cuModuleLoadDataEx; 'file' calls cuModuleLoad
    on the path; 'nvrtc' compiles SOURCE for args['arch'] with NVRTC in this process first.
    """
    how = args.get("how", "data")
    compile_s = 0.0
    if how == "file":
        t0 = time.perf_counter()
        module = device.load_file(Path(args["image"]))
        return module, "", time.perf_counter() - t0, compile_s
    if how == "nvrtc":
        t0 = time.perf_counter()
        image = compile_source(SOURCE, "saxpy.cu", args["arch"]).image
        compile_s = time.perf_counter() - t0
    else:
        image = Path(args["image"]).read_bytes()
    t0 = time.perf_counter()
    module, log = device.load(image)
    return module, log, time.perf_counter() - t0, compile_s


def step_load_and_run(args: dict[str, Any]) -> dict[str, Any]:
    """In a fresh process: cuInit, load the image (timed), run saxpy, check, unload."""
    t0 = time.perf_counter()
    device = Device()
    init_s = time.perf_counter() - t0
    module, log, load_s, compile_s = load(device, args)
    t0 = time.perf_counter()
    result = run(device, module)
    check("cuModuleUnload", device.driver.cuModuleUnload(module))
    run_s = time.perf_counter() - t0
    return {**result, "init_s": init_s, "load_s": load_s, "compile_s": compile_s, "run_s": run_s, "jit_log": log}


def step_load_each(args: dict[str, Any]) -> dict[str, Any]:
    """In a fresh process: load and run each of args['images'] (name -> path) in turn; a
    failed load is recorded with its exact error and does not stop the rest."""
    t0 = time.perf_counter()
    device = Device()
    out: dict[str, Any] = {"init_s": time.perf_counter() - t0, "load_s": 0.0, "run_s": 0.0}
    for name, path in args["images"].items():
        t0 = time.perf_counter()
        try:
            module, log = device.load(Path(path).read_bytes())
        except CudaError as exc:
            out[name] = exc.as_result()
            continue
        finally:
            out["load_s"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        out[name] = {"ok": True, "jit_log": log, **run(device, module)}
        check("cuModuleUnload", device.driver.cuModuleUnload(module))
        out["run_s"] += time.perf_counter() - t0
    return out


def step_init_only(args: dict[str, Any]) -> dict[str, Any]:
    """In a fresh process: cuInit and the primary context, nothing loaded (a control)."""
    t0 = time.perf_counter()
    Device()
    return {"init_s": time.perf_counter() - t0}


def step_compile_only(args: dict[str, Any]) -> dict[str, Any]:
    """In a fresh process: NVRTC only, no cuInit (a control: does NVRTC touch the JIT cache?)."""
    t0 = time.perf_counter()
    compiled = compile_source(SOURCE, "saxpy.cu", args["arch"])
    return {"compile_s": time.perf_counter() - t0, "kind": compiled.kind}
