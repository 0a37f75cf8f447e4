"""atomics on the CPU: its kernels compile for sm_90, the expected counters add up to every add,
and the gates and results come out of fixture numbers as the page will show them."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import atomics as at

THREADS = 132 * at.BLOCKS_PER_SM * at.BLOCK
CASES = [f"{space}_{mode}" for space in at.ADDS for mode in at.MODES]
# Fixture values shaped like an H200's (ns per atomic), written by hand for this test: not measurements.
NS = {"global_one": 0.5, "global_per_lane": 0.1, "global_per_warp": 0.02, "global_distinct": 0.01}
NS |= {"shared_one": 0.2, "shared_per_lane": 0.02, "shared_per_warp": 0.05, "shared_distinct": 0.01}


def timed(ms: float, clock: float = 1980.0, **change: Any) -> dict[str, Any]:
    """A case's Timed.raw(): per-run ms, the in-kernel span a little under it, and the clock."""
    return {"ms": [ms] * 10, "stopped": "spread", "reps": 4, "held": 0, "method": "gpu-queued",
            "kernel_ms": [ms * 0.99] * 10, "clock_mhz": [clock] * 10} | change  # fmt: skip


def fixture(ns: dict[str, float] = NS, **change: Any) -> dict[str, Any]:
    cases = {c: timed(ns[c] * THREADS * at.ADDS[c.split("_")[0]] / 1e6) for c in CASES}
    raw = {"threads": THREADS, "cases": cases, "wrong": dict.fromkeys(CASES, 0)}
    return raw | change


@pytest.mark.parametrize("name", ["global_adds", "shared_adds"])
def test_the_kernels_compile_for_sm_90_with_the_probe(name: str) -> None:
    cubin = compile_source(at.SOURCE, f"{name}.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"
    assert at.SOURCE.count("ProbeMark mark = probe_begin(probe);") == 2
    assert at.SOURCE.count("probe_end(probe, mark);") == 2


def test_the_added_value_is_a_kernel_argument() -> None:
    """A literal 1 lets the compiler use ATOMS.POPC.INC in shared memory, which hides contention."""
    assert at.SOURCE.count("atomicAdd(c, value)") == 2 and "1u)" not in at.SOURCE


@pytest.mark.parametrize("case", CASES)
def test_expected_counters_hold_every_add(case: str) -> None:
    space, mode = case.split("_", 1)
    want = at.counts(space, mode, THREADS)
    assert sum(want.values()) == THREADS * at.ADDS[space] < 2**32
    assert max(want) < THREADS


def test_expected_counters_by_mode() -> None:
    g, s = at.ADDS["global"], at.ADDS["shared"]
    assert at.counts("global", "per_warp", 64) == {0: 32 * g, 1: 32 * g}
    assert at.counts("shared", "per_warp", 512) == dict.fromkeys(range(8), 32 * 2 * s)
    assert at.counts("shared", "distinct", 512) == dict.fromkeys(range(256), 2 * s)


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = at.summarise(fixture())
    assert all(g.passed for g in outcome.gates) and len(outcome.gates) == 2 + len(CASES)
    assert outcome.repeats == 10
    values = {r.name: r for r in outcome.results}
    assert values["global_one_ns_per_atomic"].value == 0.5 and values["global_one_ns_per_atomic"].unit == "ns"
    assert values["global_one_ns_per_atomic"].method == "gpu-queued"
    assert len(values["shared_distinct_ns_per_atomic"].samples) == 10
    assert values["global_one_slowdown"].value == 50.0 and values["global_one_slowdown"].unit == "×"
    assert values["shared_per_warp_slowdown"].value == 5.0 and values["shared_per_warp_slowdown"].method == ""
    assert values["global_atomics_clock"].value == 1980 and values["shared_atomics_clock"].method == "in-kernel"
    assert len(outcome.results) == 8 + 6 + 2


def test_host_time_in_a_distinct_row_fails_its_gate() -> None:
    """The first glossary's distinct rows held host time: events far longer than the kernel's span."""
    raw = fixture()
    distinct = raw["cases"]["global_distinct"]
    raw["cases"]["global_distinct"] = distinct | {"ms": [t * 1.5 for t in distinct["ms"]]}
    raw["cases"]["shared_one"] |= {"held": 1}
    failed = [g.name for g in at.summarise(raw).gates if not g.passed]
    assert failed == [
        "no host time in global atomics, distinct (events agree with the in-kernel timer)",
        "no host time in shared atomics, one (events agree with the in-kernel timer)",
    ]


def test_a_throttled_clock_is_reported_as_it_ran() -> None:
    raw = fixture()
    for case in CASES[:4]:
        raw["cases"][case] |= {"clock_mhz": [1500.0] * 10}
    values = {r.name: r.value for r in at.summarise(raw).results}
    assert values["global_atomics_clock"] == 1500 and values["shared_atomics_clock"] == 1980


def test_a_wrong_counter_fails_and_reports_nothing() -> None:
    outcome = at.summarise(fixture(wrong={**dict.fromkeys(CASES, 0), "shared_one": 1}))
    assert [g.passed for g in outcome.gates] == [False] and outcome.results == []
    assert "shared_one: 1 counters wrong" in outcome.gates[0].detail
    assert not at.summarise(fixture({**NS, "global_one": 0.001})).gates[-1].passed
