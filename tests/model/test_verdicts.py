"""Claims judged node by node on real measurement files: a node whose value has another type fails
there and says why, a value in two units is refused, a node that lacks a value is named, and the
noise rule reads the same either way round."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudagloss.load.measurements import load_measurements
from cudagloss.model.compare import compare_timings
from cudagloss.model.measurement import Gate, Measurement, Result, record
from cudagloss.model.measurements import CitationError
from cudagloss.model.term import Claim, MeasurementCitation, Term
from cudagloss.model.verdicts import judge

TERM = Term(
    name="warp",
    title="What is a warp?",
    definition="A group of threads.",
    section="basics",
    body="A warp.",
    measurements=[MeasurementCitation("warp-size")],
)


def write(folder: Path, node: str, *results: Result) -> None:
    provenance = {"node": node, "gpu_name": "Example GPU", "recorded_at": "2026-12-01T10:00:00+00:00"}
    record(
        Measurement("warp-size", "Read it", "sha256:now", "ok", provenance, [Gate("ok", True)], list(results)), folder
    )


def verdict(folder: Path, holds: str):  # type: ignore[no-untyped-def]
    measurements, problems = load_measurements(folder)
    assert problems == []
    return judge(TERM, Claim("It holds", holds), measurements)


def test_a_value_of_another_type_on_one_node_fails_the_claim_there_only(tmp_path: Path) -> None:
    write(tmp_path, "node-a", Result("warp_size", 32, "threads"))
    write(tmp_path, "node-b", Result("warp_size", "thirty-two", "threads"))
    v = verdict(tmp_path, "warp-size.warp_size >= 32")
    assert [(n.node, n.holds) for n in v.nodes] == [("node-a", True), ("node-b", False)]
    assert v.failed[0].explanation.startswith("cannot be judged here: '>=' needs numbers")


def test_a_value_measured_in_two_units_cannot_be_judged_against_one_number(tmp_path: Path) -> None:
    write(tmp_path, "node-a", Result("query_median", 1.1, "ms"))
    write(tmp_path, "node-b", Result("query_median", 0.0011, "s"))
    with pytest.raises(CitationError) as info:
        verdict(tmp_path, "warp-size.query_median < 5")
    assert info.value.message == (
        "warp-size.query_median is measured in different units (ms on 'node-a', s on 'node-b')"
    )


def test_a_node_that_lacks_a_value_is_named_not_silently_left_out(tmp_path: Path) -> None:
    write(tmp_path, "node-a", Result("warp_size", 32, "threads"), Result("lanes", 32, "threads"))
    write(tmp_path, "node-b", Result("warp_size", 32, "threads"))
    v = verdict(tmp_path, "warp-size.warp_size == warp-size.lanes")
    assert [n.node for n in v.nodes] == ["node-a"]
    assert v.skipped == (("node-b", "lacks warp-size.lanes"),)


def test_a_node_that_recorded_none_of_the_values_is_not_one_the_claim_is_about(tmp_path: Path) -> None:
    """A one-GPU host names the pair results with no value: a claim about pairs skips it
    silently (no warning, which --strict would fail), while a node with some values is named."""
    write(tmp_path, "node-a", Result("warp_size", 32, "threads"), Result("lanes", 32, "threads"))
    write(tmp_path, "node-b", Result("warp_size", None, "threads"), Result("lanes", None, "threads"))
    write(tmp_path, "node-c", Result("warp_size", 32, "threads"), Result("lanes", None, "threads"))
    v = verdict(tmp_path, "warp-size.warp_size == warp-size.lanes")
    assert [n.node for n in v.nodes] == ["node-a"]
    assert v.skipped == (("node-c", "lacks warp-size.lanes"),)


def test_a_node_that_never_ran_one_of_the_experiments_is_silent_not_skipped(tmp_path: Path) -> None:
    """A claim across two experiments, one of them new and run on one node only (2026-12-05: 25
    such warnings failed --strict): the node that never ran it is counted silent, not warned about."""
    write(tmp_path, "node-a", Result("warp_size", 32, "threads"))
    write(tmp_path, "node-b", Result("warp_size", 32, "threads"))
    provenance = {"node": "node-a", "gpu_name": "Example GPU", "recorded_at": "2026-12-01T10:00:00+00:00"}
    made = Measurement(
        "lanes", "Count", "sha256:now", "ok", provenance, [Gate("ok", True)], [Result("n", 32, "threads")]
    )
    record(made, tmp_path)
    measurements, problems = load_measurements(tmp_path)
    assert problems == []
    term = Term(**{**TERM.__dict__, "measurements": [MeasurementCitation("warp-size"), MeasurementCitation("lanes")]})
    v = judge(term, Claim("It holds", "warp-size.warp_size == lanes.n"), measurements)
    assert [n.node for n in v.nodes] == ["node-a"] and v.skipped == () and v.silent == ("node-b",)


def test_the_noise_rule_reads_the_same_either_way_round() -> None:
    low = [0.99, 1.0, 1.0, 1.01, 1.0]
    high = [x * 1.105 for x in low]  # 10.5% above low, but only 9.5% below high
    assert compare_timings(low, high).verdict == "SLOWER"
    assert compare_timings(high, low).verdict == "FASTER"
    near = [x * 1.09 for x in low]
    assert compare_timings(low, near).verdict == compare_timings(near, low).verdict == "SAME"


def test_values_from_many_cards_taken_together_are_judged_on_every_card(tmp_path: Path) -> None:
    """Where no one card measured every value, one GPU model's cards stand in together; with
    many cards, every card is in a judged combination (the first few combinations alone left
    the rest unjudged, and counted them among cards that did not measure the values)."""

    def put(experiment: str, node: str, result: Result) -> None:
        provenance = {"node": node, "gpu_name": "Example GPU", "recorded_at": "2026-12-01T10:00:00+00:00"}
        gates = [Gate("ok", True)]
        record(Measurement(experiment, "Read it", "sha256:now", "ok", provenance, gates, [result]), tmp_path)

    put("ex", "a0", Result("a", 1, "ms"))
    put("ex", "a1", Result("a", 9, "ms"))  # fails 'a < b' with every b: it must be judged
    for i in range(20):
        put("ey", f"b{i}", Result("b", 5, "ms"))
    term = Term(
        name="t",
        title="What?",
        definition="A term.",
        section="s",
        body="A body.",
        measurements=[MeasurementCitation("ex"), MeasurementCitation("ey")],
    )
    measurements, problems = load_measurements(tmp_path)
    assert problems == []
    found = judge(term, Claim("a is less than b", "ex.a < ey.b"), measurements)
    judged = {card for v in found.nodes for card in v.node.split(" + ")}
    assert judged == {"a0", "a1", *(f"b{i}" for i in range(20))} and found.silent == ()
    assert any(not v.holds and "a1" in v.node for v in found.nodes)
    assert len(found.nodes) == 20  # linear in the cards, not their product (40)
