"""Roofline: one streaming kernel whose arithmetic intensity is a parameter, from memory-bound to compute-bound.

Each thread streams float4s from a buffer at least BUFFER_L2S times the L2 (the size read from
CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE), two independent 16-byte loads a loop turn (asm volatile
`ld.global.nc.v4.f32`, so no component can be dropped; with 2048 threads per SM that is 64 KiB in
flight per SM, several times what Little's law asks of HBM), and does F fused multiply-adds per float4
it loads, spread over CHAINS independent chains (acc = acc · a + component), so the FMAs are never
waiting on each other; it writes one float per thread (its chains' sum). F runs over powers of two
from 1 to 512, so the intensity, 2F FLOP per 16 bytes, runs from 1/8 to 64 FLOP per byte; each
result is named by its FLOP per 16-byte load (`gflops_2flop` ... `gflops_1024flop`), the whole
number the chart reads. Where F < 4 the unused components are XORed into a word the thread also
writes, so every byte loaded is used; integer work is not counted as FLOP. The outputs of a few
threads are recomputed on the CPU (each fused step in float64, rounded to float32) at every F.

Samples are queued behind the wait kernel (gpu.py: no host time in them), each at least SAMPLE_MS
of launches after WARMUP_MS of warm-up launches, and the kernel carries the probe, which reads the
SM clock it ran at. GFLOP/s and GB/s (10^9 bytes/s, the loads plus the outputs) are per sample.
From the measurements: the bandwidth plateau (the highest GB/s of the sweep, reached where the
kernel is memory-bound), the compute plateau (the highest GFLOP/s, reached where it is
compute-bound), and the measured ridge point, their quotient: the intensity at which the
memory-bound line at the plateau bandwidth meets the compute plateau. Beside it, the ridge from
the attributes: the FP32 peak at the maximum clock (SMs × lanes × 2 × clock, lanes per SM from
fp32-throughput's table, a datasheet figure) over the theoretical bandwidth (2 × memory clock ×
bus width / 8).

Predicted on an H200 SXM (132 SMs, 1980 MHz, 4814 GB/s theoretical; the memory-bandwidth page's
4 GiB read reached about 4.6 TB/s, fp32-throughput about 65 TFLOP/s): at 1/8 to 2 FLOP/byte the
kernel is memory-bound at about 4.5 TB/s, so 0.56, 1.1, 2.3, 4.5, 9 TFLOP/s; at 4 and 8 FLOP/byte
still memory-bound (18 and 36 TFLOP/s) with the bandwidth a little lower as issue slots fill; at
32 and 64 FLOP/byte compute-bound near 64 TFLOP/s (an inner loop turn of 128 FMAs costs about 3
more instructions: ~97% of 256 FLOP per clock per SM at 1980 MHz), the bandwidth falling as
1/intensity (about 2 TB/s at 32, 1 TB/s at 64). Ridge: about 64 / 4.5 ≈ 14 FLOP/byte measured,
and 132 × 256 × 1.98 GHz / 4814 GB/s = 66.9 / 4.81 ≈ 13.9 FLOP/byte from the attributes. The
point just past the ridge (16 FLOP/byte, roof 64 TFLOP/s) reaches least of its roof, about
80-90% (52-58 TFLOP/s): there neither the loads nor the FMAs alone fill the time.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check, compile_source
from verifier.experiment import Outcome, clock_result
from verifier.experiments.fp32_throughput import LANES_PER_SM
from verifier.kernels.roofline import BLOCK, BLOCKS_PER_SM, FMAS, LOADS, SOURCE, A, expected

ID = "roofline"
PURPOSE = "FLOP/s and GB/s of one streaming kernel as its FLOP per byte goes from 1/8 to 64: the roofline and its ridge"
USES = ("gpu.py", "timing.py", "kernels/roofline.py", "experiments/fp32_throughput.py")

BUFFER_L2S = 8
"""The buffer is at least this many times the L2: every launch streams it from DRAM."""
CHECKED = (0, 1, 31, 32, 4097, 65537)
TOLERANCE = 1e-5
WARMUP_MS, SAMPLE_MS = 50.0, 20.0
PER_CLOCK_SLACK, BANDWIDTH_SLACK = 1.01, 1.02
"""A rate per clock may pass the peak per clock by 1% (the clock is an average over blocks); a
bandwidth the theoretical by 2% (the memory clock attribute is rounded)."""


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    attrs = device.sm_facts(clock=True) | device.memory_facts()
    raw: dict[str, Any] = {"points": {}}
    with opened(device) as gpu, gpu.probe() as probe:
        module, _ = device.load(compile_source(SOURCE, "roofline.cu", gpu.arch).image)  # one compile for all
        fns = {f: device.function(module, f"roof_f{f}") for f in FMAS}
        local = gpu.drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
        raw["local_bytes"] = {
            f: int(check("cuFuncGetAttribute", gpu.drv.cuFuncGetAttribute(local, fn))) for f, fn in fns.items()
        }
        per_sm = check(
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            gpu.drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(fns[FMAS[-1]], BLOCK, 0),
        )
        grid = max(1, min(int(per_sm), BLOCKS_PER_SM)) * attrs["sm_count"]
        total = grid * BLOCK
        iters = math.ceil(BUFFER_L2S * attrs["l2_bytes"] / (total * LOADS * 16))
        n4 = iters * LOADS * total
        raw |= {"threads": total, "iters": iters, "buffer_bytes": n4 * 16}
        with gpu.buffer(n4 * 16) as src, gpu.buffer(2 * total * 4) as out:
            fill = device.function(module, "fill")
            gpu.launch(fill, 4 * grid, BLOCK, [np.uint64(src), np.uint64(n4 * 4)])
            for f, fn in fns.items():
                args = [np.uint64(src), np.uint32(iters), np.float32(A), np.uint64(out), np.uint64(probe)]

                def work(fn: Any = fn, args: list[Any] = args) -> None:
                    gpu.launch(fn, grid, BLOCK, args)

                work()
                gpu.sync()
                got = gpu.download(np.zeros(2 * total, dtype=np.float32), out)
                warmup = max(1, math.ceil(WARMUP_MS / max(gpu.queued(work)[0], 1e-3)))
                timed = gpu.time(work, warmup=warmup, probe=probe, min_ms=SAMPLE_MS)
                raw["points"][f] = timed.raw() | check_outputs(got, f, iters, total)
    return summarise(raw, attrs)


def check_outputs(got: Any, fmas: int, iters: int, total: int) -> dict[str, Any]:
    """The CHECKED threads' sums (and touch words, F < 4) against the CPU's, and that all are finite."""
    import numpy as np

    sums, touch = expected(CHECKED, fmas, iters, total)
    mine = got[list(CHECKED)]
    error = float(np.max(np.abs(mine - sums) / np.abs(sums)))
    touched = fmas >= 4 or bool(np.all(got[[total + t for t in CHECKED]].view(np.uint32) == touch))
    return {"max_rel_error": error, "touch_ok": touched, "finite": bool(np.all(np.isfinite(got[:total])))}


def counts(fmas: int, raw: dict[str, Any]) -> tuple[int, int]:
    """(FLOP, DRAM bytes) per launch: 2 per FMA; the buffer read once and the outputs written
    (a word per thread, two where F < 4)."""
    flop = int(raw["buffer_bytes"]) // 16 * fmas * 2
    return flop, int(raw["buffer_bytes"]) + int(raw["threads"]) * 4 * (2 if fmas < 4 else 1)


def rates(point: dict[str, Any], fmas: int, raw: dict[str, Any]) -> tuple[list[float], list[float]]:
    """(GFLOP/s, GB/s) per sample: FLOP and bytes per launch over its ms."""
    flop, moved = counts(fmas, raw)
    return [flop / ms / 1e6 for ms in point["ms"]], [moved / ms / 1e6 for ms in point["ms"]]


def intensity(fmas: int, raw: dict[str, Any]) -> float:
    flop, moved = counts(fmas, raw)
    return flop / moved


def summarise(raw: dict[str, Any], attrs: dict[str, Any]) -> Outcome:
    """Gates and results from the raw numbers (pure: the CPU test feeds it fixture data): raw holds
    each point's Timed.raw() and output check by F, the grid and the buffer; attrs the device's."""
    points: dict[int, dict[str, Any]] = {int(f): p for f, p in raw["points"].items()}
    outcome = Outcome(repeats=min((len(p["ms"]) for p in points.values()), default=0))
    wrong = [
        f"F={f}: max relative error {p['max_rel_error']:.1e}{'' if p['touch_ok'] else ', touch words differ'}"
        for f, p in points.items()
        if not (p["finite"] and p["max_rel_error"] <= TOLERANCE and p["touch_ok"])
    ]
    detail = "; ".join(wrong) or f"threads {list(CHECKED)} at every F, tolerance {TOLERANCE:.0e}"
    if not outcome.gate("every point's outputs equal the CPU's float32 computation", not wrong, detail):
        return outcome
    spilled = {f: n for f, n in raw.get("local_bytes", {}).items() if n}
    outcome.gate("no kernel spills to local memory", not spilled, f"local bytes per thread: {spilled or 0}")
    lanes = LANES_PER_SM.get(attrs["cc"])
    peak_per_clock = 2 * lanes if lanes else None
    sms, theoretical = attrs["sm_count"], theoretical_gbs(attrs)
    medians: dict[int, tuple[float, float]] = {}
    over_clock, over_bandwidth = [], []
    for f, p in points.items():
        n, flops, gbs = 2 * f, *rates(p, f, raw)
        medians[f] = (statistics.median(flops), statistics.median(gbs))
        outcome.no_host_time(f"the {n} FLOP per load point", p)
        what = f"{n} FLOP per 16-byte load ({f} FMAs on each float4), {intensity(f, raw):.4g} FLOP per byte moved"
        method = str(p.get("method", "gpu-queued"))
        outcome.add(
            Result(f"gflops_{n}flop", round(medians[f][0], 1), "GFLOP/s", f"achieved FP32 rate at {what}; "
                   f"{p.get('reps', 1)} launches a sample, stopped on {p['stopped']} (median)",
                   [round(x, 2) for x in flops], method=method),
            Result(f"gbs_{n}flop", round(medians[f][1], 1), "GB/s", f"DRAM bytes (the buffer read once, the outputs "
                   f"written) per second at {what} (median)", [round(x, 2) for x in gbs], method=method),
            Result(f"intensity_{n}flop", round(intensity(f, raw), 4), "FLOP/B", f"FLOP per byte moved at {what}"),
            *clock_result(f"gflops_{n}flop", p, f"the {n} FLOP per load point"),
        )  # fmt: skip
        clocks = [float(c) for c in p.get("clock_mhz") or []]
        if peak_per_clock and len(clocks) == len(flops):
            best = max(x * 1e3 / (mhz * sms) for x, mhz in zip(flops, clocks, strict=True))
            if best > peak_per_clock * PER_CLOCK_SLACK:
                over_clock.append(f"{n} FLOP per load: {best:.1f} FLOP/clock/SM")
        elif peak_per_clock:
            over_clock.append(f"{n} FLOP per load: no in-kernel clock per sample")
        if theoretical and max(gbs) > theoretical * BANDWIDTH_SLACK:
            over_bandwidth.append(f"{n} FLOP per load: {max(gbs):.0f} GB/s")
    if peak_per_clock:
        outcome.gate(
            "no rate above the FP32 peak per clock × SMs × the clock it ran at (1% for the averaged clock)",
            not over_clock,
            "; ".join(over_clock) or f"peak {peak_per_clock} FLOP/clock/SM",
        )
    if theoretical:
        outcome.gate(
            "no bandwidth above the theoretical (2% for the rounded memory clock)",
            not over_bandwidth,
            "; ".join(over_bandwidth) or f"theoretical {theoretical:.0f} GB/s",
        )
    ridge(outcome, medians, raw, attrs, peak_per_clock)
    return outcome


def theoretical_gbs(attrs: dict[str, Any]) -> float | None:
    """2 (double data rate) × memory clock (kHz × 1000) × bus width (bits) / 8, in GB/s."""
    khz, bits = attrs.get("memory_clock_khz", 0), attrs.get("bus_width_bits", 0)
    return 2 * khz * 1000 * bits / 8 / 1e9 if khz > 0 and bits > 0 else None


def ridge(
    outcome: Outcome,
    medians: dict[int, tuple[float, float]],
    raw: dict[str, Any],
    attrs: dict[str, Any],
    peak_per_clock: int | None,
) -> None:
    """The two plateaus, the ridge where they meet, how close each point came to its roof, and the
    ridge from the attributes."""
    if not medians:
        return
    sms = attrs["sm_count"]
    bandwidth = max(gbs for _, gbs in medians.values())
    compute = max(flops for flops, _ in medians.values())
    ai = {f: intensity(f, raw) for f in medians}
    roof = {f: 100 * medians[f][0] / min(compute, bandwidth * ai[f]) for f in medians}
    worst = min(roof, key=lambda f: roof[f])
    memory_to = max(ai[f] for f in medians if medians[f][1] >= 0.9 * bandwidth)
    compute_from = min(ai[f] for f in medians if medians[f][0] >= 0.9 * compute)
    outcome.add(
        *(Result(f"roof_{2 * f}flop", round(roof[f], 1), "%", f"achieved FLOP/s at {2 * f} FLOP per load over "
                 "its roof, the lower of the compute plateau and the plateau bandwidth × its intensity")
          for f in sorted(medians)),
        Result("bandwidth_plateau_gbs", round(bandwidth, 1), "GB/s", "the highest median GB/s of the sweep: the "
               "memory roof, reached where the kernel is memory-bound"),
        Result("compute_plateau_gflops", round(compute, 1), "GFLOP/s", "the highest median GFLOP/s of the sweep: "
               "the compute roof, reached where the kernel is compute-bound"),
        Result("ridge_flop_per_byte", round(compute / bandwidth, 2), "FLOP/B", "measured ridge point: the compute "
               "plateau over the plateau bandwidth, where the memory-bound line meets the compute roof"),
        Result("memory_bound_to", round(memory_to, 4), "FLOP/B", "the highest intensity whose bandwidth was within "
               "10% of the plateau bandwidth"),
        Result("compute_bound_from", round(compute_from, 4), "FLOP/B", "the lowest intensity whose FLOP/s was "
               "within 10% of the compute plateau"),
        Result("roof_fraction_min", round(roof[worst], 1), "%", f"the least share of its roof a point reached: "
               f"{2 * worst} FLOP per load ({ai[worst]:.4g} FLOP per byte)"),
        Result("threads_launched", raw["threads"], "threads", f"threads in the grid ({BLOCK} per block)"),
        Result("buffer_bytes", raw["buffer_bytes"], "bytes", f"the buffer each launch streams once ({LOADS} float4 "
               f"loads a loop turn per thread, {raw['iters']} turns), at least {BUFFER_L2S} times the "
               f"{attrs['l2_bytes'] >> 20} MiB L2"),
    )  # fmt: skip
    top = raw["points"].get(max(medians)) or raw["points"].get(str(max(medians))) or {}
    clocks = [float(c) for c in top.get("clock_mhz") or []]
    theoretical = theoretical_gbs(attrs)
    if peak_per_clock and clocks:
        at_clock = sms * peak_per_clock * statistics.median(clocks) / 1e3
        outcome.add(
            Result("fp32_peak_gflops_at_clock", round(at_clock, 1), "GFLOP/s", f"SMs ({sms}) × {peak_per_clock} "
                   "FLOP/clock/SM × the median clock of the highest-intensity point"),
            Result("compute_plateau_fraction", round(100 * compute / at_clock, 1), "%", "compute plateau over the "
                   "FP32 peak at the clock it ran at"),
        )  # fmt: skip
    if peak_per_clock and attrs["clock_khz"] and theoretical:
        at_max = sms * peak_per_clock * attrs["clock_khz"] / 1e6
        outcome.add(
            Result("fp32_theoretical_gflops", round(at_max, 1), "GFLOP/s", f"SMs ({sms}) × {peak_per_clock} "
                   "FLOP/clock/SM (lanes per SM: a datasheet figure) × the maximum SM clock (attribute)"),
            Result("theoretical_gbs", round(theoretical, 1), "GB/s", "2 × memory clock (kHz attribute × 1000) × bus "
                   "width (bits attribute) / 8, in 10^9 bytes/s"),
            Result("ridge_theoretical_flop_per_byte", round(at_max / theoretical, 2), "FLOP/B", "ridge from the "
                   "attributes: the theoretical FP32 peak over the theoretical bandwidth"),
            Result("bandwidth_plateau_fraction", round(100 * bandwidth / theoretical, 1), "%", "plateau bandwidth "
                   "over the theoretical"),
        )  # fmt: skip
