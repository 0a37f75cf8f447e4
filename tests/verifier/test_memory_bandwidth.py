"""memory-bandwidth on the CPU: its kernels compile for sm_90, and its gates and results from fixture data."""

from __future__ import annotations

from typing import Any

import pytest
from verifier.experiments import memory_bandwidth as mb

MIB = 1 << 20
ATTRS = {"memory_clock_khz": 3_201_000, "bus_width_bits": 6144, "l2_bytes": 50 * MIB, "sm_count": 132}
"""Fixture values shaped like an H200's attributes, not measurements."""


def size_fixture(size: int, copy_ms: float, read_ms: float) -> dict[str, Any]:
    """One size as measure() returns it; the times are fixture values, not measurements."""
    reps = max(1, mb.MIN_BYTES // size)
    return {
        "bytes": size,
        "copy": {
            "ms": [copy_ms, copy_ms * 1.01, copy_ms * 0.99] * 4,
            "stopped": "spread",
            "reps": reps,
            "bytes_per_sample": 2 * size * reps,
            "mismatches": 0,
            "checked": 8192,
        },
        "read": {
            "ms": [read_ms] * 10,
            "stopped": "spread",
            "reps": reps,
            "bytes_per_sample": size * reps,
            "sum": float(size // 4 * reps),
            "expected": float(size // 4 * reps),
        },
    }


def raw_fixture() -> dict[str, Any]:
    # 4 MiB: 64 reps of 8 MiB moved in 1.0 ms (L2 speed); 4 GiB: 8 GiB in 2.5 ms (about 3.4 TB/s).
    return {
        "sizes": [size_fixture(4 * MIB, 1.0, 0.5), size_fixture(4096 * MIB, 2.5, 1.1)],
        "skipped": [],
    }


def test_kernels_compile_for_sm_90() -> None:
    pytest.importorskip("cuda.bindings.nvrtc")
    from verifier.cuda import compile_source

    compiled = compile_source(mb.SOURCE, "memory_bandwidth.cu", "sm_90")
    assert compiled.kind == "cubin" and compiled.image[:4] == b"\x7fELF"
    ptx = compile_source(mb.SOURCE, "memory_bandwidth.cu", "compute_90").image
    assert b".entry read_sum" in ptx and b".entry fill_pattern" in ptx
    assert b"ld.global.nc.v4.f32" in ptx, "the read kernel loads float4"


def test_theoretical_peak_and_labels() -> None:
    assert mb.theoretical_gbs(ATTRS) == pytest.approx(2 * 3.201e9 * 768 / 1e9)
    assert mb.theoretical_gbs({"memory_clock_khz": 0, "bus_width_bits": 6144}) is None
    assert [mb.label(s) for s in mb.SIZES] == ["4mib", "32mib", "256mib", "1gib", "4gib"]


def test_copy_pattern_matches_the_fill_kernel_formula() -> None:
    np = pytest.importorskip("numpy")
    index = np.array([0, 1, 2, (1 << 30) - 1])
    expected = [(int(i) * mb.PATTERN) % (1 << 32) for i in index]
    assert mb.expected_pattern(index).tolist() == expected


def test_summary_of_good_fixture() -> None:
    outcome = mb.summarise(raw_fixture(), ATTRS)
    assert all(g.passed for g in outcome.gates), outcome.gates
    values = {r.name: r.value for r in outcome.results}
    units = {r.name: r.unit for r in outcome.results}
    assert values["copy_4mib"] == pytest.approx(2 * 4 * MIB * 64 / 1e-3 / 1e9, abs=0.1)
    assert values["copy_4gib"] == pytest.approx(2 * 4096 * MIB / 2.5e-3 / 1e9, abs=0.1)
    assert values["read_4gib"] == pytest.approx(4096 * MIB / 1.1e-3 / 1e9, abs=0.1)
    assert values["theoretical_gbs"] == pytest.approx(4916.7, abs=0.1)
    assert values["copy_efficiency"] == pytest.approx(100 * 3435.97 / 4916.7, abs=0.1)
    assert set(units.values()) == {"GB/s", "%"}
    assert outcome.repeats == 10
    copy = next(r for r in outcome.results if r.name == "copy_4gib")
    assert len(copy.samples) == 12


def test_l2_sized_copy_may_beat_hbm_peak_but_a_large_one_may_not() -> None:
    raw = raw_fixture()
    raw["sizes"][1]["read"]["ms"] = [0.5] * 10  # 4 GiB read in 0.5 ms: 8.6 TB/s, impossible from HBM
    outcome = mb.summarise(raw, ATTRS)
    failed = [g.name for g in outcome.gates if not g.passed]
    assert failed == ["achieved is at most 1.05 × theoretical where the bytes touched exceed 4 × L2"]


def test_wrong_sum_or_copy_fails_its_gate() -> None:
    raw = raw_fixture()
    raw["sizes"][0]["read"]["sum"] = 0.0
    raw["sizes"][1]["copy"]["mismatches"] = 3
    failed = {g.name for g in mb.summarise(raw, ATTRS).gates if not g.passed}
    assert failed == {
        "the read kernel's block sums add up to elements × passes",
        "the copy's destination equals the source at sampled positions",
    }
