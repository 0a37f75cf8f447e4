"""Tensor Core: mma.sync m16n8k16 (FP16 inputs, FP32 accumulate) from NVRTC, checked and timed.

NVRTC has no <mma.h> without the toolkit's include directory, so the instruction is written as
inline PTX, which NVRTC always takes. One warp computes one 16×16 · 16×8 tile from random
data, compared with numpy; then every warp repeats MMAs on register fragments (ACC independent
accumulators) and the rate is 2·M·N·K flops per MMA over the kernel's event-timed duration.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device
from verifier.experiment import Outcome

ID = "tensor-core"
PURPOSE = "Tensor Core rate of mma.sync m16n8k16 FP16→FP32 from NVRTC inline PTX, after a tile checked against numpy"
USES = ("gpu.py",)

M, N, K = 16, 8, 16
ACC, ITERS, BLOCK, BLOCKS_PER_SM = 8, 4096, 256, 16
HALF = 0x2000  # float16 bits of 2**-7: every loop product is exact, every sum a power of two
TOLERANCE = 1e-3
DENSE_FP16_FLOP_PER_CLOCK_PER_SM = {"8.0": 2048, "9.0": 4096}
"""Dense FP16 (FP32 accumulate) Tensor Core flops per clock per SM: the NVIDIA A100 and H100
architecture whitepapers' peak TFLOP/s ÷ SMs ÷ boost clock (312 / 108 / 1.41 GHz; 989.4 / 132 /
1.83 GHz). Only a sanity bound: mma.sync need not reach it (Hopper's full rate is wgmma's)."""

SOURCE = (
    f"#define ACC {ACC}\n"
    + r"""
#define MMA(d, a0, a1, a2, a3, b0, b1)                                                        \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "                           \
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                        \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                              \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1))

__device__ unsigned pack(unsigned short lo, unsigned short hi) { return (unsigned)lo | ((unsigned)hi << 16); }

// One warp: D = A·B + C; A 16×16 row-major, B 16×8 as B[k*8+n], C and D 16×8 row-major.
extern "C" __global__ void mma_tile(const unsigned short* A, const unsigned short* B, const float* C, float* D) {
    unsigned lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    unsigned a0 = pack(A[g * 16 + t * 2], A[g * 16 + t * 2 + 1]);
    unsigned a1 = pack(A[(g + 8) * 16 + t * 2], A[(g + 8) * 16 + t * 2 + 1]);
    unsigned a2 = pack(A[g * 16 + t * 2 + 8], A[g * 16 + t * 2 + 9]);
    unsigned a3 = pack(A[(g + 8) * 16 + t * 2 + 8], A[(g + 8) * 16 + t * 2 + 9]);
    unsigned b0 = pack(B[(t * 2) * 8 + g], B[(t * 2 + 1) * 8 + g]);
    unsigned b1 = pack(B[(t * 2 + 8) * 8 + g], B[(t * 2 + 9) * 8 + g]);
    float d[4] = {C[g * 8 + t * 2], C[g * 8 + t * 2 + 1], C[(g + 8) * 8 + t * 2], C[(g + 8) * 8 + t * 2 + 1]};
    MMA(d, a0, a1, a2, a3, b0, b1);
    D[g * 8 + t * 2] = d[0];
    D[g * 8 + t * 2 + 1] = d[1];
    D[(g + 8) * 8 + t * 2] = d[2];
    D[(g + 8) * 8 + t * 2 + 1] = d[3];
}

// Every warp: ACC independent accumulators, each += A·B iters times; each thread writes its sum.
extern "C" __global__ void mma_loop(float* out, int iters, unsigned a, unsigned b) {
    float acc[ACC][4];
    #pragma unroll
    for (int j = 0; j < ACC; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    for (int i = 0; i < iters; ++i) {
        #pragma unroll
        for (int j = 0; j < ACC; ++j) MMA(acc[j], a, a, a, a, b, b);
    }
    float sum = 0.0f;
    #pragma unroll
    for (int j = 0; j < ACC; ++j) sum += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
"""
)

LOOP_SUM = ACC * 4 * ITERS * K * 2.0**-14
"""What each thread of mma_loop writes: every product is 2**-7 · 2**-7, K of them per element."""


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    sms = device.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
    major = device.attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
    minor = device.attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
    attrs = {"sm_count": sms, "cc": f"{major}.{minor}", "clock_khz": device.attribute("CU_DEVICE_ATTRIBUTE_CLOCK_RATE")}
    rng = np.random.default_rng(15)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    grid = sms * BLOCKS_PER_SM
    threads = grid * BLOCK
    with opened(device) as gpu:
        tile = gpu.kernel(SOURCE, "mma_tile")
        loop = gpu.kernel(SOURCE, "mma_loop")
        sizes = (a.nbytes, b.nbytes, c.nbytes, c.nbytes)
        with (
            gpu.buffer(sizes[0]) as pa,
            gpu.buffer(sizes[1]) as pb,
            gpu.buffer(sizes[2]) as pc,
            gpu.buffer(sizes[3]) as pd,
        ):
            gpu.upload(pa, a.view(np.uint16))
            gpu.upload(pb, b.view(np.uint16))
            gpu.upload(pc, c)
            gpu.launch(tile, 1, 32, (np.uint64(pa), np.uint64(pb), np.uint64(pc), np.uint64(pd)))
            gpu.sync()
            d = gpu.download(np.zeros_like(c), pd)
        with gpu.buffer(threads * 4) as out:
            args = (np.uint64(out), np.int32(ITERS), np.uint32(HALF * 0x10001), np.uint32(HALF * 0x10001))
            gpu.launch(loop, grid, BLOCK, args)
            gpu.sync()
            sums = gpu.download(np.zeros(threads, dtype=np.float32), out)
            timed = gpu.time(lambda: gpu.launch(loop, grid, BLOCK, args))
    ref = a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)
    raw = {
        "tile_max_error": float(np.max(np.abs(d - ref)) / np.max(np.abs(ref))),
        "loop_wrong": int(np.count_nonzero(sums != np.float32(LOOP_SUM))),
        "ms": timed.samples,
        "stopped": timed.stopped,
        "warps": threads // 32,
    }
    return summarise(raw, attrs)


def summarise(raw: dict[str, Any], attrs: dict[str, Any]) -> Outcome:
    """Gates and results from the raw numbers (pure: the CPU test feeds it fixture data)."""
    outcome = Outcome(repeats=len(raw["ms"]))
    tile_ok = outcome.gate(
        "one m16n8k16 tile (random FP16 A and B, FP32 C) equals numpy's A times B plus C",
        raw["tile_max_error"] <= TOLERANCE,
        f"max error {raw['tile_max_error']:.2e} of the largest |value| (tolerance {TOLERANCE:.0e})",
    )
    loop_ok = outcome.gate(
        "every thread of the timed kernel wrote the exact accumulated sum",
        raw["loop_wrong"] == 0,
        f"{raw['loop_wrong']} threads differ from {LOOP_SUM:g}",
    )
    if not (tile_ok and loop_ok):
        return outcome
    flop = raw["warps"] * ITERS * ACC * 2 * M * N * K
    rates = [flop / (ms * 1e-3) / 1e12 for ms in raw["ms"]]
    median = statistics.median(rates)
    outcome.add(
        Result(
            "mma_fp16_tflops",
            round(median, 1),
            "TFLOP/s",
            f"achieved mma.sync.m16n8k16 FP16→FP32 rate (median; 2·16·8·16 flops per MMA): {raw['warps']} warps × "
            f"{ACC} independent accumulators × {ITERS} MMAs, one kernel timed by CUDA events; stopped on "
            f"{raw['stopped']}",
            [round(r, 2) for r in rates],
        ),
        Result("mma_fp16_tflops_best", round(max(rates), 1), "TFLOP/s", "fastest sample of the mma.sync rate"),
    )
    per_clock = DENSE_FP16_FLOP_PER_CLOCK_PER_SM.get(attrs["cc"])
    if per_clock is None or not attrs["clock_khz"]:
        return outcome
    peak = attrs["sm_count"] * per_clock * attrs["clock_khz"] * 1e3 / 1e12
    outcome.add(
        Result(
            "dense_fp16_peak_tflops",
            round(peak, 1),
            "TFLOP/s",
            f"SMs × {per_clock} dense FP16 flops per clock per SM (architecture whitepaper) × SM clock attribute",
        ),
        Result("mma_fraction_of_peak", round(100 * median / peak, 1), "%", "median mma.sync rate ÷ dense FP16 peak"),
    )
    outcome.gate(
        "achieved rate is at most 1.05 × the whitepaper's dense FP16 peak at this clock",
        max(rates) <= peak * 1.05,
        f"best {max(rates):.1f} TFLOP/s, peak {peak:.1f} TFLOP/s",
    )
    return outcome
