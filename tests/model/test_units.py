"""The unit algebra of claims (cudagloss.model.units): reading units as experiments write them,
products and quotients, exact conversion, mismatches, and how a reader reads a unit."""

from __future__ import annotations

from fractions import Fraction

import pytest

from cudagloss.model import units
from cudagloss.model.claim_values import evaluate, explain
from cudagloss.model.claims import ClaimTypeError, Operand, parse

VALUES = {
    "e.one_ms": Operand(1, "ms"),
    "e.thousand_us": Operand(1000, "µs"),
    "e.greek_us": Operand(1000, "μs"),
    "e.two_ms": Operand(2, "ms"),
    "e.warps": Operand(64, "warps/SM"),
    "e.warp_size": Operand(32, "threads/warp"),
    "e.threads": Operand(2048, "threads/SM"),
    "e.blocks": Operand(2048, "blocks/SM"),
    "e.read": Operand(4000, "GB/s"),
    "e.copy": Operand(2000, "GB/s"),
    "e.half": Operand(50, "%"),
    "e.ratio": Operand(0.5),
    "e.speedup": Operand(2, "×"),
    "e.clock": Operand(2000, "MHz"),
    "e.per_clock": Operand(2, "B/clock"),
    "e.cycles": Operand(1000, "cycles"),
    "e.id": Operand(7, "SM id"),
    "e.huge": Operand(1e305, "s"),
    "e.one_ns": Operand(1, "ns"),
    "e.runs_ms": Operand(1.1, "ms", [1.0, 1.05, 1.1, 1.15, 1.2]),
    "e.runs_us": Operand(1100, "µs", [1000, 1050, 1100, 1150, 1200]),
}


def holds(text: str) -> bool:
    return evaluate(parse(text), lambda e, r: VALUES[f"{e}.{r}"])


def test_units_are_read_as_products_of_symbols_with_plurals_folded() -> None:
    assert units.read("threads/SM") == units.read("thread/SMs")
    assert units.read("B/clock/SM").dims == (("B", 1), ("SM", -1))  # a clock cycle counts ticks: no dimension
    assert units.read("GB/s").scale == 10**9 and units.read("KiB").scale == 1024
    assert units.read("ms²") == units.read("ms^2") == units.read("ms·ms") == units.read("ms*ms")
    assert units.read("B/B").dims == () and str(units.read("B/B")) == "B/B"  # shown as the experiment wrote it
    assert units.read("%").scale == Fraction(1, 100) and units.read("").dims == ()
    assert units.read("SM id").dims == (("SM id", 1),)  # unknown: a dimension of its own
    assert units.read("a//b").dims == (("a//b", 1),)


def test_products_and_quotients_multiply_units() -> None:
    assert holds("e.warps * e.warp_size == e.threads")  # warps/SM × threads/warp = threads/SM
    assert holds("e.read / e.copy == 2 and e.read / e.copy == e.speedup")  # a rate over a rate: no unit
    assert holds("e.one_ms * e.two_ms < e.two_ms * e.two_ms")  # ms² with ms²
    assert holds("e.per_clock * e.clock == 4000 and e.per_clock * e.clock * 1000 == e.read")  # B/clock × MHz is B/s
    assert holds("e.cycles / e.clock == e.one_ms / 2000")  # cycles at a clock rate is a time: 0.5 µs
    with pytest.raises(ClaimTypeError, match=r"\(ms²\) compared with e\.two_ms \(ms\)"):
        holds("e.one_ms * e.one_ms < e.two_ms")
    with pytest.raises(ClaimTypeError, match=r"\(no unit\) compared with e\.one_ms \(ms\)"):
        holds("e.read / e.copy < e.one_ms")
    with pytest.raises(ClaimTypeError, match=r"\(threads/SM\) compared with e\.blocks \(blocks/SM\)"):
        holds("e.warps * e.warp_size == e.blocks")
    assert explain(parse("1 / e.two_ms > 0"), lambda e, r: VALUES[f"{e}.{r}"]) == "1 / 2 ms = 0.5 1/ms > 0"


def test_sums_and_comparisons_convert_exactly_between_scales() -> None:
    assert holds("e.one_ms == e.thousand_us and e.thousand_us == e.one_ms and e.greek_us == e.one_ms")
    assert holds("e.one_ms + e.thousand_us == e.two_ms and max(e.thousand_us, e.one_ms) == 1000")
    assert holds("e.half == e.ratio and e.half == 50 and e.ratio < e.speedup")  # 50% is a half
    assert holds("e.one_ms / e.thousand_us == 1")  # ms / µs folds its scale into the number
    assert holds("not differ(e.runs_ms, e.runs_us)")  # the same runs, in ms and in µs
    with pytest.raises(ClaimTypeError, match="out of range in another unit"):
        holds("e.one_ns < e.huge")  # 1e305 s is more ns than a double holds


def test_a_number_written_in_a_claim_takes_the_unit_it_meets_but_a_measured_one_does_not() -> None:
    assert holds("e.one_ms < 2 and 2 * e.one_ms == e.two_ms and e.two_ms - 1 == e.one_ms")
    with pytest.raises(ClaimTypeError, match=r"e\.ratio \(no unit\) compared with e\.one_ms \(ms\)"):
        holds("e.ratio < e.one_ms")
    with pytest.raises(ClaimTypeError, match=r"e\.id \(SM id\) compared with e\.warps \(warps/SM\)"):
        holds("e.id < e.warps")


@pytest.mark.parametrize(
    ("unit", "many", "one"),
    [
        ("threads/SM", "threads per SM", "thread per SM"),
        ("registers/thread", "registers per thread", "register per thread"),
        ("entries", "entries", "entry"),
        ("GB/s", "GB/s", "GB/s"),
        ("B/clock/SM", "B/clock/SM", "B/clock/SM"),
        ("%", "%", "%"),
    ],
)
def test_a_reader_reads_a_count_per_counted_thing_in_words(unit: str, many: str, one: str) -> None:
    assert (units.spoken(unit), units.spoken(unit, one=True)) == (many, one)
