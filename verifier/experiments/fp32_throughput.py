"""FP32 throughput: independent FMA chains on every lane, achieved TFLOP/s against SMs × lanes × 2 × clock.

Each thread runs CHAINS independent fmaf chains (x = x·a + b), UNROLL steps per loop turn, so
the scheduler always has an independent FMA to issue; the grid fills every SM several times.
The outputs of a few threads are recomputed on the CPU (each fused step emulated in float64 and
rounded to float32), so a kernel that skipped work fails the gate rather than looking fast.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device
from verifier.experiment import Outcome

ID = "fp32-throughput"
PURPOSE = "FP32 FMA throughput from independent chains on every lane, against SMs × FP32 lanes × 2 × SM clock"
USES = ("gpu.py",)

CHAINS, UNROLL, ITERS = 8, 16, 1024
BLOCK, WAVES = 256, 32
"""Blocks of 256 threads, 32 blocks per SM (several full waves at 2048 threads per SM)."""
A, B = 0.99999, 1e-5
"""x -> x·A + B shrinks x - 1 by A per step: after ITERS·UNROLL steps every step still shows."""
CHECKED = (0, 1, 31, 32, 1000, 4095)
"""Threads whose outputs the CPU recomputes (lanes and warps of the first blocks)."""
TOLERANCE = 1e-5
LANES_PER_SM = {
    "7.0": 64, "7.2": 64, "7.5": 64, "8.0": 64,
    "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128,
    "10.0": 128, "10.1": 128, "10.3": 128, "11.0": 128, "12.0": 128, "12.1": 128,
}  # fmt: skip
"""FP32 FMA results per clock per SM: the CUDA C++ Programming Guide, 'Arithmetic Instructions'
throughput table (32-bit floating-point add, multiply, multiply-add); no device attribute says it."""

SOURCE = rf"""
extern "C" __global__ void fma_chains(float* out, int iters, float a, float b) {{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float x[{CHAINS}];
    #pragma unroll
    for (int c = 0; c < {CHAINS}; ++c) x[c] = (float)(t % 4096) * 1e-4f + (float)c * 0.125f;
    for (int i = 0; i < iters; ++i) {{
        #pragma unroll
        for (int u = 0; u < {UNROLL}; ++u) {{
            #pragma unroll
            for (int c = 0; c < {CHAINS}; ++c) x[c] = fmaf(x[c], a, b);
        }}
    }}
    float sum = 0.0f;
    #pragma unroll
    for (int c = 0; c < {CHAINS}; ++c) sum += x[c];
    out[t] = sum;
}}
"""


def expected(threads: tuple[int, ...], iters: int) -> Any:
    """What fma_chains writes for these threads, on the CPU in float32 with fused steps."""
    import numpy as np

    f32 = np.float32
    t = np.array(threads, dtype=np.int64) % 4096
    start = t[:, None].astype(np.float64) * float(f32(1e-4)) + np.arange(CHAINS)[None, :] * 0.125
    x = start.astype(f32)  # the GPU contracts this into one fmaf: one rounding
    a, b = float(f32(A)), float(f32(B))
    for _ in range(iters * UNROLL):
        x = (x.astype(np.float64) * a + b).astype(f32)
    total = np.zeros(len(threads), dtype=f32)
    for c in range(CHAINS):
        total = (total + x[:, c]).astype(f32)
    return total


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    sms = device.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
    major = device.attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
    minor = device.attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
    attrs = {"sm_count": sms, "cc": f"{major}.{minor}", "clock_khz": device.attribute("CU_DEVICE_ATTRIBUTE_CLOCK_RATE")}
    grid = sms * WAVES
    threads = grid * BLOCK
    with opened(device) as gpu, gpu.buffer(threads * 4) as out:
        fn = gpu.kernel(SOURCE, "fma_chains")
        args = (np.uint64(out), np.int32(ITERS), np.float32(A), np.float32(B))
        gpu.launch(fn, grid, BLOCK, args)
        gpu.sync()
        got = gpu.download(np.zeros(threads, dtype=np.float32), out)
        timed = gpu.time(lambda: gpu.launch(fn, grid, BLOCK, args))
    want = expected(CHECKED, ITERS)
    error = float(np.max(np.abs(got[list(CHECKED)] - want) / np.abs(want)))
    raw = {"ms": timed.samples, "stopped": timed.stopped, "threads": threads, "max_rel_error": error}
    raw["finite"] = bool(np.all(np.isfinite(got)))
    return summarise(raw, attrs)


def summarise(raw: dict[str, Any], attrs: dict[str, Any]) -> Outcome:
    """Gates and results from the raw numbers (pure: the CPU test feeds it fixture data)."""
    outcome = Outcome(repeats=len(raw["ms"]))
    correct = raw["finite"] and raw["max_rel_error"] <= TOLERANCE
    detail = f"threads {list(CHECKED)}: max relative error {raw['max_rel_error']:.2e} (tolerance {TOLERANCE:.0e})"
    if not outcome.gate("the FMA chains' outputs equal the CPU's float32 computation", correct, detail):
        return outcome
    flop = raw["threads"] * ITERS * UNROLL * CHAINS * 2
    rates = [flop / (ms * 1e-3) / 1e12 for ms in raw["ms"]]
    median = statistics.median(rates)
    outcome.add(
        Result(
            "fp32_tflops",
            round(median, 2),
            "TFLOP/s",
            f"achieved FP32 rate (median; 2 flops per FMA): {raw['threads']} threads × {CHAINS} independent fmaf "
            f"chains × {ITERS * UNROLL} steps, one kernel timed by CUDA events; stopped on {raw['stopped']}",
            [round(r, 3) for r in rates],
        ),
        Result("fp32_tflops_best", round(max(rates), 2), "TFLOP/s", "fastest sample of the FP32 rate"),
        Result("fma_chain_steps", ITERS * UNROLL, "", "fmaf steps per chain per thread"),
        Result("threads_launched", raw["threads"], "threads", f"threads in the grid ({BLOCK} per block)"),
    )
    lanes = LANES_PER_SM.get(attrs["cc"])
    if lanes is None or not attrs["clock_khz"]:
        why = "no FP32 lane count for this compute capability" if lanes is None else "the SM clock attribute is 0"
        outcome.add(Result("fp32_theoretical_note", f"{why}: achieved rate reported alone", "", "no theoretical"))
        return outcome
    theoretical = attrs["sm_count"] * lanes * 2 * attrs["clock_khz"] * 1e3 / 1e12
    outcome.add(
        Result("fp32_lanes_per_sm", lanes, "lanes", "FP32 FMA results per clock per SM (Programming Guide table)"),
        Result("sm_clock", attrs["clock_khz"] / 1000, "MHz", "SM clock attribute (CU_DEVICE_ATTRIBUTE_CLOCK_RATE)"),
        Result(
            "fp32_theoretical_tflops",
            round(theoretical, 2),
            "TFLOP/s",
            f"SMs ({attrs['sm_count']}) × FP32 lanes per SM ({lanes}) × 2 flops × SM clock attribute",
        ),
        Result(
            "fp32_fraction_of_theoretical", round(100 * median / theoretical, 1), "%", "median achieved ÷ theoretical"
        ),
    )
    outcome.gate(
        "achieved FP32 rate is at most 1.05 × the theoretical",
        max(rates) <= theoretical * 1.05,
        f"best {max(rates):.2f} TFLOP/s, theoretical {theoretical:.2f} TFLOP/s",
    )
    return outcome
