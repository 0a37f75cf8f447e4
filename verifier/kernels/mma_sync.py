"""mma.sync m16n8k16 (FP16 inputs, FP32 accumulate): the warp-level MMA, operands in registers.

NVRTC has no <mma.h> without the toolkit's include directory, so the instruction is written as
inline PTX, which NVRTC always takes. One warp multiplies a 16×16 A by a 16×8 B; each lane holds
four A registers, two B registers and four accumulators (PTX ISA, 'mma.m16n8k16' fragments:
lane = 4·g + t holds D rows g and g + 8, columns 2t and 2t + 1; fragment()).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from verifier.gpu import PROBE_SOURCE
from verifier.targets import Needs

M, N, K = 16, 8, 16
FLOP = 2 * M * N * K
"""Dense flops per mma.sync."""
ACC = 8
"""Independent accumulators per lane in the timed loop, so the Tensor Core always has work."""
ITERS, BLOCK, BLOCKS_PER_SM = 4096, 256, 16
"""Per launch: 16 blocks of 256 threads per SM, each warp 8 · 4096 MMAs (about 3.5 ms at 640 TFLOP/s)."""


def fragment(lane: int) -> list[tuple[int, int]]:
    """(row, column) of D that each of lane's four accumulators holds."""
    g, t = divmod(lane % 32, 4)
    return [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]


NEEDS = Needs("mma.sync of shape m16n8k16", least=80)
"""Checked by make kernels against NVRTC (verifier/targets.py)."""


SOURCE = (
    PROBE_SOURCE
    + f"#define ACC {ACC}\n"
    + r"""
#define MMA(d, a0, a1, a2, a3, b0, b1)                                                        \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "                           \
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                        \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                              \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1))

__device__ unsigned pack(unsigned short lo, unsigned short hi) { return (unsigned)lo | ((unsigned)hi << 16); }

// This lane's A and B registers; A 16×16 row-major, B 16×8 as B[k*8+n].
__device__ void load(const unsigned short* A, const unsigned short* B, unsigned* a, unsigned* b) {
    unsigned lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    a[0] = pack(A[g * 16 + t * 2], A[g * 16 + t * 2 + 1]);
    a[1] = pack(A[(g + 8) * 16 + t * 2], A[(g + 8) * 16 + t * 2 + 1]);
    a[2] = pack(A[g * 16 + t * 2 + 8], A[g * 16 + t * 2 + 9]);
    a[3] = pack(A[(g + 8) * 16 + t * 2 + 8], A[(g + 8) * 16 + t * 2 + 9]);
    b[0] = pack(B[(t * 2) * 8 + g], B[(t * 2 + 1) * 8 + g]);
    b[1] = pack(B[(t * 2 + 8) * 8 + g], B[(t * 2 + 9) * 8 + g]);
}

// One warp: D = A·B + C, C and D 16×8 row-major.
extern "C" __global__ void mma_tile(const unsigned short* A, const unsigned short* B, const float* C, float* D) {
    unsigned lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    unsigned a[4], b[2];
    load(A, B, a, b);
    float d[4] = {C[g * 8 + t * 2], C[g * 8 + t * 2 + 1], C[(g + 8) * 8 + t * 2], C[(g + 8) * 8 + t * 2 + 1]};
    MMA(d, a[0], a[1], a[2], a[3], b[0], b[1]);
    D[g * 8 + t * 2] = d[0];
    D[g * 8 + t * 2 + 1] = d[1];
    D[(g + 8) * 8 + t * 2] = d[2];
    D[(g + 8) * 8 + t * 2 + 1] = d[3];
}

// Every warp: ACC independent accumulators, each += A·B iters times (the same random tile
// as mma_tile); each thread writes the sum of its accumulators.
extern "C" __global__ void mma_loop(const unsigned short* A, const unsigned short* B, float* out, int iters,
                                    unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    unsigned a[4], b[2];
    load(A, B, a, b);
    float acc[ACC][4];
    #pragma unroll
    for (int j = 0; j < ACC; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    for (int i = 0; i < iters; ++i) {
        #pragma unroll
        for (int j = 0; j < ACC; ++j) MMA(acc[j], a[0], a[1], a[2], a[3], b[0], b[1]);
    }
    float sum = 0.0f;
    #pragma unroll
    for (int j = 0; j < ACC; ++j) sum += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
    probe_end(probe, mark);
}
"""
)


def error(got: Any, want: Any) -> float:
    """max |got - want| over max |want| (NaN where got holds a NaN: no tolerance passes it)."""
    import numpy as np

    return float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))


def measure(
    gpu: Any, rng: Any, sms: int, sustain: Callable[[Any, Callable[[], None], int], dict[str, Any]]
) -> dict[str, Any]:
    """On the GPU: one tile against numpy, then the loop timed by `sustain` (the experiment's
    warm-up and sampling) and each thread's sum checked; the raw numbers summarise() takes."""
    import numpy as np

    a, b = rng.uniform(-1, 1, (M, K)).astype(np.float16), rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    tile, loop = gpu.kernel(SOURCE, "mma_tile"), gpu.kernel(SOURCE, "mma_loop")
    grid = sms * BLOCKS_PER_SM
    threads = grid * BLOCK
    with (
        gpu.buffer(a.nbytes) as pa,
        gpu.buffer(b.nbytes) as pb,
        gpu.buffer(c.nbytes) as pc,
        gpu.buffer(c.nbytes) as pd,
        gpu.buffer(threads * 4) as out,
        gpu.probe() as probe,
    ):
        gpu.upload(pa, a.view(np.uint16))
        gpu.upload(pb, b.view(np.uint16))
        gpu.upload(pc, c)
        gpu.launch(tile, 1, 32, (np.uint64(pa), np.uint64(pb), np.uint64(pc), np.uint64(pd)))
        gpu.sync()
        d = gpu.download(np.zeros_like(c), pd)
        args = (np.uint64(pa), np.uint64(pb), np.uint64(out), np.int32(ITERS), np.uint64(probe))
        measured = sustain(gpu, lambda: gpu.launch(loop, grid, BLOCK, args), probe)
        sums = gpu.download(np.zeros(threads, dtype=np.float32), out)
    product = a.astype(np.float64) @ b.astype(np.float64)
    lane = [sum(product[r, k] for r, k in fragment(n)) * ITERS * ACC for n in range(32)]
    return measured | {
        "check_error": error(d, product + c),
        "loop_error": error(sums, np.tile(lane, threads // 32)),
        "instructions": threads // 32 * ITERS * ACC,
        "layout": f"{threads // 32} warps × {ACC} independent accumulators × {ITERS} MMAs",
    }
