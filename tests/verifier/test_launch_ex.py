"""verifier/launch_ex.py on the CPU: by-value struct arguments are copied aligned, and, against a
stand-in driver library (a small C file built here with the system's cc, loaded by cuda-python
in a fresh interpreter in place of libcuda.so.1), what cuLaunchKernelEx, cuOccupancyMaxActiveClusters
and cuTensorMapEncodeTiled receive is what the experiments mean to send: the grid, the block, the
shared memory, the cluster-dimension attribute, the argument bytes, the tensor map's dimensions,
strides and box. The stand-in refuses a tensor map address that is not 64-byte aligned, as the
driver API's documentation asks, so the aligned second path is exercised too."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from verifier.launch_ex import ALIGN, aligned_bytes, parameters

ROOT = Path(__file__).resolve().parent.parent.parent

STUB = r"""
#include <stdint.h>
#include <string.h>
#include <dlfcn.h>
typedef int CUresult;
static void* self;
CUresult cuGetProcAddress_v2(const char* name, void** pfn, int version, uint64_t flags, int* status) {
    if (!self) self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    *pfn = self ? dlsym(self, name) : 0;
    if (status) *status = *pfn ? 0 : 1;
    return 0;
}
CUresult cuGetProcAddress(const char* n, void** p, int v, uint64_t f, int* s) {
    return cuGetProcAddress_v2(n, p, v, f, s);
}
CUresult cuDriverGetVersion(int* v) { *v = 13000; return 0; }
CUresult cuInit(unsigned f) { return 0; }
CUresult cuGetErrorName(CUresult e, const char** s) { *s = e == 1 ? "CUDA_ERROR_INVALID_VALUE" : "OTHER"; return 0; }
CUresult cuGetErrorString(CUresult e, const char** s) { *s = "stand-in"; return 0; }
typedef struct { unsigned gx, gy, gz, bx, by, bz, shared; void* stream; void* attrs; unsigned n; } Config;
typedef struct { int id; char pad[4]; union { char raw[64]; struct { unsigned x, y, z; } dim; } value; } Attr;
uint64_t seen[16];
unsigned char arg0[128];
static void config(const Config* c) {
    seen[0] = c->gx; seen[1] = c->gy; seen[2] = c->bx; seen[3] = c->by; seen[4] = c->shared; seen[5] = c->n;
    seen[6] = (uint64_t)c->stream;
    if (c->n) {
        const Attr* a = (const Attr*)c->attrs;
        seen[7] = a->id; seen[8] = a->value.dim.x; seen[9] = a->value.dim.y;
    }
}
CUresult cuLaunchKernelEx(const Config* c, void* f, void** params, void** extra) {
    config(c); memcpy(arg0, params[0], 128); seen[10] = *(uint32_t*)params[1]; seen[11] = *(uint64_t*)params[2];
    seen[12] = (uint64_t)f; return 0;
}
CUresult cuOccupancyMaxActiveClusters(int* count, void* f, const Config* c) { config(c); *count = 33; return 0; }
CUresult cuTensorMapEncodeTiled(uint64_t* map, int dtype, unsigned rank, void* address, const uint64_t* dims,
        const uint64_t* strides, const unsigned* box, const unsigned* steps, int il, int sw, int l2, int oob) {
    if ((uint64_t)map % 64) return 1;
    memset(map, 0, 128);
    map[0] = (uint64_t)address; map[1] = dims[0]; map[2] = dims[1]; map[3] = strides[0]; map[4] = box[0];
    map[5] = box[1]; map[6] = dtype; map[7] = rank; map[8] = steps[0] + 10 * steps[1]; map[9] = il + sw + l2 + oob;
    return 0;
}
"""

CHILD = r"""
import ctypes, json
import numpy as np
from cuda.bindings import driver
from verifier import launch_ex

class Gpu:
    drv = driver
    stream = driver.CUstream(0x5151)

lib = ctypes.CDLL("libcuda.so.1")
seen = (ctypes.c_uint64 * 16).in_dll(lib, "seen")
out = {}
driver.cuInit(0)
tensor_map, out["made_by"] = launch_ex.tensor_map_2d(Gpu, 0x7F0000001000, 65536, 4096, 16384, 32, 128)
out["map"] = [int(w) for w in np.frombuffer(tensor_map, dtype=np.uint64)[:10]]
launch_ex.launch(Gpu, 77, 264, 256, [tensor_map, np.int32(4096), np.uint64(0xDEADBEEF00)], 65600)
out["plain"] = list(seen)[:13]
out["arg0"] = bytes((ctypes.c_ubyte * 128).in_dll(lib, "arg0")) == tensor_map
launch_ex.launch(Gpu, 78, 132, 1024, [tensor_map, np.int32(7), np.uint64(9)], 122880, cluster=4)
out["cluster"] = list(seen)[:13]
out["active"] = launch_ex.max_active_clusters(Gpu, 78, 8, 32, 122880, 8)
out["occupancy"] = list(seen)[:10]
print(json.dumps(out))
"""


def test_struct_arguments_are_copied_to_aligned_host_memory() -> None:
    data = bytes(range(128))
    view = aligned_bytes(data)
    assert view.ctypes.data % ALIGN == 0 and view.tobytes() == data
    pointers, held = parameters([data, np.int32(-3), np.uint64(2**40 + 1)])
    assert len(pointers) == 3 and int(pointers[0]) % ALIGN == 0
    assert np.frombuffer(held[1].tobytes(), dtype=np.int32)[0] == -3 and held[2][0] == 2**40 + 1
    assert [int(p) for p in pointers] == [h.ctypes.data for h in held]


def test_the_driver_receives_the_launch_the_cluster_and_the_tensor_map_as_meant(tmp_path: Path) -> None:
    pytest.importorskip("cuda.bindings.driver")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the stand-in driver")
    (tmp_path / "stub.c").write_text(STUB)
    build = subprocess.run(
        [cc, "-shared", "-fPIC", "-o", str(tmp_path / "libcuda.so.1"), str(tmp_path / "stub.c"), "-ldl"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    env = {**os.environ, "LD_LIBRARY_PATH": str(tmp_path), "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, check=False)
    assert child.returncode == 0, child.stderr
    out = json.loads(child.stdout)
    # The stand-in refused cuda-python's own (unaligned) CUtensorMap, so the aligned path made it.
    assert "128-byte aligned" in out["made_by"]
    address, dim0, dim1, stride, box0, box1, dtype, rank, steps, modes = out["map"]
    assert (address, dim0, dim1, stride) == (0x7F0000001000, 4096, 65536, 16384)
    assert (box0, box1, rank, steps, modes) == (128, 32, 2, 11, 0)
    assert dtype == 2  # CU_TENSOR_MAP_DATA_TYPE_UINT32 in cuda.h
    grid, grid_y, block, block_y, shared, attrs, stream = out["plain"][:7]
    assert (grid, grid_y, block, block_y, shared, attrs, stream) == (264, 1, 256, 1, 65600, 0, 0x5151)
    assert out["arg0"] and out["plain"][10:13] == [4096, 0xDEADBEEF00, 77]
    grid, _, block, _, shared, attrs, _, attr_id, x, y = out["cluster"][:10]
    assert (grid, block, shared, attrs, attr_id, x, y) == (132, 1024, 122880, 1, 4, 4, 1)  # 4: CLUSTER_DIMENSION
    assert out["cluster"][10:13] == [7, 9, 78]
    assert out["active"] == 33 and out["occupancy"][2] == 32 and out["occupancy"][8] == 8
