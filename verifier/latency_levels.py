"""Latency levels found from a pointer-chase curve, not assumed: the footprints to sample, the
rule that cuts the curve into levels, and the results memory-latency writes for the levels and
per SM (its helper; pure Python, so the CPU tests check all of it on fixtures).

The rule (LEVEL_RULE says it in words for the results): take each footprint's median cycles per
load, sorted by footprint. Grow a run from the first point; the next point joins the run when
it lies within JOIN of the run's running median, else the run closes and a new one starts at
that point. A run of fewer than MIN_POINTS points is not a level: its points are transitional
(a ramp between two levels) or noise. Neighbouring runs whose medians differ by less than RISE
are one level (a stray point split it), so levels differ by at least RISE. A level's latency is
the median of its points; the boundary between two levels is the last footprint of one and the
first of the next, with any transitional points between them.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cudagloss.model.measurement import Result
from verifier.experiment import Outcome, clock_result

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
IN_KERNEL = "in-kernel"
JOIN = 0.08
"""A point joins the growing run within 8% of its running median..."""
MIN_POINTS = 3
"""...a run of at least 3 points is a level (a new level must stay up for 3 footprints)..."""
RISE = 0.15
"""...and neighbouring runs less than 15% apart are one level."""
LEVEL_RULE = (
    f"levels from the sorted curve: a point joins the growing run within {JOIN:.0%} of its running median, "
    f"a run of at least {MIN_POINTS} points is a level, neighbouring runs under {RISE:.0%} apart are one level, "
    "and points in no level are transitional"
)

L1_REGION = tuple(k * KIB for k in (8, 16, 32, 48, 64, 96, 128, 160, 192, 224))
"""Up to the SM's L1 + shared memory storage (256 KiB on Hopper), densely."""
BELOW_FINE = (256 * KIB, 384 * KIB, 512 * KIB, MIB, 2 * MIB, 4 * MIB, 8 * MIB, 12 * MIB)
"""A few points past L1, where one level is expected, up to the fine part."""
FINE_POINTS = 30
"""The fine part's step is about L2 / 30 (2 MiB on a 60 MiB L2), whole MiB, from L2 / 4 to 1.6 × L2."""
BEYOND = (128 * MIB, 256 * MIB, GIB)
L1_LEADS = {90: 256 * KIB}
"""L1 + shared memory per SM by compute capability: a lead from NVIDIA's Hopper tuning guide, not
an attribute (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR is shared memory's cap)."""


def footprints(l2: int) -> tuple[int, ...]:
    """Bytes to chase through: dense in L1, sparse to L2 / 4, every ~L2/30 to 1.6 × L2, then far beyond."""
    step = max(1, round(l2 / FINE_POINTS / MIB)) * MIB
    first = -(-l2 // 4 // step) * step
    last = int(1.6 * l2) // step * step
    fine = set(range(first, last + 1, step))
    return tuple(sorted(fine | {s for s in L1_REGION + BELOW_FINE if s < first} | {s for s in BEYOND if s > last}))


def label(size: int) -> str:
    """'8kib', '30mib', '1gib': the size as it appears in result names."""
    if size >= GIB and size % GIB == 0:
        return f"{size // GIB}gib"
    return f"{size // MIB}mib" if size % MIB == 0 else f"{size // KIB}kib"


def pretty(size: float) -> str:
    """'8 KiB', '30 MiB', '31.9 MiB': for descriptions."""
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size:.0f} B"


@dataclass(frozen=True)
class Level:
    """One level of the curve: its footprints (in order) and their latencies."""

    sizes: list[int]
    cycles: list[float]

    @property
    def latency(self) -> float:
        return statistics.median(self.cycles)


def find_levels(points: Sequence[tuple[int, float]]) -> tuple[list[Level], list[int]]:
    """The levels of a curve of (footprint bytes, cycles per load), by the rule of the module
    docstring, and the footprints in no level (transitional or noise)."""
    ordered = sorted(points)
    runs: list[list[tuple[int, float]]] = []
    for size, cycles in ordered:
        running = statistics.median(c for _, c in runs[-1]) if runs else 0.0
        if runs and abs(cycles - running) <= JOIN * running:
            runs[-1].append((size, cycles))
        else:
            runs.append([(size, cycles)])
    levels: list[list[tuple[int, float]]] = []
    for run in (r for r in runs if len(r) >= MIN_POINTS):
        if levels:
            before, now = statistics.median(c for _, c in levels[-1]), statistics.median(c for _, c in run)
            if abs(now - before) < RISE * before:
                levels[-1].extend(run)
                continue
        levels.append(run)
    found = [Level([s for s, _ in lv], [c for _, c in lv]) for lv in levels]
    kept = {s for lv in found for s in lv.sizes}
    return found, [s for s, _ in ordered if s not in kept]


def known_sizes(l2: int, cc: int) -> dict[str, int]:
    """Cache sizes a boundary may be near: the L2 attribute, its half (one of Hopper's two L2
    partitions: a lead), and the L1 + shared storage per SM where L1_LEADS knows it."""
    sizes = {
        "the L2 (CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)": l2,
        "half the L2 (one of two L2 partitions on Hopper: a lead)": l2 // 2,
    }
    if cc in L1_LEADS:
        sizes["the L1 + shared memory storage per SM (256 KiB on Hopper: a lead, not an attribute)"] = L1_LEADS[cc]
    return sizes


def nearest(last: int, first: int, known: dict[str, int]) -> str:
    """Which known size a boundary (last footprint of one level, first of the next) is nearest,
    by ratio to the geometric midpoint of the two, in words."""
    middle = math.sqrt(last * first)
    name, size = min(known.items(), key=lambda kv: abs(math.log(middle / kv[1])))
    return f"nearest known size: {name}, {pretty(size)} ({middle / size:.2f}× it at the midpoint {pretty(middle)})"


def to_ns(cycles: float, mhz: float) -> float:
    """cycles at the clock (MHz) read inside the kernel, in ns (0 where no clock was read)."""
    return round(cycles * 1000 / mhz, 2) if mhz > 0 else 0.0


def level_results(outcome: Outcome, levels: list[Level], loose: list[int], mhz: float, known: dict[str, int]) -> None:
    """The level count, and each level's latency and footprint range, with each boundary's nearest known size."""
    rising = all(a.latency < b.latency for a, b in itertools.pairwise(levels))
    outcome.gate(
        "the curve has more than one latency level, each slower than the one before",
        len(levels) > 1 and rising,
        " < ".join(f"{lv.latency:.0f}" for lv in levels) + " cycles",
    )
    outcome.add(
        Result(
            "levels",
            len(levels),
            "levels",
            f"latency levels found in the cycles-per-load curve ({LEVEL_RULE}); transitional footprints: "
            + (", ".join(pretty(s) for s in loose) or "none"),
        )
    )
    for i, lv in enumerate(levels, 1):
        span = (
            f"level {i} of {len(levels)}: {len(lv.sizes)} footprints, {pretty(lv.sizes[0])} to {pretty(lv.sizes[-1])}"
        )
        if i < len(levels):
            after = levels[i].sizes[0]
            between = [s for s in loose if lv.sizes[-1] < s < after]
            edge = (
                f"; level {i + 1} starts at {pretty(after)} (transitional between: "
                f"{', '.join(pretty(s) for s in between) or 'none'}); {nearest(lv.sizes[-1], after, known)}"
            )
        else:
            edge = "; the slowest level, to the largest footprint in it"
        outcome.add(
            Result(
                f"level_{i}_cycles",
                round(lv.latency, 1),
                "cycles",
                f"{span}: median of their cycles per load",
                [round(c, 2) for c in lv.cycles],
                method=IN_KERNEL,
            ),
            Result(
                f"level_{i}_ns", to_ns(lv.latency, mhz), "ns", f"{span}: at the in-kernel SM clock", method=IN_KERNEL
            ),
            # Boundaries are found from timed points, so a re-run may move one by a footprint: a
            # number derived from samples (a float), not a discrete fact compared as CHANGED.
            Result(f"level_{i}_first", float(lv.sizes[0] // KIB), "KiB", f"smallest footprint of level {i}"),
            Result(f"level_{i}_last", float(lv.sizes[-1] // KIB), "KiB", f"largest footprint of level {i}{edge}"),
        )


def per_sm_results(outcome: Outcome, per_sm: dict[str, Any], sm_count: int, levels: list[Level]) -> None:
    """Minimum, median and maximum over SMs of one block's cycles per load, with the SM ids of the extremes."""
    blocks = sorted(per_sm["blocks"], key=lambda b: b["sm"])
    ids = [b["sm"] for b in blocks]
    outcome.gate(
        "the per-SM chase ran one block on every SM (distinct %smid, as many as SMs)",
        len(set(ids)) == len(ids) == sm_count,
        f"{len(set(ids))} distinct SM ids of {len(ids)} blocks, {sm_count} SMs",
    )
    if not blocks:
        return
    size, mhz = int(per_sm["bytes"]), float(per_sm["clock_mhz"])
    where = next((f"level_{i}" for i, lv in enumerate(levels, 1) if lv.sizes[0] <= size <= lv.sizes[-1]), "no level")
    what = (
        f"one thread per SM chasing its own start in one {pretty(size)} cycle ({per_sm['steps']} timed loads, "
        f"the sweep puts {pretty(size)} in {where})"
    )
    cycles = [float(b["cycles"]) for b in blocks]
    fast, slow = min(blocks, key=lambda b: b["cycles"]), max(blocks, key=lambda b: b["cycles"])
    stats = (("min", fast["cycles"], "fastest SM"), ("median", statistics.median(cycles), "median over SMs"))
    for name, value, words in (*stats, ("max", slow["cycles"], "slowest SM")):
        samples = [round(c, 2) for c in cycles] if name == "median" else []
        outcome.add(
            Result(f"per_sm_cycles_{name}", round(value, 1), "cycles", f"{words}: {what}", samples, method=IN_KERNEL),
            Result(f"per_sm_ns_{name}", to_ns(value, mhz), "ns", f"{words} at the in-kernel clock", method=IN_KERNEL),
        )
    outcome.add(
        # Which SM is fastest moves from run to run among SMs a cycle or two apart: information.
        Result(
            "per_sm_fastest_sm",
            int(fast["sm"]),
            "SM id",
            "%smid of the SM with the fewest cycles per load",
            method="info",
        ),
        Result(
            "per_sm_slowest_sm",
            int(slow["sm"]),
            "SM id",
            "%smid of the SM with the most cycles per load",
            method="info",
        ),
        Result("per_sm_blocks", len(blocks), "SMs", "SMs the per-SM chase measured (one block each)"),
        *clock_result("per_sm", {"clock_mhz": [mhz]}, "the per-SM chase"),
    )
