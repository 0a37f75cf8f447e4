"""Claims as a checklist (issue 29, part 4): the sentence, a mark and on how many cards of which GPU
model it holds; the condition and the values folded in a <details> that works without JavaScript.
Issue 38: it counts cards; with one card it says one card, never 'every'; values that no one card
measured together are said to come from several cards."""

from __future__ import annotations

import pytest

from cudagloss.site.views import ClaimNode, ClaimView

A, B, C = (ClaimNode("NVIDIA H200", f"h200-{n}", "x = 1 ms < 2") for n in ("a", "b", "c"))


@pytest.mark.parametrize(
    ("view", "mark", "verdict"),
    [
        (ClaimView("s", "h", (A,), (), ""), "✓", "Holds on the one H200 card that measured it (h200-a)"),
        (ClaimView("s", "h", (A, B), (), ""), "✓", "Holds on every card that measured it: 2 H200 cards"),
        (ClaimView("s", "h", (A,), (B,), ""), "✗", "Holds on 1 of 2 H200 cards; does not hold on h200-b"),
        (
            ClaimView("s", "h", (A, B), (), "", (("h200-c", "lacks e.x"),)),
            "✓",
            "Holds on 2 of 3 H200 cards; not judged on h200-c",
        ),
        (
            ClaimView("s", "h", (A, ClaimNode("NVIDIA B200", "b200", "")), (), ""),
            "✓",
            "Holds on every card that measured it: 2 cards",
        ),
        (
            ClaimView("s", "h", (ClaimNode("NVIDIA H200", "h200-a + h200-b", ""),), (), ""),
            "✓",
            "Holds on the values of 2 H200 cards taken together (h200-a, h200-b): no one card measured them all",
        ),
        (ClaimView("s", "h", (), (), "no card has measured e.x"), "?", "Not verified"),
    ],
)
def test_a_claim_reads_as_a_checked_line(view: ClaimView, mark: str, verdict: str) -> None:
    assert (view.mark, view.verdict) == (mark, verdict)
