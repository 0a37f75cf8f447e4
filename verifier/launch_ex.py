"""Launches and descriptors that gpu.launch does not make: cuLaunchKernelEx with a thread block
cluster, a kernel argument passed by value as a struct (a CUtensorMap), the occupancy of
clusters, and a kernel's register count.

- launch(): cuLaunchKernelEx on the Gpu's stream; with `cluster`, the cluster-dimension launch
  attribute (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) groups the grid's blocks into clusters of
  that many. Arguments are numpy scalars (a device pointer as np.uint64) or `bytes`, copied
  into a 128-byte aligned host buffer: the driver copies each argument's bytes from the address
  it is given into the kernel's parameter space, at the offset and size the kernel declares.
- max_active_clusters(): cuOccupancyMaxActiveClusters for the same configuration (how many
  clusters of that shape can be resident at once on the whole GPU).
- tensor_map_2d(): cuTensorMapEncodeTiled for a row-major 2-D array, returned as its 128 bytes,
  to pass to a kernel as a `const __grid_constant__` parameter (the Tensor Memory Accelerator
  reads it from the kernel's parameter space). cuda-python's binding takes globalStrides without
  the innermost dimension's (rank - 1 entries, in bytes) and returns the descriptor.
- registers(), allow_shared(): cuFuncGetAttribute NUM_REGS, and cuFuncSetAttribute raising a
  kernel's dynamic shared memory limit above the default 48 KiB.

Experiments that use this module name it in USES (verifier/registry.py hashes it with them).
cuda-python and numpy are imported by the caller's first use, never at import.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verifier.cuda import CudaError, check

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

TENSOR_MAP_BYTES = 128
"""sizeof(CUtensorMap): 16 opaque 64-bit words."""
ALIGN = 128
"""Host copies of by-value struct arguments start at this alignment (CUtensorMap asks 64; 128 since CUDA 13)."""


def _config(gpu: Any, grid: int, block: int, shared: int, cluster: int | None) -> Any:
    drv = gpu.drv
    config = drv.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = grid, 1, 1
    config.blockDimX, config.blockDimY, config.blockDimZ = block, 1, 1
    config.sharedMemBytes = shared
    config.hStream = gpu.stream
    if cluster is None:
        config.numAttrs = 0
        return config
    attr = drv.CUlaunchAttribute()
    attr.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster, 1, 1
    config.attrs = [attr]
    config.numAttrs = 1
    return config


def aligned_bytes(data: bytes, align: int = ALIGN) -> Any:
    """A numpy uint8 view holding data, its first byte at an address that is a multiple of align."""
    import numpy as np

    raw = np.zeros(len(data) + align, dtype=np.uint8)
    start = (-raw.ctypes.data) % align
    view = raw[start : start + len(data)]
    view[:] = np.frombuffer(data, dtype=np.uint8)
    return view


def parameters(args: Sequence[Any]) -> tuple[Any, list[Any]]:
    """The kernelParams array (a numpy array of addresses) and the host buffers it points into,
    which the caller keeps alive until the launch call returns."""
    import numpy as np

    held = [aligned_bytes(a) if isinstance(a, bytes) else np.array([a]) for a in args]
    return np.array([h.ctypes.data for h in held], dtype=np.uint64), held


def launch(
    gpu: Any, fn: Any, grid: int, block: int, args: Sequence[Any], shared: int = 0, cluster: int | None = None
) -> None:
    """cuLaunchKernelEx on gpu's stream: grid blocks (in clusters of `cluster` along x, if given)."""
    config = _config(gpu, grid, block, shared, cluster)
    pointers, held = parameters(args)
    check("cuLaunchKernelEx", gpu.drv.cuLaunchKernelEx(config, fn, pointers.ctypes.data, 0))
    del held


def max_active_clusters(gpu: Any, fn: Any, grid: int, block: int, shared: int, cluster: int) -> int:
    """cuOccupancyMaxActiveClusters: clusters of this shape that can be resident at once."""
    config = _config(gpu, grid, block, shared, cluster)
    return int(check("cuOccupancyMaxActiveClusters", gpu.drv.cuOccupancyMaxActiveClusters(fn, config)))


def registers(gpu: Any, fn: Any) -> int:
    """Registers per thread the compiled kernel uses (CU_FUNC_ATTRIBUTE_NUM_REGS)."""
    attr = gpu.drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS
    return int(check("cuFuncGetAttribute", gpu.drv.cuFuncGetAttribute(attr, fn)))


def allow_shared(gpu: Any, fn: Any, nbytes: int) -> None:
    """Let fn be launched with nbytes of dynamic shared memory (above 48 KiB needs the opt-in)."""
    attr = gpu.drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    check("cuFuncSetAttribute", gpu.drv.cuFuncSetAttribute(fn, attr, nbytes))


def tensor_map_2d(
    gpu: Any, address: int, rows: int, cols: int, row_bytes: int, box_rows: int, box_cols: int
) -> tuple[bytes, str]:
    """The 128-byte CUtensorMap of a row-major 2-D array of 32-bit unsigned words (cols words per
    row, dimension 0, the innermost; rows rows, dimension 1; row_bytes between rows), each copy
    moving a box of box_cols × box_rows words into shared memory densely (no swizzle, no
    interleave, out-of-bounds words as zeros); and which way it was made.

    First through cuda-python's cuTensorMapEncodeTiled, which encodes into its own CUtensorMap
    object: in cuda-bindings 13.3 that object's storage is not 64-byte aligned, which the driver
    API asks of tensorMap. Where the driver refuses it (CUDA_ERROR_INVALID_VALUE), the same
    driver function, its address from cuGetProcAddress, is called through ctypes on an aligned
    buffer with the same arguments."""
    import ctypes

    drv = gpu.drv
    u64, u32 = drv.cuuint64_t, drv.cuuint32_t
    enums = (
        drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        drv.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
        drv.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        drv.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    )
    dtype = drv.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT32
    dims, strides, box = [cols, rows], [row_bytes], [box_cols, box_rows]
    try:
        tensor_map = check(
            "cuTensorMapEncodeTiled",
            drv.cuTensorMapEncodeTiled(
                dtype, 2, address, [u64(d) for d in dims], [u64(s) for s in strides], [u32(b) for b in box],
                [u32(1), u32(1)], *enums,
            ),
        )  # fmt: skip
        return ctypes.string_at(int(tensor_map.getPtr()), TENSOR_MAP_BYTES), "cuda-python cuTensorMapEncodeTiled"
    except CudaError as exc:
        if exc.name != "CUDA_ERROR_INVALID_VALUE":
            raise
    flags = drv.CUdriverProcAddress_flags.CU_GET_PROC_ADDRESS_DEFAULT
    pfn, _ = check("cuGetProcAddress", drv.cuGetProcAddress(b"cuTensorMapEncodeTiled", 12000, flags))
    if not int(pfn):
        raise CudaError("cuGetProcAddress", "CUDA_ERROR_NOT_FOUND", 500, "the driver has no cuTensorMapEncodeTiled")
    c_u64, c_u32, ptr = ctypes.c_uint64, ctypes.c_uint32, ctypes.POINTER
    encode = ctypes.CFUNCTYPE(
        ctypes.c_int, ctypes.c_void_p, ctypes.c_int, c_u32, ctypes.c_void_p,
        ptr(c_u64), ptr(c_u64), ptr(c_u32), ptr(c_u32), ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
    )(int(pfn))  # fmt: skip
    out = aligned_bytes(bytes(TENSOR_MAP_BYTES))
    code = encode(
        out.ctypes.data, int(dtype), 2, address, (c_u64 * 2)(*dims), (c_u64 * 1)(*strides), (c_u32 * 2)(*box),
        (c_u32 * 2)(1, 1), *(int(e) for e in enums),
    )  # fmt: skip
    check("cuTensorMapEncodeTiled", (drv.CUresult(code),))
    return out.tobytes(), "cuTensorMapEncodeTiled through cuGetProcAddress, on a 128-byte aligned buffer"
