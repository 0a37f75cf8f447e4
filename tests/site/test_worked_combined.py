"""A worked example whose values no one card measured is worked out on combinations of one GPU
model's cards (issue 38): the page counts those as combinations of so many cards, never as cards
(two combinations of three cards are not '2 cards')."""

from __future__ import annotations

from pathlib import Path

from markupsafe import Markup

from cudagloss.load.measurements import load_measurements
from cudagloss.model.measurement import Gate, Measurement, Result, record
from cudagloss.model.term import MeasurementCitation, Term
from cudagloss.model.worked import Step, WorkedExample
from cudagloss.model.workings import work
from cudagloss.site.worked import render


def write(folder: Path, experiment: str, node: str, result: Result) -> None:
    provenance = {
        "node": node,
        "gpu_name": "Example GPU",
        "gpu_uuid": f"GPU-{node}-0000",
        "recorded_at": "2026-12-01T10:00:00+00:00",
    }
    record(Measurement(experiment, "Limits", "sha256:now", "ok", provenance, [Gate("ok", True)], [result]), folder)


def test_combinations_of_cards_are_not_counted_as_cards(tmp_path: Path) -> None:
    write(tmp_path, "ex", "c1", Result("a", 2, "blocks/SM"))
    write(tmp_path, "ex", "c2", Result("a", 2, "blocks/SM"))
    write(tmp_path, "ey", "c3", Result("b", 3, "blocks/SM"))
    term = Term(
        name="t",
        title="What is it?",
        definition="A term.",
        section="s",
        body="A body.",
        measurements=[MeasurementCitation("ex"), MeasurementCitation("ey")],
        worked=[WorkedExample("example", "How many?", [Step("Both", value="ex.a + ey.b")])],
    )
    measurements, problems = load_measurements(tmp_path)
    assert problems == []
    working = work(term, 0, measurements, [])
    assert [n.node for n in working.nodes] == ["c1 + c3", "c2 + c3"] and not working.errors
    page = str(render(working, lambda ref, nodes: Markup("x")))
    assert "2 Example GPU cards" not in page
    assert "2 combinations of 3 Example GPU cards (c1 + c3, c2 + c3): no one card measured every value" in page
