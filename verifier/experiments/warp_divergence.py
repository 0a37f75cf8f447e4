"""Warp divergence: lanes of a warp split over 1 … 32 branches, each doing the same work.

Lane l takes branch l mod P. Every branch runs the same number of fused multiply-adds with its
own constants, written as inline PTX so the compiler cannot merge the branches into one path
with looked-up constants; a warp whose lanes take P branches issues all P of them one after the
other. The time per element for each P, and its ratio to P = 1, is the cost of divergence.
Every thread's output is checked against the CPU's float32 computation for the first threads.
Each P is timed queued behind the wait kernel (gpu.py: no host time in a sample), and the kernel
carries the probe: its own span checks every sample and it says the SM clock each P ran at (the
ratios compare P's at the clock each ran at; the descriptions say it).

Predicted on an H200 SXM (132 SMs × 2048 threads resident, 4 schedulers per SM each issuing one
instruction a clock, up to 1980 MHz): with one path the kernel is issue-bound, 4 FMAs and about 3
loop instructions per 4 steps (unroll 4), so 8192 × 7/4 instructions × 33,792 warps / (132 × 4 ×
1.98 GHz) ≈ 0.46 ms per launch, ≈ 0.43 ns per element (0.457 ns before: a 0.5 ms kernel held
little host time); P paths run one after the other, so about P times that (slowdowns ≈ P, a
little under from the shared prologue), 32 paths ≈ 13-14 ns per element.
"""

from __future__ import annotations

import itertools
import struct
from functools import partial
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device
from verifier.experiment import Outcome, clock_note, clock_result, timed_result
from verifier.gpu import PROBE_SOURCE

ID = "warp-divergence"
PURPOSE = "Time per element when a warp's lanes take 1, 2, 4, 8, 16 or 32 distinct branches of equal work"
USES = ("gpu.py", "timing.py")

PATHS = (1, 2, 4, 8, 16, 32)
STEPS, BLOCK, BLOCKS_PER_SM = 8192, 256, 32
CHECKED = 4096
"""Threads whose outputs the CPU recomputes (128 warps: every lane, every branch)."""
TOLERANCE = 1e-5


def constants(branch: int) -> tuple[float, float]:
    """Branch k's multiplier and addend (exact float32 values): x -> x·a + b heads for 8 / (k + 1), slowly
    enough that every step still shows after STEPS, and each branch ends somewhere else."""
    return 1.0 - (branch + 1) * 2.0**-17, 2.0**-14


def _hex(value: float) -> str:
    return "0f" + struct.pack(">f", value).hex().upper()


def _case(branch: int) -> str:
    a, b = constants(branch)
    return (
        f'        case {branch}: _Pragma("unroll 4") for (int i = 0; i < steps; ++i) '
        f'asm volatile("fma.rn.f32 %0, %0, {_hex(a)}, {_hex(b)};" : "+f"(x)); break;'
    )


SOURCE = (
    PROBE_SOURCE + 'extern "C" __global__ void diverge(float* out, int paths, int steps, unsigned long long* probe) {\n'
    "    ProbeMark mark = probe_begin(probe);\n"
    "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    float x = (float)(t % 1024) * 0.0009765625f;\n"
    "    switch ((threadIdx.x & 31) % paths) {\n" + "\n".join(_case(k) for k in range(32)) + "\n    }\n"
    "    out[t] = x;\n"
    "    probe_end(probe, mark);\n"
    "}\n"
)


def expected(paths: int, threads: int, steps: int) -> Any:
    """diverge's output for threads 0 … threads-1, on the CPU (each fused step in float64, rounded)."""
    import numpy as np

    t = np.arange(threads)
    branch = (t % 32) % paths
    a = np.array([constants(k)[0] for k in range(32)])[branch]
    b = np.array([constants(k)[1] for k in range(32)])[branch]
    x = ((t % 1024) * 2.0**-10).astype(np.float32)
    for _ in range(steps):
        x = (x.astype(np.float64) * a + b).astype(np.float32)
    return x


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    grid = device.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT") * BLOCKS_PER_SM
    threads = grid * BLOCK
    raw: dict[str, Any] = {"threads": threads, "cases": {}, "max_rel_error": {}}
    with opened(device) as gpu, gpu.buffer(threads * 4) as out, gpu.probe() as probe:
        fn = gpu.kernel(SOURCE, "diverge")
        for paths in PATHS:
            args = (np.uint64(out), np.int32(paths), np.int32(STEPS), np.uint64(probe))
            gpu.launch(fn, grid, BLOCK, args)
            gpu.sync()
            got = gpu.download(np.zeros(threads, dtype=np.float32), out)[:CHECKED]
            want = expected(paths, CHECKED, STEPS)
            raw["max_rel_error"][paths] = float(np.max(np.abs(got - want) / np.abs(want)))
            raw["cases"][paths] = gpu.time(partial(gpu.launch, fn, grid, BLOCK, args), calls=1, probe=probe).raw()
    return summarise(raw)


def summarise(raw: dict[str, Any]) -> Outcome:
    """Gates and results from the raw numbers (pure: the CPU test feeds it fixture data):
    raw['cases'] holds each branch count's Timed.raw()."""
    import statistics

    cases: dict[int, dict[str, Any]] = raw["cases"]
    outcome = Outcome(repeats=min(len(c["ms"]) for c in cases.values()))
    worst = max(raw["max_rel_error"].values())
    if not outcome.gate(
        "every branch count's outputs equal the CPU's float32 computation",
        worst <= TOLERANCE,
        f"first {CHECKED} threads, worst max relative error {worst:.2e} (tolerance {TOLERANCE:.0e})",
    ):
        return outcome
    per_element = {p: [ms * 1e6 / raw["threads"] for ms in cases[p]["ms"]] for p in PATHS}
    median = {p: statistics.median(v) for p, v in per_element.items()}
    outcome.add(Result("fma_steps_per_thread", STEPS, "", "dependent fma.rn.f32 steps each thread runs in its branch"))
    for p in PATHS:
        c = cases[p]
        outcome.no_host_time(f"the kernel with {p} {'path' if p == 1 else 'paths'}", c)
        description = (
            f"GPU time queued behind a wait kernel ÷ {raw['threads']} threads when lanes take {p} distinct "
            f"branches (median; stopped on {c['stopped']}{clock_note(c)})"
        )
        outcome.add(timed_result(f"ns_per_element_{p}_paths", per_element[p], "ns", description, c, 4, 5))
    for p in PATHS[1:]:
        outcome.add(Result(f"slowdown_{p}_paths", round(median[p] / median[1], 2), "×", f"{p} branches vs 1 (medians)"))
    clocks = [mhz for p in PATHS for mhz in cases[p].get("clock_mhz") or []]
    outcome.add(*clock_result("diverge", {"clock_mhz": clocks}, "the divergence kernels (every branch count)"))
    outcome.gate(
        "more branches never run faster (within 5%)",
        all(median[b] >= median[a] * 0.95 for a, b in itertools.pairwise(PATHS)),
        ", ".join(f"{p}: {median[p]:.4f} ns" for p in PATHS),
    )
    return outcome
