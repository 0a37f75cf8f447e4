"""The spread of one result across the cards of one GPU model, as a term page shows it."""

from __future__ import annotations

from cudagloss.model.display import spread
from cudagloss.model.measurement import Result


def test_numbers_give_their_range_and_how_far_apart() -> None:
    rows = [Result("copy", 1524.6, "GB/s"), Result("copy", 1341.5, "GB/s"), Result("copy", 1400.0, "GB/s")]
    assert spread(rows) == "1,342 GB/s to 1,525 GB/s (14% apart)"
    assert spread([Result("t", 0.5, "ms"), Result("t", 0.25, "ms")]) == "0.25 ms to 0.5 ms (100% apart)"
    assert (
        spread([Result("c", 4288.2, "GB/s"), Result("c", 4285.0, "GB/s")])
        == "4,285 GB/s to 4,288 GB/s (less than 1% apart)"
    )


def test_equal_values_and_discrete_ones() -> None:
    assert spread([Result("w", 32, "threads"), Result("w", 32, "threads")]) == "the same on every card"
    assert spread([Result("a", True), Result("a", False)]) == "differs: yes, no"
    assert spread([Result("n", "sm_90"), Result("n", "sm_90a")]) == "differs: sm_90, sm_90a"
    assert spread([Result("w", 32, "threads"), Result("w", 32, "lanes")]) == "differs: 32 threads, 32 lanes"


def test_a_card_without_the_value_is_said_not_filled_in() -> None:
    assert spread([Result("copy", 1.0, "GB/s"), None]) == "not measured on every card"
    assert spread([Result("copy", None, "GB/s"), Result("copy", 1.0, "GB/s")]) == "not measured on every card"
    assert spread([Result("z", 0, "B"), Result("z", 4, "B")]) == "0 B to 4 B"  # no percentage of zero
