"""A re-run that breaks a term's claim fails `make verify` and is written beside the committed
file for review; one that keeps every claim replaces it. Real files, the runner's own settle()."""

from __future__ import annotations

from pathlib import Path

from verifier.claims import broken_claims, readable_terms
from verifier.settle import passed, settle

from cudagloss.model.measurement import Gate, Measurement, Result, parse_measurement, record
from cudagloss.model.term import Claim, MeasurementCitation, Term
from cudagloss.model.urls import measurement_path, review_path

CLAIM = Claim("Warps are 32 threads wide here", "warp-size.warp_size == 32 and warp-size.query_median < 5")


def run(node: str, warp: int, query: list[float]) -> Measurement:
    results = [
        Result("warp_size", warp, "threads", "threads per warp"),
        Result("query_median", sorted(query)[len(query) // 2], "ms", "query time", query),
    ]
    provenance = {
        "node": node,
        "gpu_name": "Example GPU",
        "recorded_at": "2026-12-02T10:00:00+00:00",
        "duration_s": 1.0,
    }
    return Measurement("warp-size", "Read the warp size", "sha256:now", "ok", provenance, [Gate("ok", True)], results)


def term(*claims: Claim) -> Term:
    return Term(
        name="warp",
        title="What is a warp?",
        definition="A group of threads.",
        section="basics",
        body="A warp.",
        measurements=[MeasurementCitation("warp-size")],
        claims=list(claims),
    )


def test_a_run_that_breaks_a_claim_goes_beside_the_committed_file_and_fails(tmp_path: Path) -> None:
    record(run("node-a", 32, [1.0, 1.1, 1.2]), tmp_path)
    committed = measurement_path(tmp_path, "warp-size", "node-a").read_text(encoding="utf-8")
    said: list[str] = []
    new = run("node-a", 32, [9.0, 9.5, 10.0])  # slower, and past what the claim allows
    rerun = settle(new, tmp_path, said.append, [term(CLAIM)])
    assert rerun is not None and not rerun.changed and rerun.needs_review and not passed(new, rerun)
    assert rerun.broken_claims == [
        "warp: 'Warps are 32 threads wide here' does not hold: " + rerun.broken_claims[0].split("does not hold: ", 1)[1]
    ]
    assert "9.5 ms" in rerun.broken_claims[0] and "< 5" in rerun.broken_claims[0]
    assert f"    BROKEN claim: {rerun.broken_claims[0]}" in said
    assert any("BROKEN: a claim does not hold" in line for line in said)
    assert measurement_path(tmp_path, "warp-size", "node-a").read_text(encoding="utf-8") == committed
    review = review_path(tmp_path, "warp-size", "node-a")
    assert parse_measurement(review.read_text(encoding="utf-8"), "review").result("query_median") is not None
    assert rerun.to_dict()["broken_claims"] == rerun.broken_claims


def test_a_run_that_keeps_every_claim_replaces_the_committed_file(tmp_path: Path) -> None:
    record(run("node-a", 32, [1.0, 1.1, 1.2]), tmp_path)
    new = run("node-a", 32, [1.05, 1.12, 1.18])
    rerun = settle(new, tmp_path, lambda line: None, [term(CLAIM)])
    assert rerun is not None and rerun.broken_claims == [] and passed(new, rerun)
    text = measurement_path(tmp_path, "warp-size", "node-a").read_text(encoding="utf-8")
    assert parse_measurement(text, "x").result("query_median").samples == [1.05, 1.12, 1.18]  # type: ignore[union-attr]
    assert not review_path(tmp_path, "warp-size", "node-a").exists()


def test_only_the_run_node_is_judged_and_other_experiments_claims_are_left_alone(tmp_path: Path) -> None:
    record(run("node-b", 64, [1.0, 1.1, 1.2]), tmp_path)  # another node already breaks it: make check says so
    other = Claim("Something else", "ptx-jit.grid > 0")
    new = run("node-a", 32, [1.0, 1.1, 1.2])
    assert broken_claims(new, tmp_path, [term(CLAIM, other)]) == []
    assert broken_claims(run("node-a", 64, [1.0]), tmp_path, [term(CLAIM)]) != []


def test_the_repository_terms_are_read_for_their_claims() -> None:
    terms, unreadable = readable_terms(Path(__file__).parents[2] / "terms")
    assert sum(len(t.claims) for t in terms) >= 10 and unreadable == 0


def test_a_run_that_drops_a_value_a_claim_names_is_broken_not_passed(tmp_path: Path) -> None:
    record(run("node-a", 32, [1.0, 1.1, 1.2]), tmp_path)
    new = run("node-a", 32, [1.0, 1.1, 1.2])
    new.results.pop()  # query_median, which the claim names, is gone
    rerun = settle(new, tmp_path, lambda line: None, [term(CLAIM)])
    assert rerun is not None and rerun.claims_judged and not passed(new, rerun)
    assert rerun.broken_claims == [
        "warp: 'Warps are 32 threads wide here' cannot be judged on the new run (make check says why)"
    ]


def test_a_run_whose_claims_were_not_judged_says_so_in_its_report(tmp_path: Path) -> None:
    rerun = settle(run("node-a", 32, [1.0, 1.1, 1.2]), tmp_path, lambda line: None, None)
    assert rerun is not None and rerun.to_dict()["claims_judged"] is False
