"""Non-tensor arithmetic rates: FP64, FP16, BF16 and INT32 multiply-adds per SM clock per SM.

fp32_throughput's method, in four more formats (verifier/kernels/arith_chains.py): every thread
of a grid of 32 blocks of 256 per SM runs 8 independent chains of multiply-adds, 16 steps each
per loop turn (DFMA; packed HFMA2 on FP16 and on BF16 pairs; IMAD). Each kind's kernel runs
back to back for WARMUP_MS, so the clock settles where that unit's load lets it, then samples of
SAMPLE_MS or more, each queued behind the wait kernel (gpu.py: no host time in a sample). The
kernels carry the probe: it checks each sample against the kernel's own span and reads the SM
clock they ran at, so each rate is also given per clock per SM: results ÷ time ÷ (SMs × that
clock), a result being one multiply-add (a packed pair gives two), as the CUDA C++ Programming
Guide's throughput table counts them. Every thread's folded output is checked against its twin
with the same start, and the first threads against the CPU, exactly (each fused step rounded
once). What ran is disassembled with cuobjdump where the node has it (verifier/sass.py).

Peaks per clock per SM, datasheet figures for compute capability 9.0: the Programming Guide's
arithmetic instruction throughput table (results per clock per multiprocessor: 64-bit floating
point add/multiply/multiply-add 64; 16-bit floating point 256, counting each half of a packed
pair; 32-bit integer multiply-add 64; 32-bit floating point 128), agreeing with the Hopper
whitepaper's 64 FP64 and 64 INT32 units per SM and its H100 SXM5 peaks (FP16 and BF16 without
Tensor Cores twice FP32, FP64 half of it). The guide's table was not at hand when this was
written (it was recalled, and checked against the whitepaper's rates): PEAKS names the source.

Predicted on an H200 SXM (132 SMs, 1980 MHz maximum): FP64 and INT32 are half-rate units, so a
warp's instruction takes two issue slots of its scheduler and the loop's own 3 instructions hide
in the gaps: about 63-64 per clock per SM (98-100% of 64). Packed FP16 and BF16 issue one warp
instruction per clock per scheduler at the peak, like FFMA, so the loop costs its 3 slots in 131:
about 250 per clock per SM (≈ 97.7%, as fp32-throughput's 250 FLOP/clock/SM). At 1980 MHz: FP64
132 × 63.5 × 2 × 1.98 GHz ≈ 33 TFLOP/s; FP16 and BF16 ≈ 131 TFLOP/s; INT32 ≈ 33 TOPS (an IMAD
counted as two operations). FP64 may settle below the maximum clock (the _clock results say).

Seen compiling for sm_90 without a GPU (NVRTC 13.0, cuobjdump 13): each loop body holds 128 DFMA,
64 HFMA2 + 64 HFMA2.MMA, 64 HFMA2.BF16_V2 + 64 HFMA2.MMA.BF16_V2, and 128 IMAD, beside 3 loop
instructions; no kernel spills, and each uses at most 29 registers (2048 threads fit an SM).
"""

from __future__ import annotations

import math
import statistics
from functools import partial
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check, compile_source
from verifier.experiment import Outcome, clock_result, median_result, timed_result
from verifier.kernels import arith_chains as chains
from verifier.kernels.arith_chains import BLOCK, CHAINS, ITERS, KINDS, STARTS, UNROLL, WAVES, Kind
from verifier.sass import disassemble
from verifier.sass_loop import loop_results
from verifier.targets import Needs

NEEDS = {"verifier/kernels/arith_chains.py:SOURCE": Needs("the FP16 chains' cvt.f16x2.f32", least=80)}
"""Checked by make kernels against NVRTC (verifier/targets.py); declared here, as the kernel module is
part of this experiment's summary key."""

ID = "arithmetic-rates"
PURPOSE = "FP64, FP16, BF16 and INT32 multiply-add throughput per SM clock per SM against the peak per clock"
USES = ("gpu.py", "timing.py", "sass.py", "sass_loop.py", "kernels/arith_chains.py")

WARMUP_MS, SAMPLE_MS = 300.0, 20.0
"""GPU time run before each kind's samples, and per sample (≥ 10 samples: about 0.2 s)."""
CHECKED = (0, 1, 31, 32, 1000, 4095)
PER_CLOCK_SLACK = 1.01
"""A rate per clock may exceed the peak by at most 1%: the clock is an average over blocks."""
PEAKS = {"9.0": {"fp64": 64, "fp16": 256, "bf16": 256, "int32": 64, "fp32": 128}}
"""Results per clock per SM: CUDA C++ Programming Guide, arithmetic instruction throughput table."""
PEAK_SOURCE = (
    "CUDA C++ Programming Guide, arithmetic instruction throughput table, compute capability 9.0 (a datasheet "
    "figure; the H100 whitepaper's units per SM and peak rates agree)"
)
UNIT = "results/clock/SM"
TERA = {"int32": ("tops", "TOPS", "tera integer operations per second, an IMAD counted as two")}
"""The whole-GPU rate's name, unit and words where it is not TFLOP/s (2 FLOP per multiply-add)."""


def steps_per_thread(kind: Kind) -> int:
    """Results one thread computes per launch (a packed pair's two lanes both count)."""
    return ITERS * UNROLL * CHAINS * kind.lanes


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    attrs = device.sm_facts(clock=True)
    sms = attrs["sm_count"]
    grid = sms * WAVES
    threads = grid * BLOCK
    raw: dict[str, Any] = {"threads": threads}
    with opened(device) as gpu, gpu.buffer(threads * 8) as out, gpu.probe() as probe:
        image = compile_source(chains.SOURCE, "arith_chains.cu", gpu.arch).image
        module, _ = device.load(image)
        for kind in KINDS:
            fn = device.function(module, kind.kernel)
            dtype: Any = {"fp64": np.float64, "int32": np.uint32}.get(kind.name, np.float32)
            constants = chains.packed(kind) if kind.lanes == 2 else (kind.a, kind.b)
            args = (
                np.uint64(out),
                np.int32(ITERS),
                *(np.float64(v) if dtype is np.float64 else np.uint32(v) for v in constants),
            )
            check("cuMemsetD32", gpu.drv.cuMemsetD32(out, 0xDEADBEEF, threads * 2))  # every thread must write
            gpu.launch(fn, grid, BLOCK, (*args, np.uint64(0)))
            gpu.sync()
            got = gpu.download(np.zeros(threads, dtype=dtype), out)
            work = partial(gpu.launch, fn, grid, BLOCK, (*args, np.uint64(probe)))
            warmup = max(1, math.ceil(WARMUP_MS / max(gpu.queued(work)[0], 1e-3)))
            timed = gpu.time(work, warmup=warmup, probe=probe, min_ms=SAMPLE_MS)
            twins = bool(np.all(got.reshape(-1, STARTS) == got[:STARTS]))
            raw[kind.name] = timed.raw() | {
                "got": [v.item() for v in got[list(CHECKED)]],
                "want": chains.expected(kind, CHECKED),
                "twins": twins,
                "warmup_launches": warmup,
                "sass": disassemble(image, kind.kernel),
            }
    return summarise(raw, attrs)


def summarise(raw: dict[str, Any], attrs: dict[str, Any]) -> Outcome:
    """Gates and results from the raw numbers (pure: the CPU test feeds it fixture data)."""
    outcome = Outcome(repeats=min(len(raw[k.name]["ms"]) for k in KINDS))
    peaks = PEAKS.get(attrs["cc"])
    outcome.add(
        Result("threads_launched", raw["threads"], "threads", f"threads in each kind's grid ({BLOCK} per block)"),
        Result("steps_per_chain", ITERS * UNROLL, "", f"multiply-add steps per chain per thread ({CHAINS} chains)"),
    )
    if peaks is None:
        outcome.add(Result("peak_note", f"no peak per clock for compute capability {attrs['cc']}", "", "no peak"))
    else:
        outcome.add(Result("fp32_peak_per_clock_per_sm", peaks["fp32"], UNIT, f"FP32 multiply-adds: {PEAK_SOURCE}"))
    for kind in KINDS:
        one_kind(outcome, kind, raw[kind.name], raw["threads"], attrs, peaks)
    return outcome


def one_kind(
    outcome: Outcome,
    kind: Kind,
    data: dict[str, Any],
    threads: int,
    attrs: dict[str, Any],
    peaks: dict[str, int] | None,
) -> None:
    """One format's gates and results."""
    n = kind.name
    correct = data["got"] == data["want"] and data["twins"]
    detail = (
        f"threads {list(CHECKED)}: GPU {data['got']}, CPU {data['want']}; every thread equals its twin: {data['twins']}"
    )
    if not outcome.gate(f"the {n} chains' outputs equal the CPU's, each fused step rounded once", correct, detail):
        return
    outcome.no_host_time(f"the {n} kernel", data)
    results = threads * steps_per_thread(kind)
    name, unit, words = TERA.get(n, ("tflops", "TFLOP/s", "2 FLOP per multiply-add"))
    rates = [2 * results / (ms * 1e-3) / 1e12 for ms in data["ms"]]
    description = (
        f"achieved {kind.what} rate (median; {words}): {threads} threads × {CHAINS} chains × {ITERS * UNROLL} "
        f"steps × {kind.lanes} per step, GPU time queued behind a wait kernel after {data['warmup_launches']} "
        f"warm-up launches; {data.get('reps', 1)} launches a sample, stopped on {data['stopped']}"
    )
    outcome.add(
        timed_result(f"{n}_{name}", rates, unit, description, data, 2, 3),
        *clock_result(n, data, f"the {n} kernel's timed samples, after its warm-up"),
    )
    clocks = [float(c) for c in data.get("clock_mhz") or []]
    if len(clocks) != len(data["ms"]) or not attrs["sm_count"]:
        outcome.gate(f"the {n} rate per clock is at most the peak per clock", False, "no in-kernel clock per sample")
        return
    per = [results / (ms * 1e-3) / (mhz * 1e6) / attrs["sm_count"] for ms, mhz in zip(data["ms"], clocks, strict=True)]
    median = statistics.median(per)
    description = (
        f"achieved {kind.what} results per SM clock per SM: each sample's results per second ÷ "
        f"({attrs['sm_count']} SMs × the SM clock that sample ran at, read inside the kernel) (median)"
    )
    outcome.add(median_result(f"{n}_per_clock_per_sm", per, UNIT, description, 1, 2))
    sass_results(outcome, kind, data.get("sass", {}))
    if peaks is None:
        return
    peak = peaks[n]
    outcome.add(
        Result(f"{n}_peak_per_clock_per_sm", peak, UNIT, f"{kind.what}: {PEAK_SOURCE}"),
        Result(f"{n}_fraction_of_peak_per_clock", round(100 * median / peak, 1), "%", f"median per clock ÷ {peak}"),
    )
    outcome.gate(
        f"the {n} rate per clock is at most the peak per clock (within 1%: the clock is an average)",
        max(per) <= peak * PER_CLOCK_SLACK,
        f"best {max(per):.1f}, median {median:.1f} {UNIT} at {statistics.median(clocks):.0f} MHz; peak {peak}",
    )


def sass_results(outcome: Outcome, kind: Kind, found: dict[str, Any]) -> None:
    """What the loop ran, from the SASS (information: the rates never depend on it)."""
    written = f"{CHAINS * UNROLL} steps a turn in the source"
    outcome.add(*loop_results(kind.name, kind.kernel, kind.mnemonics, found, written))
