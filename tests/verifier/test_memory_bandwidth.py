"""memory-bandwidth on the CPU: its kernels compile for sm_90, and its gates and results from
fixture data shaped like what run() measures (the figures are fixture values, not measurements)."""

from __future__ import annotations

from typing import Any

import pytest
from verifier.experiments import memory_bandwidth as mb
from verifier.kernels.bandwidth import SOURCE
from verifier.levels import DRAM_READ, L1_HIT, L2_HIT

MIB = 1 << 20
ATTRS = {"memory_clock_khz": 3_201_000, "bus_width_bits": 6144, "l2_bytes": 60 * MIB, "sm_count": 132}
"""Fixture values shaped like an H200's attributes, not measurements."""


def case(nbytes: float, ms: float, level: str, clock: float | None = 1980.0, **extra: Any) -> dict[str, Any]:
    """One case as run() keeps it: per-run ms samples, the in-kernel span and clock of a probed kernel."""
    samples = [ms, ms * 1.01, ms * 0.99] * 4
    probed = {"kernel_ms": [t * 0.995 for t in samples], "clock_mhz": [clock] * 12} if clock else {}
    return {"ms": samples, "stopped": "spread", "reps": 1, "held": 0, "bytes_per_run": nbytes, "level": level,
            "what": f"{level} fixture", **probed, **extra}  # fmt: skip


def raw_fixture() -> dict[str, Any]:
    gib = 4096 * MIB
    read = {"sum": 1.0, "expected": 1.0}
    return {
        "cases": {
            "l1_read": case(25e9, 1.0, "l1", **read),  # 25 TB/s
            "l2_read_16mib": case(9e9, 1.0, "l2", **read),  # 9 TB/s
            "copy_4gib": case(
                2 * gib, 2 * gib / 4.3e9, "hbm", None, mismatches=0, checked=8192, unqueued_ms=[2 * gib / 4.28e9] * 10
            ),  # 4.3 TB/s; fmt: skip
            "copy_4gib_graph": case(2 * gib, 2 * gib / 4.32e9, "hbm", None, method="graph-replay"),
            "read_4gib": case(gib, gib / 4.5e9, "hbm", **read),  # 4.5 TB/s
        },
        "skipped": [],
        "profiled": {
            "l1_read": {"level": "l1", "bytes": 1000},
            "l2_read_16mib": {"level": "l2", "bytes": 1000},
            "read_1gib": {"level": "hbm", "bytes": 1000},
        },
        "counters": [
            ("read_l1", {L1_HIT: 99.0, L2_HIT: 50.0, DRAM_READ: 0.0}),
            ("read_l2", {L1_HIT: 0.0, L2_HIT: 99.9, DRAM_READ: 10.0}),
            ("read_hbm", {L1_HIT: 0.0, L2_HIT: 1.0, DRAM_READ: 1000.0}),
        ],
    }


def failed(raw: dict[str, Any]) -> list[str]:
    return [g.name for g in mb.summarise(raw, ATTRS).gates if not g.passed]


def test_kernels_compile_for_sm_90_with_the_cache_operators_each_level_needs() -> None:
    pytest.importorskip("cuda.bindings.nvrtc")
    from verifier.cuda import compile_source

    assert compile_source(SOURCE, "memory_bandwidth.cu", "sm_90").image[:4] == b"\x7fELF"
    ptx = compile_source(SOURCE, "memory_bandwidth.cu", "compute_90").image
    assert all(b".entry " + k in ptx for k in (b"read_hbm", b"read_l2", b"read_l1", b"fill_pattern"))
    assert b"ld.global.nc.v4.f32" in ptx and b"ld.global.cg.v4.f32" in ptx and b"ld.global.ca.v4.f32" in ptx
    assert b"%globaltimer" in ptx, "the read kernels time themselves"


def test_good_fixture_gives_each_level_its_rate_and_rate_per_clock() -> None:
    outcome = mb.summarise(raw_fixture(), ATTRS)
    assert all(g.passed for g in outcome.gates), [g for g in outcome.gates if not g.passed]
    values = {r.name: r.value for r in outcome.results}
    assert values["read_4gib"] == pytest.approx(4500, abs=1)
    assert values["copy_4gib"] == pytest.approx(4300, abs=1)
    assert values["l2_read_16mib"] == pytest.approx(9000, abs=1)
    assert values["l1_read_per_clock"] == pytest.approx(25e3 * 1e3 / 1980 / 132, abs=0.1)
    assert values["l2_read_16mib_per_clock"] == pytest.approx(9e3 * 1e3 / 1980, abs=0.1)
    assert values["read_4gib_clock"] == 1980
    assert values["read_efficiency"] == pytest.approx(100 * 4500 / 4916.7, abs=0.1)
    assert values["l2_read_16mib_l1_hit"] == 0.0 and values["read_1gib_dram_per_byte"] == 1.0
    methods = {r.name: r.method for r in outcome.results}
    assert methods["read_4gib"] == "gpu-queued" and methods["copy_4gib_graph"] == "graph-replay"
    assert methods["read_4gib_clock"] == "in-kernel"


def test_a_throttled_clock_is_the_one_the_rate_per_clock_uses() -> None:
    raw = raw_fixture()
    raw["cases"]["l1_read"]["clock_mhz"] = [1500.0] * 12
    values = {r.name: r.value for r in mb.summarise(raw, ATTRS).results}
    assert values["l1_read_clock"] == 1500
    assert values["l1_read_per_clock"] == pytest.approx(25e3 * 1e3 / 1500 / 132, abs=0.1)


def test_host_time_in_short_samples_fails_the_gate() -> None:
    raw = raw_fixture()
    # Events three times the kernel's own span: the host's issue time was inside the samples.
    raw["cases"]["l2_read_16mib"]["kernel_ms"] = [t / 3 for t in raw["cases"]["l2_read_16mib"]["ms"]]
    raw["cases"]["read_4gib"]["held"] = 2  # the hold timed out: the queue was not all there
    assert failed(raw) == [
        "no host time in l2 read 16mib (events agree with the in-kernel timer)",
        "no host time in read 4gib (events agree with the in-kernel timer)",
    ]


def test_an_hbm_rate_over_the_peak_or_copies_that_disagree_fail() -> None:
    raw = raw_fixture()
    raw["cases"]["read_4gib"]["ms"] = [0.5] * 12  # 4 GiB in 0.5 ms: 8.6 TB/s, impossible from HBM
    raw["cases"]["read_4gib"]["kernel_ms"] = [0.5] * 12
    raw["cases"]["copy_4gib"]["unqueued_ms"] = [t * 1.25 for t in raw["cases"]["copy_4gib"]["ms"]]
    assert failed(raw) == [
        "copy 4gib agrees timed queued and by long unqueued runs (within 3%)",
        "HBM rates are at most 1.05 × theoretical",
    ]


def test_an_l2_read_that_l1_served_fails_the_counters_gate() -> None:
    raw = raw_fixture()
    raw["counters"][1] = ("read_l2", {L1_HIT: 80.0, L2_HIT: 99.0, DRAM_READ: 0.0})  # the first glossary's "L2" read
    outcome = mb.summarise(raw, ATTRS)
    gate = next(g for g in outcome.gates if not g.passed)
    assert gate.name == "each level served its kernel, by the counters"
    assert "l2_read_16mib: l1tex__t_sector_hit_rate.pct 80" in gate.detail


def test_without_ncu_the_levels_are_not_cross_checked_and_say_so() -> None:
    raw = raw_fixture()
    raw["counters"] = "not cross-checked: Nsight Compute (ncu) is not on this node"
    outcome = mb.summarise(raw, ATTRS)
    assert all(g.passed for g in outcome.gates)
    note = next(r for r in outcome.results if r.name == "counters")
    assert str(note.value).startswith("not cross-checked") and note.method == "info"
    assert not any(r.name.endswith("_l1_hit") for r in outcome.results)


def test_wrong_sum_or_copy_fails_its_gate() -> None:
    raw = raw_fixture()
    raw["cases"]["l1_read"]["sum"] = 0.0
    raw["cases"]["copy_4gib"]["mismatches"] = 3
    assert set(failed(raw)) == {
        "each read kernel's block sums add up to elements × passes",
        "the copy's destination equals the source at sampled positions",
    }


def test_copy_pattern_matches_the_fill_kernel_formula() -> None:
    np = pytest.importorskip("numpy")
    index = np.array([0, 1, 2, (1 << 30) - 1])
    assert mb.expected_pattern(index).tolist() == [(int(i) * mb.PATTERN) % (1 << 32) for i in index]
