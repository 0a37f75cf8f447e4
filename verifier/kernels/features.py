"""The smallest kernel that uses each feature the instruction-availability table asks about.

Each kernel is inline PTX in CUDA C++ (NVRTC takes it without the toolkit's headers) and does no
more than the feature needs to be assembled: operands come from the kernel's parameters or
thread indices, results go to memory, so ptxas keeps the instruction. Whether NVRTC (and the
ptxas inside it) compiles one for a target is the cell (verifier/availability.py); nothing here
is run. A feature is named by the PTX it is written in, so a reader can search the PTX ISA for
it; `term` is the glossary page that explains it.
"""

from __future__ import annotations

from verifier.kernels.feature import HEAD, Feature
from verifier.kernels.features_matrix import MATRIX

__all__ = ["FEATURES", "HEAD", "SASS_SHOWN", "Feature"]


WAIT = '"{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }" :: "r"(SMEM(&bar)) : "memory"'
"""Spin on the mbarrier's phase 0, as the PTX ISA's own examples do."""

_BULK = """
extern "C" __global__ void k(unsigned int* out, %(params)s) {
    __shared__ __align__(128) unsigned int s[64];
    __shared__ __align__(8) unsigned long long bar;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared.b64 [%%0], 1;" :: "r"(SMEM(&bar)) : "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%%0], 256;" :: "r"(SMEM(&bar)) : "memory");
        asm volatile("%(copy)s" :: %(operands)s : "memory");
        asm volatile(%(wait)s);
    }
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x %% 64];
}"""

FEATURES: tuple[Feature, ...] = (
    *MATRIX,
    Feature(
        "cp-async",
        "cp.async.ca.shared.global",
        "asynchronous copy of 4 bytes from global to shared memory, per thread",
        "asynchronous-copy",
        r"""
extern "C" __global__ void k(unsigned int* out, const unsigned int* in) {
    __shared__ unsigned int s[128];
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;"
                 :: "r"(SMEM(&s[threadIdx.x % 128])), "l"(in + threadIdx.x) : "memory");
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x % 128];
}""",
    ),
    Feature(
        "mbarrier",
        "mbarrier.init.shared.b64, mbarrier.arrive.shared.b64",
        "a barrier object in shared memory that threads arrive on",
        "asynchronous-copy",
        r"""
extern "C" __global__ void k(unsigned long long* out) {
    __shared__ unsigned long long bar;
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared.b64 [%0], %1;"
                                       :: "r"(SMEM(&bar)), "r"(blockDim.x) : "memory");
    __syncthreads();
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(SMEM(&bar)) : "memory");
    out[threadIdx.x] = state;
}""",
    ),
    Feature(
        "bulk-copy",
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
        "one thread copies 256 contiguous bytes from global to shared memory, completion on an mbarrier",
        "tensor-memory-accelerator",
        _BULK
        % {
            "params": "const unsigned int* in",
            "copy": "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 256, [%2];",
            "operands": '"r"(SMEM(s)), "l"(in), "r"(SMEM(&bar))',
            "wait": WAIT,
        },
    ),
    Feature(
        "tensor-copy",
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
        "one thread copies a 64 × 1 tile described by a 2-D tensor map (TMA) from global to shared memory",
        "tensor-memory-accelerator",
        "struct __align__(64) TensorMap { unsigned long long opaque[16]; };\n"
        + _BULK
        % {
            "params": "const __grid_constant__ TensorMap map",
            "copy": "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];",
            "operands": '"r"(SMEM(s)), "l"(&map), "r"(0), "r"(0), "r"(SMEM(&bar))',
            "wait": WAIT,
        },
    ),
    Feature(
        "cluster-dsmem",
        "barrier.cluster, mapa.shared::cluster, ld.shared::cluster",
        "a block of a two-block cluster reads the other block's shared memory (distributed shared memory)",
        "distributed-shared-memory",
        r"""
extern "C" __global__ void __cluster_dims__(2, 1, 1) k(unsigned int* out) {
    __shared__ unsigned int s;
    unsigned int rank, other, value;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (threadIdx.x == 0) s = rank;
    asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(other) : "r"(SMEM(&s)), "r"(rank ^ 1));
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(value) : "r"(other) : "memory");
    asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
    out[blockIdx.x * blockDim.x + threadIdx.x] = value;
}""",
    ),
    Feature(
        "setmaxnreg",
        "setmaxnreg.inc.sync.aligned.u32",
        "a warpgroup raises the registers each of its threads may use",
        "register-file",
        r"""
extern "C" __global__ void k(unsigned int* out) {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;" ::: "memory");
    out[threadIdx.x] = threadIdx.x;
}""",
    ),
    Feature(
        "elect-sync",
        "elect.sync",
        "a warp elects one leader lane",
        "warp",
        r"""
extern "C" __global__ void k(unsigned int* out) {
    unsigned int leader;
    asm volatile("{ .reg .pred p; elect.sync %0|p, 0xffffffff; }" : "=r"(leader));
    out[threadIdx.x] = leader;
}""",
    ),
    Feature(
        "redux-sync",
        "redux.sync.add.u32",
        "a warp adds one integer from each lane in one instruction",
        "warp",
        r"""
extern "C" __global__ void k(unsigned int* out) {
    unsigned int sum;
    asm volatile("redux.sync.add.u32 %0, %1, 0xffffffff;" : "=r"(sum) : "r"(threadIdx.x));
    out[threadIdx.x] = sum;
}""",
    ),
    Feature(
        "griddepcontrol",
        "griddepcontrol.wait, griddepcontrol.launch_dependents",
        "programmatic dependent launch: a kernel waits for the one before it and lets the next one start",
        "kernel-launch-overhead",
        r"""
extern "C" __global__ void k(unsigned int* out) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    out[threadIdx.x] = threadIdx.x;
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}""",
    ),
)

SASS_SHOWN: dict[str, str] = {"mma-f16": "MMA", "mma-e4m3": "MMA", "mma-f64": "MMA"}
"""The features whose SASS the table keeps for every target that compiled them, and the part of
an opcode that marks the instructions kept (HMMA, QMMA, DMMA all hold MMA): the same PTX is a
different machine instruction, or several, from one generation to the next."""
