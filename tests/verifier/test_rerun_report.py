"""A re-run compared with the node's committed file (no GPU: the runner's comparison is called
on measurements built here), and an experiment hash that only code changes move."""

from __future__ import annotations

import json
from pathlib import Path

from verifier.identity import with_host
from verifier.rerun import against_committed, report_json, with_history
from verifier.settle import passed, settle

from conftest import load_measurement
from cudagloss.load.measurements import load_measurements
from cudagloss.model.keys import code_hash
from cudagloss.model.measurement import Drift, Gate, Measurement, Result, record

COLD = [20.7, 18.8, 21.6, 20.1, 19.9]
WARM = [0.40, 0.29, 0.46, 0.38, 0.41]


def run(
    error_code: int = 209,
    cold: list[float] = COLD,
    driver: str = "580.159.04",
    extra: tuple[Result, ...] = (),
    day: str = "",
    status: str = "ok",
) -> Measurement:
    """A measurement of one experiment on node-a, as the verifier writes it (recorded on day, if given)."""
    results = [
        Result("error_name", "CUDA_ERROR_NO_BINARY_FOR_GPU"),
        Result("error_code", error_code),
        Result("second_faster", True),
        Result("cold_median", sorted(cold)[2], "ms", "first load (median)", cold),
        Result("cold_min", min(cold), "ms", "first load (fastest)"),
        Result("warm_median", sorted(WARM)[2], "ms", "later load (median)", WARM),
        *extra,
    ]
    provenance = {"node": "node-a", "gpu_name": "NVIDIA H200", "driver_version": driver, "duration_s": 1.5}
    provenance |= {"recorded_at": f"{day}T10:00:00+00:00"} if day else {}
    gates = [Gate("correct", status == "ok")]
    return Measurement("ptx-jit", "test", "sha256:now", status, provenance, gates, results)  # type: ignore[arg-type]


def committed(tmp_path: Path) -> Path:
    folder = tmp_path / "measurements"
    record(run(extra=(Result("old_only", "gone"),)), folder)
    return folder


def test_a_changed_discrete_value_fails_the_run_and_waits_beside_the_committed_file(tmp_path: Path) -> None:
    folder = committed(tmp_path)
    good = folder / "ptx-jit" / "node-a.json"
    before = good.read_bytes()
    said: list[str] = []
    new = run(error_code=222, driver="590.10", extra=(Result("new_only", 3, "entries"),))
    rerun = settle(new, folder, said.append)
    assert rerun is not None and rerun.changed and not passed(new, rerun)  # run_all exits ExitCode.FAILED
    assert good.read_bytes() == before, "the committed file is never replaced by a changed run"
    review = folder / "ptx-jit" / "node-a.json.new"
    assert review.read_text() == with_history(with_host(new), rerun).to_json()  # settle records the host
    assert said == [
        "    pass  correct",
        f"    compared with {good.as_posix()}:",
        "      environment  driver_version 580.159.04 -> 590.10",
        '      SAME     error_name "CUDA_ERROR_NO_BINARY_FOR_GPU"',
        "      CHANGED  error_code 209 -> 222",
        "      SAME     second_faster true",
        "      SAME     cold_median 20.1 ms -> 20.1 ms (+0.0%, Mann-Whitney p=1 exact, 5 vs 5 samples)",
        "      SAME     cold_min 18.8 ms",
        "      SAME     warm_median 0.4 ms -> 0.4 ms (+0.0%, Mann-Whitney p=1 exact, 5 vs 5 samples)",
        "      ADDED    new_only = 3 entries",
        '      REMOVED  old_only (was "gone")',
        f"    -> {review} (1.5 s)  CHANGED: a discrete result differs; review it beside the committed file",
    ]
    # The site reads only names ending in .json: the review file is no diagnostic and no run.
    measurements, problems = load_measurements(folder)
    assert problems == []
    [node] = measurements.experiments["ptx-jit"].runs
    assert node.good is not None and node.good.result("error_code") == Result("error_code", 209)


def test_a_timing_changed_only_within_noise_is_same_and_replaces_the_committed_file(tmp_path: Path) -> None:
    folder = committed(tmp_path)
    (folder / "ptx-jit" / "node-a.json.new").write_text("{}")  # left by an earlier changed run
    noisy = [19.4, 21.9, 20.2, 18.5, 20.9]  # median 20.2 against 20.1, samples interleaved
    new = run(cold=noisy)
    said: list[str] = []
    rerun = settle(new, folder, said.append)
    assert rerun is not None and not rerun.changed and passed(new, rerun)
    cold = next(row for row in rerun.rows if row.name == "cold_median")
    assert cold.verdict == "SAME" and cold.test is not None and cold.test["p"] > 0.05
    assert "      DERIVED  cold_min 18.8 ms -> 18.5 ms" in said
    assert (folder / "ptx-jit" / "node-a.json").read_text() == with_history(with_host(new), rerun).to_json()
    assert not (folder / "ptx-jit" / "node-a.json.new").exists(), "a run that changed nothing clears the review file"


def test_a_timing_three_times_slower_is_reported_slower_but_does_not_fail_the_run(tmp_path: Path) -> None:
    folder = committed(tmp_path)
    new = run(cold=[3 * c for c in COLD])
    rerun = settle(new, folder, quiet)
    assert rerun is not None and passed(new, rerun)
    [cold] = [row for row in rerun.rows if row.name == "cold_median"]
    assert cold.verdict == "SLOWER" and cold.test is not None
    assert (cold.test["p"], cold.test["method"], cold.test["change"]) == (2 / 252, "exact", 2.0)


def test_the_first_run_on_a_node_says_so(tmp_path: Path) -> None:
    said: list[str] = []
    rerun = settle(run(), tmp_path, said.append)
    assert rerun is not None and rerun.compared_with is None and passed(run(), rerun)
    assert said[1] == "    first run on this node: nothing to compare with"
    assert (tmp_path / "ptx-jit" / "node-a.json").exists()


def test_an_unreadable_committed_file_is_said_and_replaced(tmp_path: Path) -> None:
    good = tmp_path / "ptx-jit" / "node-a.json"
    good.parent.mkdir()
    good.write_text("{")
    said: list[str] = []
    rerun = settle(run(), tmp_path, said.append)
    assert rerun is not None and rerun.unreadable is not None
    assert said[1].startswith(f"    not compared: {good.as_posix()} cannot be read (not valid JSON")
    assert good.read_text() == with_host(run()).to_json()


def test_the_json_report_has_every_row_the_rule_and_the_environment(tmp_path: Path) -> None:
    folder = committed(tmp_path)
    first = against_committed(run(), tmp_path / "elsewhere")
    changed = against_committed(run(error_code=222, driver="590.10"), folder)
    report = json.loads(report_json([first, changed]))
    assert report["timing_rule"].startswith("two-sided Mann-Whitney U on the raw samples, p < 0.05")
    a, b = report["experiments"]
    assert (a["first_run"], a["changed"], a["rows"]) == (True, False, [])
    assert (b["first_run"], b["changed"], b["experiment"], b["node"]) == (False, True, "ptx-jit", "node-a")
    assert b["environment"] == [{"name": "driver_version", "old": "580.159.04", "new": "590.10"}]
    rows = {row["name"]: row for row in b["rows"]}
    assert rows["error_code"] == {
        "name": "error_code",
        "verdict": "CHANGED",
        "old": 209,
        "new": 222,
        "unit": "",
        "test": None,
    }
    assert rows["old_only"]["verdict"] == "REMOVED"
    assert rows["cold_median"]["test"]["method"] == "exact"


def test_a_value_that_changes_type_is_changed(tmp_path: Path) -> None:
    folder = tmp_path / "measurements"
    record(run(extra=(Result("flag", True),)), folder)
    rerun = against_committed(run(extra=(Result("flag", 1),)), folder)
    assert [row.verdict for row in rerun.rows if row.name == "flag"] == ["CHANGED"]


def quiet(line: str) -> None:
    """Say nothing: the runner's lines are tested above."""


def history(folder: Path) -> tuple[dict[str, str], list[Drift], int]:
    """The committed file's first_measured per result, its drift and its format version."""
    m = load_measurement(folder / "ptx-jit" / "node-a.json")
    return {r.name: r.first_measured for r in m.results}, m.drift, m.format_version


def test_a_rerun_keeps_the_day_a_confirmed_value_was_first_measured_and_records_drift(tmp_path: Path) -> None:
    def after_update(day: str) -> Measurement:
        """A run on a new driver: a timing three times slower, and one result more."""
        return run(cold=[3 * c for c in COLD], driver="590.10", extra=(Result("new_only", 3, "entries"),), day=day)

    settle(run(day="2026-11-01"), tmp_path, quiet)
    first = history(tmp_path)
    assert (set(first[0].values()), first[1:]) == ({"2026-11-01"}, ([], 2)), "a first run measures every value"
    settle(run(day="2026-11-20"), tmp_path, quiet)
    assert history(tmp_path) == first, "a run that confirms every value keeps their days"
    rerun = settle(after_update("2026-12-01"), tmp_path, quiet)
    assert rerun is not None and {r.name: r.verdict for r in rerun.rows}["cold_median"] == "SLOWER"
    days, drift, version = history(tmp_path)
    assert days == {
        "error_name": "2026-11-01",  # SAME
        "error_code": "2026-11-01",
        "second_faster": "2026-11-01",
        "cold_median": "2026-12-01",  # SLOWER: measured anew
        "cold_min": "2026-12-01",  # DERIVED, and it moved: measured anew
        "warm_median": "2026-11-01",
        "new_only": "2026-12-01",  # ADDED
    }
    assert (drift, version) == ([Drift("driver_version", "580.159.04", "590.10")], 2)
    settle(after_update("2026-12-02"), tmp_path, quiet)
    assert history(tmp_path)[1:] == ([], 2), "drift is against the previous run only"


def test_a_version_1_committed_file_dates_its_values_by_its_own_run(tmp_path: Path) -> None:
    record(run(day="2026-10-05"), tmp_path)  # no history: written as version 1
    assert load_measurement(tmp_path / "ptx-jit" / "node-a.json").format_version == 1
    rerun = settle(run(error_code=222, day="2026-12-01"), tmp_path, quiet)
    assert rerun is not None and rerun.changed
    review = load_measurement(tmp_path / "ptx-jit" / "node-a.json.new")
    days = {r.name: r.first_measured for r in review.results}
    assert (days["error_code"], days["error_name"], days["cold_median"]) == ("2026-12-01", "2026-10-05", "2026-10-05")


def test_a_failed_run_is_written_without_history(tmp_path: Path) -> None:
    settle(run(day="2026-11-01"), tmp_path, quiet)
    settle(run(driver="590.10", day="2026-12-01", status="failed"), tmp_path, quiet)
    failed = load_measurement(tmp_path / "ptx-jit" / "node-a.failed.json")
    assert (failed.drift, {r.first_measured for r in failed.results}, failed.format_version) == ([], {""}, 1)
    assert history(tmp_path)[0]["error_code"] == "2026-11-01", "the good file is left as it was"


def test_the_code_hash_ignores_comments_docstrings_and_formatting_but_not_code(tmp_path: Path) -> None:
    source, other = tmp_path / "exp.py", tmp_path / "kernel.cu"
    other.write_bytes(b"__global__ void k() {}\n")
    source.write_text('"""Module."""\nA = 1\n\n\ndef f(x):\n    return x + A\n')
    first = code_hash([source, other])
    for same in (
        '"""Module, said better."""\nA = 1  # one\n\n\ndef f(x):\n    """Add A."""\n    return x + A\n',
        "A = (\n    1\n)\ndef f(x): return (x + A)\n",
        '# a comment\nA = 1\n"""What A is."""\ndef f(x):\n\n    return x+A\n',
    ):
        source.write_text(same)
        assert code_hash([source, other]) == first, same
    for changed in ("A = 2\ndef f(x):\n    return x + A\n", "A = 1\ndef f(y):\n    return y + A\n"):
        source.write_text(changed)
        assert code_hash([source, other]) != first, changed
    source.write_text("A = 1\ndef f(x):\n    return x + A\n")
    assert code_hash([source, other]) == first
    other.write_bytes(b"__global__ void k() { }\n")  # not Python: its bytes count
    assert code_hash([source, other]) != first


def test_another_host_cpu_is_a_changed_environment_and_an_unrecorded_one_is_not(tmp_path: Path) -> None:
    folder = tmp_path / "measurements"
    record(run(), folder)  # committed before the CPU was recorded
    new = run()
    new.provenance["cpu"] = "AMD EPYC"
    assert against_committed(new, folder).environment == []
    record(new, folder)
    other = run()
    other.provenance["cpu"] = "Intel Xeon"
    rerun = against_committed(other, folder)
    assert rerun.environment == [{"name": "cpu", "old": "AMD EPYC", "new": "Intel Xeon"}]
    assert "      environment  cpu AMD EPYC -> Intel Xeon" in rerun.lines()


def test_a_lower_bandwidth_is_slower_and_another_sampled_value_only_lower() -> None:
    """Real case: a second lent H200 copied 4 MiB at 1341.5 GB/s against 1524.6 GB/s; the
    report said FASTER, reading every sampled value as a duration."""
    from verifier.rerun import compare_result

    high, low = [1520.0, 1525.0, 1524.6, 1530.0, 1519.0], [1340.0, 1341.5, 1345.0, 1338.0, 1342.0]
    rate = compare_result(Result("copy", 1524.6, "GB/s", "", high), Result("copy", 1341.5, "GB/s", "", low))
    assert rate.verdict == "SLOWER"
    assert compare_result(
        Result("copy", 1341.5, "GB/s", "", low), Result("copy", 1524.6, "GB/s", "", high)
    ).verdict == ("FASTER")
    time = compare_result(Result("t", 1524.6, "ms", "", high), Result("t", 1341.5, "ms", "", low))
    assert time.verdict == "FASTER"
    other = compare_result(Result("n", 1524.6, "blocks", "", high), Result("n", 1341.5, "blocks", "", low))
    assert other.verdict == "LOWER"
    same = compare_result(Result("copy", 1524.6, "GB/s", "", high), Result("copy", 1525.0, "GB/s", "", high))
    assert same.verdict == "SAME"


def test_a_result_cannot_become_information_to_slip_past_review() -> None:
    """A pull request that marks a changed fact 'info' (or a committed file that did) gets a
    CHANGED row, and so a review copy, like any changed fact: only info on both sides is INFO."""
    from cudagloss.merge.rerun import _describe, compare_result
    from cudagloss.model.measurement import Result

    fact = Result("sm_count", 132, "SMs")
    forged = Result("sm_count", 99, "SMs", method="info")
    for old, new in ((fact, forged), (forged, Result("sm_count", 99, "SMs"))):
        row = compare_result(old, new)
        assert row.verdict == "CHANGED"
    row = compare_result(fact, Result("sm_count", 132, "SMs", method="info"))  # same value, new method
    assert row.verdict == "CHANGED" and "measured another way: no method -> info" in _describe(row)
    timing = Result("copy", 4300.0, "GB/s", samples=[4300.0] * 5)
    assert (
        compare_result(timing, Result("copy", 4300.0, "GB/s", samples=[4300.0] * 5, method="host")).verdict == "CHANGED"
    )


def test_a_result_in_another_unit_is_changed_and_says_both_units() -> None:
    """A unit changed between runs (threads to threads/SM, ms to µs) is never compared as if equal: its
    samples are in another scale, its value another quantity."""
    from cudagloss.merge.rerun import _describe, compare_result
    from cudagloss.model.measurement import Result

    row = compare_result(
        Result("max_threads_per_sm", 2048, "threads"), Result("max_threads_per_sm", 2048, "threads/SM")
    )
    assert row.verdict == "CHANGED" and _describe(row) == "2048 threads -> 2048 threads/SM (unit threads -> threads/SM)"
    old, new = Result("load", 1.2, "ms", samples=[1.2] * 5), Result("load", 1200.0, "µs", samples=[1200.0] * 5)
    assert compare_result(old, new).verdict == "CHANGED"
    assert compare_result(old, Result("load", 1.2, "ms", samples=[1.2] * 5)).verdict == "SAME"


def test_a_clock_read_in_the_kernel_moves_as_a_measurement_and_a_counted_fact_does_not() -> None:
    """Real case: card h100-7c07a4f9 ran launch-limits twice minutes apart from one commit; the
    placement kernel's clock read 1981 then 1996 MHz, and the report called that a CHANGED fact
    and held the run back for review. An integer with a method was measured; one without, counted."""
    from cudagloss.merge.rerun import compare_result
    from cudagloss.model.display import agreed
    from cudagloss.model.measurement import Result

    clock = Result("placement_clock", 1981, "MHz", method="in-kernel")
    moved = Result("placement_clock", 1996, "MHz", method="in-kernel")
    assert compare_result(clock, moved).verdict == "DERIVED"
    attribute = Result("sm_clock_rate", 1980, "MHz")
    assert compare_result(attribute, Result("sm_clock_rate", 1755, "MHz")).verdict == "CHANGED"
    assert "differs by card" not in agreed([clock, moved], "H100")
    assert "differs by card" in agreed([attribute, Result("sm_clock_rate", 1755, "MHz")], "H100")
