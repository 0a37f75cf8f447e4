"""One number inline per GPU model (issue 29, part 1): cards of one model that agree read as one value,
cards that differ as a range with their count, discrete values that differ as differing (never averaged),
with 1, 2 and 12 cards; the page adds "varies by GPU" only where two models' values differ. Issue 38: the
one value of cards that agree is one card's own (the middle one's), never a pooled number no row holds."""

from __future__ import annotations

import pytest

from cudagloss.model.display import agreed, format_value, one_number, short_gpu
from cudagloss.model.measurement import Result

RUNS = [1.0, 1.1, 1.2, 1.05, 1.15]


def timed(median: float, scale: float = 1.0) -> Result:
    return Result("load", median, "ms", samples=[x * scale for x in RUNS])


@pytest.mark.parametrize(
    ("results", "said"),
    [
        ([Result("w", 64, "warps/SM")], "64 warps per SM"),
        ([Result("w", 64, "warps/SM")] * 2, "64 warps per SM"),
        ([Result("w", 64, "warps/SM")] * 12, "64 warps per SM"),
        ([timed(1.1), timed(1.12, 1.02)], "1.1 ms"),  # not shown to differ: the middle card's own value
        ([timed(1.12, 1.02), timed(1.1), timed(1.14, 1.04)], "1.12 ms"),  # three cards: the middle one's
        ([timed(1.1), timed(11.0, 10)], "1.1–11 ms on 2 H200s"),
        ([timed(1.1 * (1 + i / 2), 1 + i / 2) for i in range(12)], "1.1–7.15 ms on 12 H200s"),
        ([Result("g", 1056, "blocks"), Result("g", 1024, "blocks")], "1,056 blocks / 1,024 blocks (differs by card)"),
        ([Result("n", "sm_90"), Result("n", "sm_90a")], "sm_90 / sm_90a (differs by card)"),
        ([Result("w", 64, "warps/SM"), None], "64 warps per SM (not measured on 1 of 2)"),
        ([Result("r", 31.1, "×"), Result("r", 31.9, "×")], "31.1–31.9× on 2 H200s"),
        ([Result("c", 4285.0, "GB/s"), Result("c", 4814.3, "GB/s")], "4,285–4,814 GB/s on 2 H200s"),
        ([Result("l", 345.09, "ns"), Result("l", 345.2, "ns")], "345 ns"),  # apart only past the digits shown
    ],
)
def test_one_models_nodes_read_as_one_phrase(results: list[Result | None], said: str) -> None:
    assert agreed(results, "NVIDIA H200") == said


def test_a_gpu_is_named_as_prose_counts_it() -> None:
    assert (short_gpu("NVIDIA H200"), short_gpu("NVIDIA"), short_gpu("AMD MI300X")) == ("H200", "NVIDIA", "AMD MI300X")


def test_the_one_number_of_cards_that_agree_links_to_the_card_whose_row_holds_it() -> None:
    """Issue 38, part 5: a reader who follows the link finds the number shown on that row."""
    cards = [("NVIDIA H200", timed(1.14, 1.04)), ("NVIDIA H200", timed(1.1)), ("NVIDIA H200", timed(1.12, 1.02))]
    shown = one_number(cards)
    held = cards[shown.first][1]
    assert held is not None and shown.text == format_value(held) == "1.12 ms"
