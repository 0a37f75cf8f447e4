"""Whether two sets of timing samples differ: the rule a re-run's report states for each timing.

The rule (as nvbench's compare and asv's `compare` practise it: a difference must be both
statistically significant and large enough to matter):

    SAME    unless both hold:
            1. the two-sided Mann-Whitney U test on the raw samples gives p < ALPHA (0.05), and
            2. the medians differ by at least MIN_CHANGE (10%) of the smaller one (so the rule
               is the same read either way: a against b, or b against a);
    FASTER  when both hold and the new median is lower (every timing is a duration),
    SLOWER  when both hold and it is higher.

Mann-Whitney is a rank test: it assumes no distribution (timings are skewed by a slow first
process) and one outlier moves it by one rank only. Its p-value is exact, from the permutation
distribution of the first sample's rank sum (ties take their mean rank, so ties are exact too),
while both samples have at most EXACT_MAX values, which most of ours (5 to 20 a timing) do;
above that, the normal approximation with tie and continuity corrections, as
scipy.stats.mannwhitneyu does. With 5 against 5 the smallest possible p is 2/252 = 0.008, so a
real change can pass rule 1.
Standard library only: the GPU node that runs `make verify` has no scipy.

The distribution depends only on the multiset of (doubled, so integer) midranks and the first
sample's size, not on the values: it is counted once per such pair and remembered, and each
comparison then reads its two tails from cumulative counts. Untied samples of the same sizes
share one distribution; tied ones share it with the same pattern of ties. It is counted in
one Python integer that packs every (how many chosen, rank sum) count into its own bit field,
so adding one rank is a shift and an add of the whole table (a few milliseconds at 20 against
20, a tenth of one at 10 against 10). Comparisons are remembered too: a page, its claims and
their explanations ask of the same samples again.
"""

from __future__ import annotations

import functools
import itertools
import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from cudagloss.model.measurement_rules import DURATIONS

ALPHA = 0.05
MIN_CHANGE = 0.10
EXACT_MAX = 20
RULE = (
    f"two-sided Mann-Whitney U on the raw samples, p < {ALPHA:g}, and medians at least "
    f"{MIN_CHANGE:.0%} apart (of the smaller); otherwise SAME"
)

Verdict = Literal["SAME", "FASTER", "SLOWER"]
TIME_UNITS = DURATIONS
"""Units of durations: a lower one is faster. A rate (a unit per second, GB/s) is faster when
higher; any other value is only lower or higher."""


def is_rate(unit: str) -> bool:
    """A unit per second (GB/s, TFLOP/s): higher is faster."""
    return unit.endswith("/s")


@dataclass(frozen=True)
class RankTest:
    """A Mann-Whitney U test: U of the first sample, the two-sided p-value, and how p was found."""

    u: float
    p: float
    method: Literal["exact", "normal"]


@dataclass(frozen=True)
class TimingComparison:
    """The verdict on old against new samples, with what decided it."""

    verdict: Verdict
    old_median: float
    new_median: float
    change: float
    """(new median - old median) / old median."""
    test: RankTest


def _midranks(pooled: Sequence[float]) -> list[float]:
    """Rank of each value (1-based) in pooled order; tied values share their mean rank."""
    order = sorted(range(len(pooled)), key=lambda i: pooled[i])
    ranks = [0.0] * len(pooled)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and pooled[order[end + 1]] == pooled[order[start]]:
            end += 1
        for i in order[start : end + 1]:
            ranks[i] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def _exact_p(doubled: Sequence[int], n1: int, observed: int) -> float:
    """Two-sided p of a rank sum: how many of the ways to choose n1 of the (doubled, so
    integer) ranks give a sum at least as extreme as observed on either side."""
    below = _rank_sum_counts(tuple(sorted(doubled)), n1)
    lower = below[observed + 1]  # sums <= observed
    upper = below[-1] - below[observed]  # sums >= observed
    return min(1.0, 2 * min(lower, upper) / below[-1])


@functools.lru_cache(maxsize=1 << 10)
def _rank_sum_counts(doubled: tuple[int, ...], n1: int) -> tuple[int, ...]:
    """The permutation distribution of the sum of n1 of the sorted doubled ranks, cumulative:
    item s is how many of the C(N, n1) choices sum to less than s (s = 0 .. top + 1).

    One integer holds a table of counts, n1 + 1 rows (how many ranks chosen) by top + 1
    columns (their sum), a field of `width` bytes each: row k, column s at bit
    (k * (top + 1) + s) * 8 * width. Adding a rank r to every choice moves a count one row down
    and r columns on, a left shift; rows past n1 are masked off. A count is below 2 ** N, and
    no sum of k <= n1 ranks exceeds top (the n1 largest), so no field spills into another."""
    width = len(doubled) // 8 + 1
    top = sum(doubled[len(doubled) - n1 :])
    field, row = 8 * width, (top + 1) * 8 * width
    mask = (1 << ((n1 + 1) * row)) - 1
    table = 1  # one way to choose nothing, with sum 0
    for rank in doubled:
        table = (table + (table << (row + rank * field))) & mask
    counts = (table >> (n1 * row)).to_bytes((top + 1) * width, "little")
    fields = (int.from_bytes(counts[i : i + width], "little") for i in range(0, len(counts), width))
    return (0, *itertools.accumulate(fields))


def _normal_p(u: float, n1: int, n2: int, ranks: Sequence[float]) -> float:
    """Two-sided p from the normal approximation with tie and continuity corrections."""
    n = n1 + n2
    ties = sum(t**3 - t for t in Counter(ranks).values())
    variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if variance <= 0:  # every value tied: nothing tells the samples apart
        return 1.0
    z = (abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(variance)
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def mann_whitney(x: Sequence[float], y: Sequence[float]) -> RankTest:
    """The two-sided Mann-Whitney U test of x against y (ValueError if either is empty)."""
    n1, n2 = len(x), len(y)
    if not n1 or not n2:
        raise ValueError("Mann-Whitney needs at least one value in each sample")
    ranks = _midranks([*x, *y])
    rank_sum = sum(ranks[:n1])
    u = rank_sum - n1 * (n1 + 1) / 2
    if max(n1, n2) <= EXACT_MAX:
        return RankTest(u, _exact_p([round(2 * r) for r in ranks], n1, round(2 * rank_sum)), "exact")
    return RankTest(u, _normal_p(u, n1, n2, ranks), "normal")


def compare_timings(old: Sequence[float], new: Sequence[float]) -> TimingComparison:
    """SAME, FASTER or SLOWER by the rule in this module's docstring."""
    return _compare(tuple(old), tuple(new))


@functools.lru_cache(maxsize=1 << 12)
def _compare(old: tuple[float, ...], new: tuple[float, ...]) -> TimingComparison:
    test = mann_whitney(old, new)
    before, after = statistics.median(old), statistics.median(new)
    change = (after - before) / before if before else (0.0 if after == before else math.inf)  # durations: >= 0
    smaller = min(abs(before), abs(after))
    apart = abs(after - before) >= MIN_CHANGE * smaller if smaller else after != before
    verdict: Verdict = "SAME"
    if test.p < ALPHA and apart:
        verdict = "FASTER" if after < before else "SLOWER"
    return TimingComparison(verdict, before, after, change, test)
