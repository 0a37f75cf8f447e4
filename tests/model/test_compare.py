"""Mann-Whitney U and the timing rule, against published values and against brute force."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from fractions import Fraction

import pytest

from cudagloss.model import compare
from cudagloss.model.compare import compare_timings, mann_whitney

MALES = [19, 22, 16, 29, 24]
FEMALES = [20, 11, 17, 12]
"""The example in scipy.stats.mannwhitneyu's documentation (ages of 9 subjects)."""


def enumerated_p(x: list[float], y: list[float]) -> float:
    """The two-sided exact p by brute force: U of x over every way to split the pooled values."""
    pooled = [*x, *y]

    def u_of(first: list[float], second: list[float]) -> float:
        return sum((a > b) + 0.5 * (a == b) for a in first for b in second)

    observed = u_of(x, y)
    us = []
    for chosen in itertools.combinations(range(len(pooled)), len(x)):
        rest = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        us.append(u_of([pooled[i] for i in chosen], rest))
    lower = sum(u <= observed for u in us) / len(us)
    upper = sum(u >= observed for u in us) / len(us)
    return min(1.0, 2 * min(lower, upper))


def test_the_exact_test_gives_scipys_documented_values() -> None:
    test = mann_whitney(MALES, FEMALES)
    assert (test.u, test.method) == (17.0, "exact")
    assert test.p == pytest.approx(0.1111111111111111, abs=1e-15)  # scipy: method="exact"
    assert mann_whitney(FEMALES, MALES).u == 3.0  # U1 + U2 = n1 * n2


def test_the_normal_approximation_gives_scipys_documented_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compare, "EXACT_MAX", 0)
    test = mann_whitney(MALES, FEMALES)
    assert test.method == "normal"
    assert test.p == pytest.approx(0.11134688653314041, rel=1e-12)  # scipy: method="asymptotic"


@pytest.mark.parametrize(
    ("x", "y"),
    [
        ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]),  # fully apart: the smallest p, 2/252
        ([1, 3, 5, 7, 9], [2, 4, 6, 8, 10]),
        ([1, 2, 2, 3, 3], [2, 3, 3, 4, 5]),  # ties, counted exactly by their mean ranks
        ([4.0, 4.0, 4.0], [4.0, 4.0]),  # all tied
        ([0.31, 0.29, 0.40, 0.35, 0.33], [0.34, 0.30, 0.41, 0.28, 0.36]),
        ([5], [1, 2, 3]),
    ],
)
def test_the_exact_p_is_the_enumerated_one(x: list[float], y: list[float]) -> None:
    assert mann_whitney(x, y).p == pytest.approx(enumerated_p(x, y), abs=1e-12)


def enumerated_fraction(x: list[float], y: list[float]) -> Fraction:
    """enumerated_p as an exact fraction: U of x against U of every split of the pooled values."""
    pooled = [*x, *y]

    def u_of(first: list[float], second: list[float]) -> int:  # 2U, so an integer
        return sum(2 * (a > b) + (a == b) for a in first for b in second)

    observed = u_of(x, y)
    us = []
    for chosen in itertools.combinations(range(len(pooled)), len(x)):
        us.append(u_of([pooled[i] for i in chosen], [pooled[i] for i in range(len(pooled)) if i not in chosen]))
    lower, upper = sum(u <= observed for u in us), sum(u >= observed for u in us)
    return min(Fraction(1), Fraction(2 * min(lower, upper), len(us)))


def samples(rng: random.Random, n1: int, n2: int, tied: bool) -> tuple[list[float], list[float]]:
    """n1 and n2 values: distinct, or drawn from three values so that most are tied."""
    if tied:
        return [rng.choice([1.5, 2.0, 3.25]) for _ in range(n1)], [rng.choice([1.5, 2.0, 3.25]) for _ in range(n2)]
    pooled = rng.sample(range(1000), n1 + n2)
    return [v / 7 for v in pooled[:n1]], [v / 7 for v in pooled[n1:]]


SIZES = [(n1, n2, tied) for n1 in range(1, 8) for n2 in range(1, 8) for tied in (False, True)]


@pytest.mark.parametrize(("n1", "n2", "tied"), SIZES)
def test_the_exact_p_is_the_enumerated_fraction(n1: int, n2: int, tied: bool) -> None:
    # Exact equality: the float of the enumerated fraction, so a count off by one anywhere fails.
    rng = random.Random(n1 * 100 + n2 * 10 + tied)
    for _ in range(3):
        x, y = samples(rng, n1, n2, tied)
        assert mann_whitney(x, y).p == float(enumerated_fraction(x, y)), (x, y)


@pytest.mark.parametrize(("n1", "n2", "tied"), SIZES)
def test_the_remembered_rank_sum_distribution_is_the_enumerated_one(n1: int, n2: int, tied: bool) -> None:
    rng = random.Random(n1 * 100 + n2 * 10 + tied + 1)
    x, y = samples(rng, n1, n2, tied)
    pooled = [*x, *y]
    # Doubled midrank, counted without compare._midranks: 2 * (values below) + (values equal) + 1.
    doubled = [2 * sum(w < v for w in pooled) + sum(w == v for w in pooled) + 1 for v in pooled]
    counts = Counter(sum(chosen) for chosen in itertools.combinations(doubled, n1))
    below = compare._rank_sum_counts(tuple(sorted(doubled)), n1)
    assert below[0] == 0 and below[-1] == math.comb(n1 + n2, n1)
    assert {s: below[s + 1] - below[s] for s in range(len(below) - 1) if below[s + 1] != below[s]} == counts


def test_tied_and_untied_samples_of_the_same_sizes_do_not_share_a_distribution() -> None:
    # The distribution is remembered by its ranks, not its sizes alone: asked first of untied
    # samples, then of tied ones of the same sizes (and back), each gets its own, in any order.
    compare._rank_sum_counts.cache_clear()
    untied = ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0])
    tied = ([1.0, 1.0, 3.0], [3.0, 3.0, 6.0, 6.0])
    for x, y in [untied, tied, untied, tied]:
        assert mann_whitney(x, y).p == float(enumerated_fraction(x, y))
    assert compare._rank_sum_counts.cache_info().hits == 2
    assert mann_whitney(*untied).p == 2 / 35 and mann_whitney(*tied).p != 2 / 35
    compare._rank_sum_counts.cache_clear()
    for x, y in [tied, untied]:
        assert mann_whitney(x, y).p == float(enumerated_fraction(x, y))


def test_five_against_five_fully_apart_is_p_2_of_252() -> None:
    assert mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]).p == pytest.approx(2 / 252)


def test_above_twenty_values_the_normal_approximation_is_close_to_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(14)
    x = [rng.gauss(10, 2) for _ in range(25)]
    y = [rng.gauss(11.5, 2) for _ in range(25)]
    approximate = mann_whitney(x, y)
    assert approximate.method == "normal"
    monkeypatch.setattr(compare, "EXACT_MAX", 25)
    exact = mann_whitney(x, y)
    assert exact.method == "exact"
    assert approximate.p == pytest.approx(exact.p, rel=0.1)  # continuity-corrected: a little conservative


def test_an_empty_sample_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one value"):
        mann_whitney([], [1.0])


def test_a_timing_is_slower_or_faster_only_when_significant_and_at_least_ten_percent() -> None:
    old = [20.1, 20.4, 19.8, 20.0, 20.3]
    slower = compare_timings(old, [30.2, 29.9, 30.5, 31.0, 30.1])
    assert slower.verdict == "SLOWER" and slower.test.p == pytest.approx(2 / 252)
    assert slower.change == pytest.approx((30.2 - 20.1) / 20.1)
    assert compare_timings(old, [10.2, 9.9, 10.5, 11.0, 10.1]).verdict == "FASTER"
    # Significant (no overlap) but 5% apart: too small to matter.
    small = compare_timings(old, [21.1, 21.3, 21.2, 21.0, 21.4])
    assert (small.verdict, small.test.p < compare.ALPHA) == ("SAME", True)
    # Medians 40% apart, but the samples overlap: noise.
    noisy = compare_timings([10.0, 30.0, 12.0, 28.0, 11.0], [15.0, 29.0, 16.0, 31.0, 14.0])
    assert (noisy.verdict, noisy.test.p >= compare.ALPHA) == ("SAME", True)
    assert abs(noisy.change) >= compare.MIN_CHANGE


def test_a_zero_median_does_not_divide_by_zero() -> None:
    assert compare_timings([0.0, 0.0], [0.0, 0.0]).change == 0.0
    assert math.isinf(compare_timings([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]).change)
