"""instruction-latency on the CPU: its kernels compile for sm_90, the CPU references follow the chains
they claim, and the gates and results come out of fixture numbers as the pages will cite them."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import instruction_latency as il

from cudagloss.model.chart_spec import match_results
from verifier import issue_kernels as k

# Fixture values shaped like an H200's (132 SMs, FFMA latency 4 cycles, one scheduler issue per clock),
# written by hand for this test: not measurements.
SMS = 132
ATTRS = {"sm_count": SMS, "cc": "9.0"}


def issue_raw(rate: Any, sms: int = SMS) -> dict[tuple[int, int], dict[str, Any]]:
    """sm_rate.measure's output for every warp and chain count, each SM's block at rate(w, c)."""
    out = {}
    for c in k.CHAINS:
        for w in il.WARPS:
            cycles = round(w * k.ITERS * k.BODY / rate(w, c))
            out[(w, c)] = {"cycles": [[cycles] * sms] * 5, "distinct_sms": [sms] * 5, "clock_mhz": [1980.0] * 5}
    return out


def model(w: int, c: int) -> float:
    """Four schedulers, each issuing one FMA per clock from chains of latency 4 (the loop's 3 of 259)."""
    return min(4 * 256 / 259, w * c / 4)


def fixture(rate: Any = model, **change: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "fma": {"cycles": [4.004] * 24, "clock_mhz": [1980.0] * 3, "max_rel_error": 2e-7},
        "imad": {"cycles": [4.5] * 24, "clock_mhz": [1980.0] * 3, "mismatches": 0},
        "issue": issue_raw(rate),
        "issue_error": 3e-7,
        "issue_finite": True,
    }
    return raw | change


def values(outcome: Any) -> dict[str, Any]:
    return {r.name: r for r in outcome.results}


def test_every_kernel_compiles_for_sm_90() -> None:
    cubin = compile_source(k.SOURCE, "instruction_latency.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"
    for name in ("fma_chain", "imad_chain", "fma_issue_1", "fma_issue_2", "fma_issue_4"):
        assert f"void {name}(" in k.SOURCE or f") {name}(" in k.SOURCE
    assert k.SOURCE.count("block_stop(blocks, start);") == len(k.CHAINS)


def test_cpu_references_follow_the_chains_step_by_step() -> None:
    import numpy as np

    lane = np.float32(1 + 5 / 32)
    for _ in range(3):
        lane = np.float32(float(lane) * float(np.float32(k.A)) + float(np.float32(k.B)))
    assert k.expected_fma_chain(3)[5] == lane and k.expected_fma_chain(4)[5] != lane
    x = (7 * 2654435761 + 12345) % 2**32
    for _ in range(3):
        x = (x * x + k.C_IMAD) % 2**32
    assert int(k.expected_imad_chain(3)[7]) == x
    start = k.issue_starts([4097], 3)[0]
    assert start[2] == np.float32(float(np.float32(1e-4)) + 0.25)
    assert k.lat_steps() == (k.SEGMENTS + 1) * k.LAT_ITERS * k.LAT_UNROLL


def test_checked_threads_cover_the_first_and_last_block() -> None:
    assert k.checked_threads(1, SMS) == [0, 1, 31, 131 * 32, 132 * 32 - 1]
    assert k.checked_threads(32, SMS)[-1] == SMS * 1024 - 1


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = il.summarise(fixture(), ATTRS)
    assert all(g.passed for g in outcome.gates), [g for g in outcome.gates if not g.passed]
    assert len(outcome.gates) == 7  # chains, issue outputs, one block per SM, 3 never-less, the peak
    got = values(outcome)
    assert got["fma_latency_cycles"].value == 4.0 and got["fma_latency_cycles"].unit == "cycles"
    assert got["imad_latency_cycles"].value == 4.5 and got["fma_latency_ns"].value == round(4.004 / 1980 * 1000, 3)
    assert got["latency_clock"].value == 1980 and got["issue_clock"].value == 1980
    assert got["issue_per_clock_1_warps"].value == 0.25
    assert got["issue_per_clock_4_warps"].value == 1.0
    assert got["issue_per_clock_32_warps"].value == round(4 * 256 / 259, 3)
    assert got["issue_per_clock_1_warps_4_chains"].value == 1.0
    assert got["issue_per_clock_2_warps_2_chains"].value == 1.0
    assert got["warps_to_saturate"].value == 16 and got["warps_to_saturate"].unit == "warps/SM"
    assert got["peak_issue_per_clock"].value == 4 and got["schedulers_per_sm"].value == 4
    assert got["issue_per_clock_8_warps"].unit == got["peak_issue_per_clock"].unit == "warp-instructions/clock/SM"
    assert outcome.repeats == 3


def test_the_chart_patterns_fit_six_points_per_chain_count() -> None:
    names = [r.name for r in il.summarise(fixture(), ATTRS).results]
    for pattern in ("issue_per_clock_{count}_warps", "issue_per_clock_{count}_warps_4_chains"):
        assert [m.x for m in match_results(pattern, names)] == [1, 2, 4, 8, 16, 32]


def test_a_rate_above_one_issue_per_scheduler_per_clock_fails() -> None:
    gates = il.summarise(fixture(lambda w, c: min(4.2, w * c / 4)), ATTRS).gates
    peak = next(g for g in gates if "one per scheduler" in g.name)
    assert not peak.passed and "4.200" in peak.detail


def test_a_rate_that_falls_with_more_warps_fails() -> None:
    gates = il.summarise(fixture(lambda w, c: 1.0 if w == 32 else model(w, c)), ATTRS).gates
    assert [g.passed for g in gates if "never issue less" in g.name] == [False, False, False]


def test_two_blocks_on_one_sm_fail_the_one_block_gate() -> None:
    raw = fixture()
    raw["issue"][(8, 2)]["distinct_sms"] = [SMS, SMS - 1, SMS, SMS, SMS]
    gate = next(g for g in il.summarise(raw, ATTRS).gates if "each SM" in g.name)
    assert not gate.passed


def test_wrong_outputs_fail_and_report_nothing() -> None:
    chains = fixture(imad={"cycles": [4.5], "clock_mhz": [], "mismatches": 3})
    outcome = il.summarise(chains, ATTRS)
    assert [g.passed for g in outcome.gates] == [False] and outcome.results == []
    issue = il.summarise(fixture(issue_error=2e-3), ATTRS)
    assert [g.passed for g in issue.gates] == [True, False]
    assert "issue_per_clock_1_warps" not in values(issue) and "fma_latency_cycles" in values(issue)


def test_sass_of_the_chains_is_kept_and_checked() -> None:
    lines = [f"        /*{16 * i:04x}*/                   FFMA R0, R0, R10, R11 ;" for i in range(256)]
    ffma = "\n".join(lines)
    imad = ffma.replace("FFMA R0, R0, R10, R11", "IMAD R13, R13, R13, UR6")
    raw = fixture(sass={"fma_chain": {"dump": ffma}, "imad_chain": {"dump": imad}})
    outcome = il.summarise(raw, ATTRS)
    got = values(outcome)
    assert got["fma_chain_sass_count"].value == 256 and got["imad_chain_sass_mnemonic"].value == "IMAD"
    assert next(g for g in outcome.gates if "SASS" in g.name).passed
    short = fixture(sass={"fma_chain": {"dump": ffma}, "imad_chain": {"dump": imad[: len(imad) // 2]}})
    assert not next(g for g in il.summarise(short, ATTRS).gates if "SASS" in g.name).passed
    missing = fixture(sass={"fma_chain": {"missing": "no cuobjdump"}, "imad_chain": {"missing": "no cuobjdump"}})
    outcome = il.summarise(missing, ATTRS)
    assert not [g for g in outcome.gates if "SASS" in g.name] and "fma_chain_sass_note" in values(outcome)


def test_an_unknown_compute_capability_reports_rates_without_a_peak() -> None:
    outcome = il.summarise(fixture(), ATTRS | {"cc": "1.0"})
    got = values(outcome)
    assert "peak_issue_per_clock" not in got and "issue_per_clock_32_warps" in got and "peak_issue_note" in got
