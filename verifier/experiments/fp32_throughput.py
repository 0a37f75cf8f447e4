"""FP32 throughput: independent FMA chains on every lane, achieved FLOP per SM clock per SM against the peak.

Each thread runs CHAINS independent fmaf chains (x = x·a + b), UNROLL steps per loop turn, so
the scheduler always has an independent FMA to issue; the grid fills every SM several times.
The outputs of a few threads are recomputed on the CPU (each fused step emulated in float64 and
rounded to float32), so a kernel that skipped work fails the gate rather than looking fast.

A throughput is only worth its clock: the kernel runs back to back for WARMUP_MS (the clock
settles where power and heat let it) before samples of SAMPLE_MS each (about 1 s of GPU time in
all), every sample queued behind the wait kernel (gpu.py: no host time in it). The kernel
carries the probe, which reads the SM clock it ran at (clock64 over %globaltimer, inside it),
so the rate is also given per clock per SM: TFLOP/s ÷ (SMs × that clock), against the peak per
clock of LANES_PER_SM × 2 (an FMA is two FLOP), a datasheet figure: the NVIDIA H100 Tensor Core
GPU Architecture whitepaper gives a Hopper SM 128 FP32 lanes, so 256 FLOP per clock per SM.

Predicted on an H200 SXM (132 SMs, 1980 MHz maximum SM clock; sustained may be lower): peak
132 × 256 × 1.98 GHz = 66.9 TFLOP/s at the maximum clock. A loop turn issues 128 FMAs (16 steps
× 8 chains) and about 3 loop instructions, so ≈ 128 / 131 × 256 ≈ 250 FLOP/clock/SM (≈ 97-98% of
the peak per clock) at whatever clock it holds; at 1980 MHz that is ≈ 65 TFLOP/s (65.1 before),
lower in proportion if the clock settles lower under FMA load (fp32_clock says where).
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device
from verifier.experiment import Outcome, clock_result, timed_method, timed_result
from verifier.gpu import PROBE_SOURCE

ID = "fp32-throughput"
PURPOSE = "FP32 FMA throughput from independent chains on every lane, per SM clock per SM against the peak per clock"
USES = ("gpu.py", "timing.py")

CHAINS, UNROLL, ITERS = 8, 16, 1024
BLOCK, WAVES = 256, 32
"""Blocks of 256 threads, 32 blocks per SM (several full waves at 2048 threads per SM)."""
A, B = 0.99999, 1e-5
"""x -> x·A + B shrinks x - 1 by A per step: after ITERS·UNROLL steps every step still shows."""
CHECKED = (0, 1, 31, 32, 1000, 4095)
"""Threads whose outputs the CPU recomputes (lanes and warps of the first blocks)."""
TOLERANCE = 1e-5
WARMUP_MS, SAMPLE_MS = 500.0, 50.0
"""GPU time run before sampling, and per sample (≥ 10 samples: about 1 s in all)."""
PER_CLOCK_SLACK = 1.01
"""The per-clock rate may exceed the peak per clock by at most 1%: the clock is an average over
blocks of clock64 cycles over %globaltimer ns, and the events hold a few µs more than the kernel."""
LANES_PER_SM = {
    "7.0": 64, "7.2": 64, "7.5": 64, "8.0": 64,
    "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128,
    "10.0": 128, "10.1": 128, "10.3": 128, "11.0": 128, "12.0": 128, "12.1": 128,
}  # fmt: skip
"""FP32 FMA results per clock per SM: the CUDA C++ Programming Guide, 'Arithmetic Instructions'
throughput table (32-bit floating-point add, multiply, multiply-add); no device attribute says it.
For 9.0 it is also the Hopper whitepaper's 128 FP32 lanes per SM (LANES_SOURCE)."""
LANES_SOURCE = {
    "9.0": "NVIDIA H100 Tensor Core GPU Architecture whitepaper: 128 FP32 lanes per SM (a datasheet figure)",
}
DEFAULT_SOURCE = "CUDA C++ Programming Guide, arithmetic instruction throughput table (a datasheet figure)"

SOURCE = PROBE_SOURCE + (
    rf"""
extern "C" __global__ void fma_chains(float* out, int iters, float a, float b, unsigned long long* probe) {{
    ProbeMark mark = probe_begin(probe);
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
    probe_end(probe, mark);
}}
"""
)


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


def warmup_launches(one_ms: float, threads: int, attrs: dict[str, Any]) -> int:
    """Launches that last at least WARMUP_MS: the first launch's time (maybe at a cold clock) or,
    where shorter, the time at the peak and the maximum clock, which no launch beats."""
    lanes = LANES_PER_SM.get(attrs["cc"])
    if lanes and attrs["clock_khz"] and attrs["sm_count"]:
        flop = threads * ITERS * UNROLL * CHAINS * 2
        one_ms = min(one_ms, flop / (attrs["sm_count"] * lanes * 2 * attrs["clock_khz"] * 1e3) * 1e3)
    return max(1, math.ceil(WARMUP_MS / max(one_ms, 1e-3)))


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    sms = device.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
    major = device.attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
    minor = device.attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
    attrs = {"sm_count": sms, "cc": f"{major}.{minor}", "clock_khz": device.attribute("CU_DEVICE_ATTRIBUTE_CLOCK_RATE")}
    grid = sms * WAVES
    threads = grid * BLOCK
    with opened(device) as gpu, gpu.buffer(threads * 4) as out, gpu.probe() as probe:
        fn = gpu.kernel(SOURCE, "fma_chains")
        args = (np.uint64(out), np.int32(ITERS), np.float32(A), np.float32(B), np.uint64(probe))
        gpu.launch(fn, grid, BLOCK, args)
        gpu.sync()
        got = gpu.download(np.zeros(threads, dtype=np.float32), out)

        def work() -> None:
            gpu.launch(fn, grid, BLOCK, args)

        warmup = warmup_launches(gpu.queued(work)[0], threads, attrs)
        timed = gpu.time(work, warmup=warmup, calls=1, probe=probe, min_ms=SAMPLE_MS)
    want = expected(CHECKED, ITERS)
    error = float(np.max(np.abs(got[list(CHECKED)] - want) / np.abs(want)))
    raw = timed.raw() | {"threads": threads, "max_rel_error": error, "warmup_launches": warmup}
    raw["finite"] = bool(np.all(np.isfinite(got)))
    return summarise(raw, attrs)


def summarise(raw: dict[str, Any], attrs: dict[str, Any]) -> Outcome:
    """Gates and results from the raw numbers (pure: the CPU test feeds it fixture data): raw
    is the Timed.raw() of the samples with the correctness figures; attrs the device's."""
    outcome = Outcome(repeats=len(raw["ms"]))
    correct = raw["finite"] and raw["max_rel_error"] <= TOLERANCE
    detail = f"threads {list(CHECKED)}: max relative error {raw['max_rel_error']:.2e} (tolerance {TOLERANCE:.0e})"
    if not outcome.gate("the FMA chains' outputs equal the CPU's float32 computation", correct, detail):
        return outcome
    outcome.no_host_time("the FMA kernel", raw)
    flop = raw["threads"] * ITERS * UNROLL * CHAINS * 2
    rates = [flop / (ms * 1e-3) / 1e12 for ms in raw["ms"]]
    per_run = statistics.median(raw["ms"])
    warm = f"after {raw.get('warmup_launches', 0)} warm-up launches (~{raw.get('warmup_launches', 0) * per_run:.0f} ms)"
    description = (
        f"achieved FP32 rate (median; 2 FLOP per FMA): {raw['threads']} threads × {CHAINS} independent fmaf "
        f"chains × {ITERS * UNROLL} steps, GPU time queued behind a wait kernel {warm}; "
        f"{raw.get('reps', 1)} launches a sample, stopped on {raw['stopped']}"
    )
    outcome.add(
        timed_result("fp32_tflops", rates, "TFLOP/s", description, raw, 2, 3),
        Result(
            "fp32_tflops_best",
            round(max(rates), 2),
            "TFLOP/s",
            "fastest sample of the FP32 rate",
            method=timed_method(raw),
        ),
        Result("fma_chain_steps", ITERS * UNROLL, "", "fmaf steps per chain per thread"),
        Result("threads_launched", raw["threads"], "threads", f"threads in the grid ({BLOCK} per block)"),
        *clock_result("fp32", raw, "the FMA kernel's timed samples, after its warm-up"),
    )
    per_clock(outcome, raw, attrs, flop)
    theoretical_at_max(outcome, attrs, rates)
    return outcome


def per_clock(outcome: Outcome, raw: dict[str, Any], attrs: dict[str, Any], flop: int) -> None:
    """FLOP per SM clock per SM at the clock each sample ran at, against LANES_PER_SM × 2."""
    lanes = LANES_PER_SM.get(attrs["cc"])
    clocks = [float(c) for c in raw.get("clock_mhz") or []]
    if lanes is None:
        outcome.add(Result("fp32_peak_note", "no FP32 lane count for this compute capability", "", "no peak per clock"))
        return
    peak = lanes * 2
    outcome.add(
        Result(
            "fp32_lanes_per_sm",
            lanes,
            "lanes",
            f"FP32 FMA lanes per SM: {LANES_SOURCE.get(attrs['cc'], DEFAULT_SOURCE)}",
        ),
        Result("fp32_peak_flop_per_clock_per_sm", peak, "FLOP/clock/SM", "FP32 lanes per SM × 2 FLOP per FMA"),
    )
    if len(clocks) != len(raw["ms"]) or not attrs["sm_count"]:
        outcome.gate("the FP32 rate per clock is at most the peak per clock", False, "no in-kernel clock per sample")
        return
    rates = [flop / (ms * 1e-3) / (mhz * 1e6) / attrs["sm_count"] for ms, mhz in zip(raw["ms"], clocks, strict=True)]
    median, mhz = statistics.median(rates), statistics.median(clocks)
    outcome.add(
        Result(
            "fp32_flop_per_clock_per_sm",
            round(median, 1),
            "FLOP/clock/SM",
            f"achieved FLOP per SM clock per SM: each sample's rate ÷ ({attrs['sm_count']} SMs × the SM clock that "
            "sample ran at, read inside the kernel) (median)",
            [round(r, 2) for r in rates],
        ),
        Result("fp32_fraction_of_peak_per_clock", round(100 * median / peak, 1), "%", f"median per clock ÷ {peak}"),
        Result(
            "fp32_peak_tflops_at_clock",
            round(attrs["sm_count"] * peak * mhz * 1e6 / 1e12, 2),
            "TFLOP/s",
            f"SMs ({attrs['sm_count']}) × {peak} FLOP/clock × the median clock the kernel ran at ({mhz:.0f} MHz)",
        ),
    )
    outcome.gate(
        "the FP32 rate per clock is at most the peak per clock (within 1%: the clock is an average)",
        max(rates) <= peak * PER_CLOCK_SLACK,
        f"best {max(rates):.1f}, median {median:.1f} FLOP/clock/SM at {mhz:.0f} MHz; peak {peak}",
    )


def theoretical_at_max(outcome: Outcome, attrs: dict[str, Any], rates: list[float]) -> None:
    """The rate against SMs × lanes × 2 × the clock attribute (the maximum SM clock)."""
    lanes = LANES_PER_SM.get(attrs["cc"])
    if lanes is None or not attrs["clock_khz"]:
        why = "no FP32 lane count for this compute capability" if lanes is None else "the SM clock attribute is 0"
        outcome.add(Result("fp32_theoretical_note", f"{why}: achieved rate reported alone", "", "no theoretical"))
        return
    theoretical = attrs["sm_count"] * lanes * 2 * attrs["clock_khz"] * 1e3 / 1e12
    median = statistics.median(rates)
    outcome.add(
        Result(
            "sm_clock",
            attrs["clock_khz"] / 1000,
            "MHz",
            "SM clock attribute (CU_DEVICE_ATTRIBUTE_CLOCK_RATE): the maximum, not the clock the kernel ran at "
            "(fp32_clock)",
        ),
        Result(
            "fp32_theoretical_tflops",
            round(theoretical, 2),
            "TFLOP/s",
            f"SMs ({attrs['sm_count']}) × FP32 lanes per SM ({lanes}) × 2 FLOP × the maximum SM clock (attribute)",
        ),
        Result(
            "fp32_fraction_of_theoretical",
            round(100 * median / theoretical, 1),
            "%",
            "median achieved ÷ theoretical at the maximum clock (the clock it ran at: fp32_fraction_of_peak_per_clock)",
        ),
    )
    outcome.gate(
        "achieved FP32 rate is at most 1.05 × the theoretical at the maximum clock",
        max(rates) <= theoretical * 1.05,
        f"best {max(rates):.2f} TFLOP/s, theoretical {theoretical:.2f} TFLOP/s",
    )
