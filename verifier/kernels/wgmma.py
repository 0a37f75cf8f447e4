"""wgmma on Hopper (sm_90a): the warpgroup MMA, A and B read from shared memory by descriptor.

wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 is issued by a warpgroup (4 consecutive
warps, 128 threads): D (64×256, FP32, in registers: 128 per thread) += A (64×16, FP16) ·
B (16×256, FP16), A and B both in shared memory, both K-major (the default, no transpose).

Shared-memory layout, the no-swizzle ("interleave") one: an operand of R rows by 16 FP16 along
K is cut into 8×8 core matrices, each 8 rows of 16 bytes stored contiguously (128 bytes). The
core matrix at (r // 8, k // 8) starts at (r // 8)·SBO + (k // 8)·LBO bytes: LBO ('leading
dimension byte offset') is the step between core matrices adjacent in K, SBO ('stride dimension
byte offset') the step between those adjacent in M (for A) or N (for B). Here LBO = 128 and
SBO = 256, so each operand is one packed block (pack() writes it on the host; the kernels copy
it to shared memory as it is). The 64-bit descriptor holds start address >> 4 (bits 0-13),
LBO >> 4 (16-29), SBO >> 4 (32-45) and the swizzle mode (62-63, 0 for none): PTX ISA,
'Matrix Descriptor Format'; CUTLASS's make_gmma_desc encodes the same for its INTERLEAVE layout.

Accumulator fragment (PTX ISA, 'wgmma .m64nNk16 D'): thread t of the warpgroup holds, for each
8-column slice i, rows 16·(t // 32) + (t % 32) // 4 (+8) and columns 8·i + 2·(t % 4) (+1), in
registers 4i .. 4i+3 (fragment()).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from verifier.gpu import PROBE_SOURCE
from verifier.kernels.mma_sync import error
from verifier.targets import Needs

M, N, K = 64, 256, 16
FLOP = 2 * M * N * K
"""Dense flops per wgmma (a multiply and an add per product)."""
NACC = M * N // 128
"""FP32 accumulator registers per thread (128 threads share the 64×256 tile)."""
LBO, SBO = 128, 256
"""Bytes between core matrices adjacent in K, and adjacent in M or N."""
WARPGROUPS = 2
"""Warpgroups per block in the timed loop (one block per SM): while one waits on its group,
the other's wgmmas keep the Tensor Cores busy."""
UNROLL = 16
"""wgmmas per committed group in the timed loop."""
ITERS = 1024
"""Groups per warpgroup per launch: 2 · 16 · 1024 wgmmas of 128 clocks at the peak rate per SM,
about 2.5 ms at 1.7 GHz."""
SWIZZLE_NONE = 0


def descriptor(address: int, lbo: int = LBO, sbo: int = SBO, swizzle: int = SWIZZLE_NONE) -> int:
    """The 64-bit shared-memory matrix descriptor wgmma takes (field layout in the docstring)."""
    return (
        ((address & 0x3FFFF) >> 4)
        | (((lbo >> 4) & 0x3FFF) << 16)
        | (((sbo >> 4) & 0x3FFF) << 32)
        | ((swizzle & 0x3) << 62)
    )


def offset(row: int, k: int) -> int:
    """Byte offset of element (row, k) of a K-major operand in the no-swizzle layout."""
    return (row // 8) * SBO + (k // 8) * LBO + (row % 8) * 16 + (k % 8) * 2


def pack(x: Any) -> Any:
    """An R×16 FP16 operand (A as M×K; B as its transpose, N×K) as the uint16 words shared
    memory holds, in the no-swizzle core-matrix layout."""
    import numpy as np

    rows, cols = x.shape
    assert cols == K and rows % 8 == 0, "a K-major operand of 16 columns, rows a multiple of 8"
    r, k = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    where = ((r // 8) * SBO + (k // 8) * LBO + (r % 8) * 16 + (k % 8) * 2) // 2
    out = np.zeros(rows * cols, dtype=np.uint16)
    out[where.ravel()] = np.ascontiguousarray(x, dtype=np.float16).view(np.uint16).ravel()
    return out


def fragment(thread: int) -> list[tuple[int, int]]:
    """(row, column) of D that each accumulator register of warpgroup thread `thread` holds."""
    warp, lane = divmod(thread % 128, 32)
    row, col = 16 * warp + lane // 4, 2 * (lane % 4)
    return [(row + 8 * (j // 2 % 2), 8 * (j // 4) + col + j % 2) for j in range(NACC)]


def _wgmma_asm() -> str:
    regs = ", ".join(f"%{i}" for i in range(NACC))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(NACC))
    return (
        "__device__ __forceinline__ void wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {\n"
        '    asm volatile("{\\n.reg .pred p;\\n"\n'
        f'                 "setp.ne.b32 p, %{NACC + 2}, 0;\\n"\n'
        f'                 "wgmma.mma_async.sync.aligned.m{M}n{N}k{K}.f32.f16.f16 "\n'
        f'                 "{{{regs}}}, %{NACC}, %{NACC + 1}, p, 1, 1, 0, 0;\\n}}\\n"\n'
        f"                 : {outs}\n"
        '                 : "l"(da), "l"(db), "r"(scale_d));\n'
        "}\n"
    )


NEEDS = Needs("wgmma, an instruction of the arch-specific sm_90a target", only=("sm_90a",))
"""Checked by make kernels against NVRTC (verifier/targets.py)."""


SOURCE = (
    PROBE_SOURCE
    + f"#define NACC {NACC}\n#define WARPGROUPS {WARPGROUPS}\n#define TILE_N {N}\n#define UNROLL {UNROLL}\n"
    f"#define A_WORDS {M * K * 2 // 16}\n#define B_WORDS {N * K * 2 // 16}\n"
    f"#define DESC_BITS {descriptor(0)}ull\n"
    + _wgmma_asm()
    + r"""
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads or writes across the asynchronous MMAs.
__device__ __forceinline__ void fence_operands(float* d) {
    #pragma unroll
    for (int i = 0; i < NACC; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
}
__device__ __forceinline__ unsigned long long desc(const void* smem) {
    return DESC_BITS | (((unsigned long long)__cvta_generic_to_shared(smem) & 0x3FFFFull) >> 4);
}
// A and B, packed on the host in the no-swizzle layout, copied to shared memory as they are;
// then the async proxy (wgmma's reads) is made to see what the generic proxy wrote.
__device__ __forceinline__ void fill(uint4* sa, uint4* sb, const uint4* a, const uint4* b) {
    for (int i = threadIdx.x; i < A_WORDS; i += blockDim.x) sa[i] = a[i];
    for (int i = threadIdx.x; i < B_WORDS; i += blockDim.x) sb[i] = b[i];
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
}

// One warpgroup: D = A·B + C, C and D 64×256 row-major FP32; one wgmma.
extern "C" __global__ void __launch_bounds__(128) wgmma_check(const uint4* a, const uint4* b, const float* c,
                                                               float* out) {
    __shared__ __align__(128) uint4 sa[A_WORDS];
    __shared__ __align__(128) uint4 sb[B_WORDS];
    fill(sa, sb, a, b);
    unsigned t = threadIdx.x, row = 16 * (t / 32) + (t % 32) / 4, col = 2 * (t % 4);
    float d[NACC];
    #pragma unroll
    for (int j = 0; j < NACC; ++j) d[j] = c[(row + 8 * ((j / 2) % 2)) * TILE_N + 8 * (j / 4) + col + j % 2];
    fence_operands(d);
    wgmma_fence();
    wgmma(d, desc(sa), desc(sb), 1);
    wgmma_commit();
    wgmma_wait<0>();
    fence_operands(d);
    #pragma unroll
    for (int j = 0; j < NACC; ++j) out[(row + 8 * ((j / 2) % 2)) * TILE_N + 8 * (j / 4) + col + j % 2] = d[j];
}

// Each warpgroup: D += A·B, UNROLL wgmmas per group, iters groups, at most two groups in
// flight; each thread writes the sum of its accumulators.
extern "C" __global__ void __launch_bounds__(128 * WARPGROUPS, 1) wgmma_loop(const uint4* a, const uint4* b,
                                                                             float* out, int iters,
                                                                             unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    __shared__ __align__(128) uint4 sa[A_WORDS];
    __shared__ __align__(128) uint4 sb[B_WORDS];
    fill(sa, sb, a, b);
    unsigned long long da = desc(sa), db = desc(sb);
    float d[NACC];
    #pragma unroll
    for (int j = 0; j < NACC; ++j) d[j] = 0.0f;
    for (int i = 0; i < iters; ++i) {
        fence_operands(d);
        wgmma_fence();
        #pragma unroll
        for (int u = 0; u < UNROLL; ++u) wgmma(d, da, db, 1);
        wgmma_commit();
        wgmma_wait<1>();
        fence_operands(d);
    }
    wgmma_wait<0>();
    fence_operands(d);
    float sum = 0.0f;
    #pragma unroll
    for (int j = 0; j < NACC; ++j) sum += d[j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
    probe_end(probe, mark);
}
"""
)


def measure(
    gpu: Any, rng: Any, sms: int, sustain: Callable[[Any, Callable[[], None], int], dict[str, Any]]
) -> dict[str, Any]:
    """On the GPU: one m64n256k16 product against numpy, then the loop (one block of WARPGROUPS
    warpgroups per SM) timed by `sustain` and each thread's sum checked."""
    import numpy as np

    a, b = rng.uniform(-1, 1, (M, K)).astype(np.float16), rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    packed_a, packed_b = pack(a), pack(b.T)
    check = gpu.kernel(SOURCE, "wgmma_check", arch="sm_90a")
    loop = gpu.kernel(SOURCE, "wgmma_loop", arch="sm_90a")
    block = 128 * WARPGROUPS
    threads = sms * block
    with (
        gpu.buffer(packed_a.nbytes) as pa,
        gpu.buffer(packed_b.nbytes) as pb,
        gpu.buffer(c.nbytes) as pc,
        gpu.buffer(c.nbytes) as pd,
        gpu.buffer(threads * 4) as out,
        gpu.probe() as probe,
    ):
        gpu.upload(pa, packed_a)
        gpu.upload(pb, packed_b)
        gpu.upload(pc, c)
        gpu.launch(check, 1, 128, (np.uint64(pa), np.uint64(pb), np.uint64(pc), np.uint64(pd)))
        gpu.sync()
        d = gpu.download(np.zeros_like(c), pd)
        args = (np.uint64(pa), np.uint64(pb), np.uint64(out), np.int32(ITERS), np.uint64(probe))
        measured = sustain(gpu, lambda: gpu.launch(loop, sms, block, args), probe)
        sums = gpu.download(np.zeros(threads, dtype=np.float32), out)
    product = a.astype(np.float64) @ b.astype(np.float64)
    count = ITERS * UNROLL
    thread = [sum(product[r, k] for r, k in fragment(t)) * count for t in range(128)]
    return measured | {
        "check_error": error(d, product + c),
        "loop_error": error(sums, np.tile(thread, threads // 128)),
        "instructions": sms * WARPGROUPS * count,
        "layout": f"{sms} blocks × {WARPGROUPS} warpgroups × {count} wgmmas ({UNROLL} per committed group)",
    }
