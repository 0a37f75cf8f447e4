"""Units bounded (issue 39, class 2): a power past units.MAX_POWER, written (`ms^99999999` in a
worked example or a measurement file's unit) or reached by multiplying in a claim, is an error
at its place, never a fraction of a hundred million digits. The tests assert the messages, not
seconds: an unbounded power would not finish, and a bounded one says so at once."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from conftest import ROOT, cudagloss
from cudagloss.load.measurements import load_measurements
from cudagloss.model import units
from cudagloss.model.claim_values import evaluate
from cudagloss.model.claims import ClaimTypeError, Operand, parse
from cudagloss.model.measurement import Gate, Measurement, Result, record
from cudagloss.model.term import MeasurementCitation, Term
from cudagloss.model.worked import Step, WorkedExample
from cudagloss.model.workings import work

HUGE = ["ms^99999999", "ms⁹⁹⁹⁹⁹⁹⁹⁹", "ms^-99999999", "ms^" + "9" * 30, "ms^17", "ms^9*ms^9", "s/ms^9/ms^9"]


@pytest.mark.parametrize("text", HUGE)
def test_a_power_past_the_bound_is_refused_when_read(text: str) -> None:
    with pytest.raises(units.UnitTooLarge, match=rf"past ±{units.MAX_POWER}$"):
        units.read(text)
    assert units.unit_problem(text) is not None


def test_powers_up_to_the_bound_are_read_and_scaled_exactly() -> None:
    unit = units.read(f"ms^{units.MAX_POWER}")
    assert unit.scale == Fraction(1, 1000**units.MAX_POWER) and units.unit_problem("GB/s²") is None


def test_repeated_multiplication_stops_at_the_bound_in_a_claim() -> None:
    product = " * ".join(["e.t"] * (units.MAX_POWER + 1))
    with pytest.raises(ClaimTypeError) as caught:
        evaluate(parse(f"{product} > 0"), lambda e, r: Operand(2, "ms"))
    assert f"the unit has 'ms' to the power {units.MAX_POWER + 1}, past ±{units.MAX_POWER}" in caught.value.message
    assert evaluate(parse(" * ".join(["e.t"] * units.MAX_POWER) + " > 0"), lambda e, r: Operand(2, "ms"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project's terms, measurements and verifier, where make check's command runs."""
    for folder in ("terms", "measurements", "computed", "verifier"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_a_worked_example_and_a_measurement_with_a_huge_power_are_lines(project: Path) -> None:
    term = project / "terms" / "littles-law.yaml"
    text = term.read_text(encoding="utf-8")
    assert "        unit: B/SM\n" in text and "        given: 16 bytes/thread\n" in text
    text = text.replace("        unit: B/SM\n", "        unit: ms^99999999\n")
    text = text.replace("        given: 16 bytes/thread\n", "        given: 16 ms^99999999\n")
    term.write_text(text, encoding="utf-8")
    path = project / "measurements" / "memory-latency" / "h200-3f1ceb1e.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    next(r for r in data["results"] if r["name"] == "level_4_ns")["unit"] = "ns^99999999"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    unit_line, given_line = (text[: text.index(f"        {w}")].count("\n") + 1 for w in ("unit: ms^", "given: 16 ms"))
    run = cudagloss(project, "check", "--no-cache", "terms", timeout=300)
    said = run.stdout + run.stderr
    assert run.returncode == 1 and "Traceback" not in said
    power = f"the unit has a power of 8 digits, past ±{units.MAX_POWER}"
    assert f"terms/littles-law.yaml:{unit_line}:15: worked[0].steps[3].unit: {power}" in said
    assert f"terms/littles-law.yaml:{given_line}:16: worked[0].steps[4].given: {power}" in said
    assert "measurements/memory-latency/h200-3f1ceb1e.json:" in said and f".unit: {power}" in said


def test_a_worked_step_past_the_bound_is_an_error_at_its_field(tmp_path: Path) -> None:
    results = [Result("t", 2, "ms")]
    provenance = {"node": "node-a", "gpu_name": "Example GPU", "recorded_at": "2026-12-01T10:00:00+00:00"}
    record(Measurement("ex", "Limits", "sha256:now", "ok", provenance, [Gate("ok", True)], results), tmp_path)
    steps = [
        Step("Multiplied past the bound", value=" * ".join(["ex.t"] * (units.MAX_POWER + 1))),
    ]
    example = WorkedExample("example", "How many?", steps)
    cited = [MeasurementCitation("ex")]
    term = Term(
        name="t", title="Why?", definition="A term.", section="s", body=".", measurements=cited, worked=[example]
    )
    measurements, problems = load_measurements(tmp_path)
    assert problems == []
    w = work(term, 0, measurements, [])
    said = f"the unit has 'ms' to the power {units.MAX_POWER + 1}, past ±{units.MAX_POWER}"
    assert [(e.where, e.message.endswith(said)) for e in w.errors] == [("steps[0].value", True)]
