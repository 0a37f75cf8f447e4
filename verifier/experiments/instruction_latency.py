"""Instruction latency and issue rate: how many SM cycles one dependent FP32 FMA (and one integer
IMAD) takes, and how many FMA warp-instructions an SM issues per clock as warps are added.

Latency. One warp in the whole grid runs a chain x = fma(x, a, b) (inline PTX fma.rn.f32, FFMA in
the SASS), each step needing the one before, LAT_UNROLL steps unrolled in a loop; clock64 is read
around each of SEGMENTS + 1 segments of LAT_ITERS × LAT_UNROLL steps (segment 0 brings the code into
the instruction caches and is dropped). Cycles per step is the latency: with one warp there is
nothing else to issue while a step waits. The same for x = x·x + c in 32-bit integers (mad.lo.u32,
IMAD): an integer add chain is not used, as ptxas folds x + c + c into one instruction. The clock
reads and the loop cost about 50 cycles a segment of ~33,000: 0.2%. The launch's clock64 cycles
over its %globaltimer ns give the SM clock, for the latency in ns.

Issue rate. One block per SM (verifier/sm_rate.py: the block takes over half the SM's shared
memory, so the SM holds no other), of W warps (1, 2, 4, 8, 16, 32), each thread running C
independent FMA chains (1, 2, 4), BODY FMAs per thread per loop turn. Each block counts the clock64
cycles of its loop between two barriers: FMA warp-instructions per clock on its SM = W × ITERS ×
BODY ÷ cycles, the median over SMs per launch, with no host time and no launch start or drain in
it. An SM has 4 sub-partitions, each with one warp scheduler that issues at most one warp-
instruction per clock (the H100 whitepaper and the CUDA Programming Guide, datasheet figures), so at
most 4 per clock per SM; FFMA can reach it on Hopper because each sub-partition has 32 FP32 lanes.

Predicted on an H200 SXM (132 SMs, 1980 MHz maximum). Latency: ≈ 4 cycles per FFMA (a lead: public
microbenchmarks of Volta to Hopper report 4), ≈ 2 ns at 1980 MHz; IMAD ≈ 4-5 cycles. Issue rate:
a scheduler with k chains in flight issues min(1, k ÷ 4) per clock, so rate ≈ min(4 × 256/259,
W × C ÷ 4) (warps spread over the 4 schedulers; the 3 loop instructions per 256 FMAs take issue
slots): 1 chain: 0.25, 0.5, 1, 2, ≈ 3.95, ≈ 3.95 for 1 … 32 warps (saturated from 16 warps, the
latency × 4 schedulers); 2 chains saturate from 8 warps, 4 chains from 4. The 1-warp rate ≈ 1 ÷
the latency. Every figure here is a count per SM clock: the clock frequency does not enter it.
"""

from __future__ import annotations

import itertools
import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device
from verifier.experiment import Outcome, clock_result, median_result
from verifier.issue_kernels import (
    BODY,
    C_IMAD,
    CHAINS,
    ITERS,
    LAT_ITERS,
    LAT_UNROLL,
    SEGMENTS,
    SOURCE,
    A,
    B,
    checked_threads,
    expected_fma_chain,
    expected_imad_chain,
    fma_steps,
    issue_starts,
)

ID = "instruction-latency"
PURPOSE = "Dependent FMA and IMAD latency in SM cycles, and FMA warp-instructions issued per clock per SM against warps"
USES = ("gpu.py", "timing.py", "sm_rate.py", "issue_kernels.py", "sass.py")

LAT_LAUNCHES = 3
"""Launches of each one-warp chain (SEGMENTS timed segments each)."""
WARPS = (1, 2, 4, 8, 16, 32)
"""Warps per SM of the issue-rate blocks (one block per SM), each with CHAINS chains per thread."""
SCHEDULERS_PER_SM = {"7.0": 4, "7.2": 4, "7.5": 4, "8.0": 4, "8.6": 4, "8.7": 4, "8.9": 4, "9.0": 4}
"""Warp schedulers (sub-partitions) per SM, each issuing at most one warp-instruction per clock: NVIDIA's
architecture whitepapers (Volta to Hopper) and the CUDA C++ Programming Guide; no attribute says it."""
LAT_TOLERANCE = 1e-5
ISSUE_TOLERANCE = 1e-5
PER_CLOCK_SLACK = 1.01


def issue_name(warps: int, chains: int) -> str:
    return f"issue_per_clock_{warps}_warps" + ("" if chains == 1 else f"_{chains}_chains")


def _chain(gpu: Any, fn: Any, dtype: Any, params: tuple[Any, ...]) -> dict[str, Any]:
    """LAT_LAUNCHES launches of one warp's chain: cycles per step of each timed segment, the clock."""
    import numpy as np

    steps = LAT_ITERS * LAT_UNROLL
    found: dict[str, Any] = {"cycles": [], "clock_mhz": []}
    with gpu.buffer(32 * 4) as out, gpu.buffer((3 + SEGMENTS) * 8) as log:
        args = (np.uint64(out), np.uint64(log), np.int32(LAT_ITERS), np.int32(SEGMENTS + 1), *params)
        for _ in range(LAT_LAUNCHES):
            gpu.launch(fn, 1, 32, args)
            gpu.sync()
            words = [int(w) for w in gpu.download(np.zeros(3 + SEGMENTS, dtype=np.uint64), log)]
            found["cycles"] += [w / steps for w in words[3:]]
            if words[1]:
                found["clock_mhz"].append(1000 * words[0] / words[1])
        found["got"] = gpu.download(np.zeros(32, dtype=dtype), out)
    return found


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.cuda import compile_source
    from verifier.gpu import opened
    from verifier.sass import disassemble
    from verifier.sm_rate import allow_shared, measure, one_block_shared

    attrs = device.sm_facts()
    sms = attrs["sm_count"]
    shared = one_block_shared(device)
    raw: dict[str, Any] = {"issue": {}}
    got: dict[tuple[int, int], Any] = {}
    with opened(device) as gpu:
        image = compile_source(SOURCE, "instruction_latency.cu", gpu.arch).image
        module, _ = device.load(image)
        fns = {n: device.function(module, n) for n in ("fma_chain", "imad_chain", *(f"fma_issue_{c}" for c in CHAINS))}
        raw["fma"] = _chain(gpu, fns["fma_chain"], np.float32, (np.float32(A), np.float32(B)))
        raw["imad"] = _chain(gpu, fns["imad_chain"], np.uint32, (np.uint32(C_IMAD),))
        with gpu.buffer(sms * 1024 * max(CHAINS) * 4) as out, gpu.buffer(sms * 16) as blocks, gpu.probe() as probe:
            args = (np.uint64(out), np.uint64(blocks), np.int32(ITERS), np.float32(A), np.float32(B), np.uint64(probe))
            for c in CHAINS:
                allow_shared(gpu, fns[f"fma_issue_{c}"], shared)
                for w in WARPS:
                    found = measure(gpu, fns[f"fma_issue_{c}"], sms, 32 * w, args, shared, blocks, probe)
                    values = gpu.download(np.zeros(sms * 32 * w * c, dtype=np.float32), out).reshape(-1, c)
                    got[(w, c)] = values[checked_threads(w, sms)]
                    raw["issue"][(w, c)] = found
    raw["fma"]["max_rel_error"] = float(np.max(np.abs(raw["fma"].pop("got") / expected_fma_chain() - 1)))
    raw["imad"]["mismatches"] = int(np.sum(raw["imad"].pop("got").astype(np.uint64) != expected_imad_chain()))
    for c in CHAINS:  # one CPU walk per chain count, over the checked threads of every warp count
        starts = np.concatenate([issue_starts(checked_threads(w, sms), c) for w in WARPS])
        want = fma_steps(starts, ITERS * BODY // c)
        have = np.concatenate([got[(w, c)] for w in WARPS])
        raw["issue_error"] = max(raw.get("issue_error", 0.0), float(np.max(np.abs(have - want) / np.abs(want))))
        raw["issue_finite"] = raw.get("issue_finite", True) and bool(np.all(np.isfinite(have)))
    raw["sass"] = {"fma_chain": disassemble(image, "fma_chain"), "imad_chain": disassemble(image, "imad_chain")}
    return summarise(raw, attrs)


def summarise(raw: dict[str, Any], attrs: dict[str, Any]) -> Outcome:
    """Gates and results from the raw numbers (pure: the CPU test feeds it fixture data): raw['fma'] and
    raw['imad'] hold each chain's cycles per step and clocks, raw['issue'][(warps, chains)] what
    sm_rate.measure returned, and the correctness figures."""
    launches = [len(c["cycles"]) for c in raw["issue"].values()]
    outcome = Outcome(repeats=min([LAT_LAUNCHES, *launches]))
    fma, imad = raw["fma"], raw["imad"]
    detail = f"32 lanes each: FMA max relative error {fma['max_rel_error']:.2e} (tolerance {LAT_TOLERANCE:.0e}), "
    detail += f"IMAD lanes differing {imad['mismatches']}"
    ok = fma["max_rel_error"] <= LAT_TOLERANCE and imad["mismatches"] == 0
    if not outcome.gate("the dependent FMA and IMAD chains end where the CPU's do", ok, detail):
        return outcome
    _latency(outcome, raw)
    detail = f"max relative error {raw['issue_error']:.2e} (tolerance {ISSUE_TOLERANCE:.0e})"
    ok = raw["issue_finite"] and raw["issue_error"] <= ISSUE_TOLERANCE
    if outcome.gate("the issue-rate kernels' FMA chains equal the CPU's float32 computation", ok, detail):
        _issue(outcome, raw, attrs)
    return outcome


def _latency(outcome: Outcome, raw: dict[str, Any]) -> None:
    from verifier.sass import results

    clocks = raw["fma"]["clock_mhz"] + raw["imad"]["clock_mhz"]
    mhz = statistics.median(clocks) if clocks else 0.0
    for name, what in (("fma", "fma.rn.f32 (FFMA)"), ("imad", "mad.lo.u32 (IMAD)")):
        cycles = raw[name]["cycles"]
        description = (
            f"SM cycles (clock64) per step of one warp's dependent {what} chain: {len(cycles)} segments of "
            f"{LAT_ITERS * LAT_UNROLL} steps over {LAT_LAUNCHES} launches (median)"
        )
        outcome.add(median_result(f"{name}_latency_cycles", cycles, "cycles", description, 2, 3, "in-kernel"))
    if mhz:
        ns = statistics.median(raw["fma"]["cycles"]) / mhz * 1000
        what = "fma_latency_cycles at latency_clock (the SM clock the chains ran at)"
        outcome.add(Result("fma_latency_ns", round(ns, 3), "ns", what, method="in-kernel"))
    outcome.add(*clock_result("latency", {"clock_mhz": clocks}, "the one-warp chains (one sample per launch)"))
    dumps = raw.get("sass", {})
    counts = []
    for kernel, opcode in (("fma_chain", "FFMA"), ("imad_chain", "IMAD")):
        if kernel in dumps:
            found = results(kernel, kernel, opcode, dumps[kernel])
            outcome.add(*found)
            counts += [int(str(r.value)) for r in found if r.name.endswith("_sass_count")]
    if len(counts) == 2:
        outcome.gate(
            "each chain kernel's SASS holds its unrolled chain of FFMA or IMAD instructions",
            min(counts) >= LAT_UNROLL,
            f"FFMA {counts[0]}, IMAD {counts[1]}; {LAT_UNROLL} steps unrolled",
        )


def _issue(outcome: Outcome, raw: dict[str, Any], attrs: dict[str, Any]) -> None:
    from verifier.sm_rate import one_per_sm, rates

    sms = attrs["sm_count"]
    checks = [one_per_sm(raw["issue"][k], sms) for k in sorted(raw["issue"])]
    outcome.gate("one issue-rate block ran on each SM in every launch", all(ok for ok, _ in checks), checks[0][1])
    median: dict[tuple[int, int], float] = {}
    best = 0.0
    for c in CHAINS:
        for w in WARPS:
            found = raw["issue"][(w, c)]
            samples = rates(found, w * ITERS * BODY)
            median[(w, c)], best = statistics.median(samples), max(best, *samples)
            outcome.add(
                Result(
                    issue_name(w, c),
                    round(median[(w, c)], 3),
                    "warp-instructions/clock/SM",
                    f"FFMA warp-instructions issued per SM clock per SM with {w} {'warp' if w == 1 else 'warps'} "
                    f"per SM, {c} independent {'chain' if c == 1 else 'chains'} per thread: clock64 cycles of each "
                    f"SM's block, median over SMs, median of {len(samples)} launches",
                    [round(s, 4) for s in samples],
                    method="in-kernel",
                )
            )
    clocks = [m for found in raw["issue"].values() for m in found.get("clock_mhz", [])]
    outcome.add(
        Result("fma_steps_per_thread", ITERS * BODY, "", "FMAs each thread of an issue-rate block runs"),
        *clock_result("issue", {"clock_mhz": clocks}, "the issue-rate kernels (every warp and chain count)"),
    )
    ones = [median[(w, 1)] for w in WARPS]
    enough = next(w for w in WARPS if median[(w, 1)] >= 0.9 * max(ones))
    outcome.add(
        Result(
            "warps_to_saturate",
            enough,
            "warps/SM",
            "fewest warps per SM, one chain each, whose issue rate is within 10% of the best one-chain rate",
        )
    )
    for c in CHAINS:
        pairs = [(median[(a, c)], median[(b, c)]) for a, b in itertools.pairwise(WARPS)]
        outcome.gate(
            f"with {c} chain(s) per thread, more warps never issue less (within 5%)",
            all(after >= 0.95 * before for before, after in pairs),
            ", ".join(f"{w}: {median[(w, c)]:.3f}" for w in WARPS),
        )
    schedulers = SCHEDULERS_PER_SM.get(attrs["cc"])
    if schedulers is None:
        outcome.add(Result("peak_issue_note", f"no scheduler count for compute capability {attrs['cc']}", "", ""))
        return
    outcome.add(
        Result(
            "schedulers_per_sm",
            schedulers,
            "schedulers/SM",
            "warp schedulers (SM sub-partitions) per SM: NVIDIA's architecture whitepapers (a datasheet figure)",
        ),
        Result(
            "peak_issue_per_clock",
            schedulers,
            "warp-instructions/clock/SM",
            "schedulers per SM × one warp-instruction per scheduler per clock (a datasheet figure)",
        ),
        Result("issue_best_fraction_of_peak", round(100 * max(median.values()) / schedulers, 1), "%", "best ÷ peak"),
    )
    outcome.gate(
        "FMA warp-instructions per clock per SM are at most one per scheduler per clock (within 1%)",
        best <= schedulers * PER_CLOCK_SLACK,
        f"best sample {best:.3f} per clock per SM; {schedulers} schedulers",
    )
