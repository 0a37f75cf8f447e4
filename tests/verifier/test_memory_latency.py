"""memory-latency on the CPU: its kernels compile for sm_90, the cycle it links is one cycle the
CPU can walk, the footprints sit densely around the L2 size, and the levels, boundaries, per-SM
summary and gates come out right from fixture curves."""

from __future__ import annotations

from typing import Any

import pytest
from verifier.experiments import memory_latency as ml

from verifier import latency_levels as lv

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
SMS = 132
ATTRS = {"l2_bytes": 60 * MIB, "clock_khz": 1_980_000, "sm_count": SMS, "cc": 90}
"""Fixture values shaped like an H200's attributes, not measurements."""


def test_kernels_compile_for_sm_90_with_plain_loads() -> None:
    pytest.importorskip("cuda.bindings.nvrtc")
    from verifier.cuda import compile_source

    compiled = compile_source(ml.SOURCE, "memory_latency.cu", "sm_90")
    assert compiled.kind == "cubin" and compiled.image[:4] == b"\x7fELF"
    ptx = compile_source(ml.SOURCE, "memory_latency.cu", "compute_90").image.decode()
    entries = {name: ptx.split(f".entry {name}(", 1)[1].split(".entry", 1)[0] for name in ("chase", "chase_per_sm")}
    for body in entries.values():
        assert "ld.global.u64" in body, "the chase uses plain global loads (L1 may serve them)"
        assert ".cg" not in body and "volatile" not in body
        assert "%clock64" in body and "%globaltimer" in body, "cycles and the clock are read inside the kernel"
    assert "%smid" in entries["chase_per_sm"]


def test_linked_cycle_is_walked_as_the_cpu_predicts() -> None:
    """The link kernel's rule (node order[i] holds node order[i + 1]'s address) walked on the CPU."""
    nodes, base, words = 97, 1 << 40, ml.NODE_BYTES // 8
    order = ml.cycle(nodes)
    assert order[0] == 0 and sorted(order.tolist()) == list(range(nodes))
    memory = {
        base + int(order[i]) * ml.NODE_BYTES: base + int(order[(i + 1) % nodes]) * words * 8 for i in range(nodes)
    }
    address, seen = base, set()
    for _ in range(nodes):
        seen.add(address)
        address = memory[address]
    assert address == base and len(seen) == nodes, "one cycle through every node"
    address = base + int(order[5]) * ml.NODE_BYTES
    for _ in range(300):
        address = memory[address]
    assert (address - base) // ml.NODE_BYTES == int(order[(5 + 300) % nodes])


def test_footprints_are_fine_around_the_l2_size() -> None:
    sizes = lv.footprints(60 * MIB)
    assert sizes == tuple(sorted(set(sizes)))
    assert [s // KIB for s in sizes if s < 256 * KIB] == [8, 16, 32, 48, 64, 96, 128, 160, 192, 224]
    fine = [s // MIB for s in sizes if 16 * MIB <= s <= 96 * MIB]
    assert fine == list(range(16, 97, 2)), "every 2 MiB from L2 / 4 to 1.6 × L2"
    assert sizes[-3:] == (128 * MIB, 256 * MIB, GIB) and len(sizes) == 62
    h100 = lv.footprints(50 * MIB)
    assert [s // MIB for s in h100 if 12 * MIB < s <= 96 * MIB] == list(range(14, 81, 2))


def h200_curve(size: int) -> float:
    """Cycles per load shaped like the four levels expected of an H200 (fixture, not measurement):
    L1, the near L2 partition to half the L2, the far one to the L2, HBM; ramps between."""
    ramp = {224 * KIB: 120.0, 30 * MIB: 330.0, 32 * MIB: 400.0, 60 * MIB: 520.0, 62 * MIB: 590.0}
    if size in ramp:
        return ramp[size]
    if size <= 192 * KIB:
        return 32.0
    if size <= 28 * MIB:
        return 270.0 + (size // MIB) % 3
    if size <= 58 * MIB:
        return 440.0 + (size // MIB) % 5
    return 650.0 + 20 * (size >= 256 * MIB)  # a small TLB rise, not a level


def footprint(size: int, cycles: float) -> dict[str, Any]:
    """One footprint as measure() returns it, at 1980 MHz; fixture values, not measurements."""
    nodes = size // ml.NODE_BYTES
    spread = [cycles, cycles + 0.5, cycles - 0.5, cycles] * (ml.SEGMENTS // 4)
    warm = min(nodes, ml.WARM_CAP)
    return {
        "bytes": size,
        "nodes": nodes,
        "warm": warm,
        "cycles": spread,
        "clock_mhz": 1980.0,
        "final": 64,
        "expected": 64,
    }


def per_sm_fixture(ids: list[int] | None = None) -> dict[str, Any]:
    """SM s reads 260 + 5 × (s mod 7) cycles per load: fastest SM 0, slowest SM 6 (fixture)."""
    ids = list(range(SMS)) if ids is None else ids
    blocks = [{"sm": s, "cycles": 260.0 + 5 * (s % 7), "final": 3, "expected": 3} for s in reversed(ids)]
    return {"bytes": ml.PER_SM_BYTES, "steps": ml.PER_SM_STEPS, "clock_mhz": 1980.0, "blocks": blocks}


def raw_fixture(curve: Any = h200_curve) -> dict[str, Any]:
    fps = [footprint(size, curve(size)) for size in lv.footprints(ATTRS["l2_bytes"])]
    return {"footprints": fps, "skipped": [], "per_sm": per_sm_fixture()}


def values(outcome: Any) -> dict[str, Any]:
    return {r.name: r.value for r in outcome.results}


def test_four_levels_and_their_boundaries_are_found() -> None:
    outcome = ml.summarise(raw_fixture(), ATTRS)
    assert all(g.passed for g in outcome.gates), outcome.gates
    got = values(outcome)
    assert got["levels"] == 4
    assert [got[f"level_{i}_cycles"] for i in range(1, 5)] == [32, 271, 442, 650]
    assert [(got[f"level_{i}_first"], got[f"level_{i}_last"]) for i in range(1, 5)] == [
        (8, 192),
        (256, 28 * 1024),
        (34 * 1024, 58 * 1024),
        (64 * 1024, 1024 * 1024),
    ]
    assert got["level_2_ns"] == pytest.approx(271 / 1.98, abs=0.01)
    described = {r.name: r.description for r in outcome.results}
    assert "transitional footprints: 224 KiB, 30 MiB, 32 MiB, 60 MiB, 62 MiB" in described["levels"]
    assert "nearest known size: the L1 + shared memory storage per SM" in described["level_1_last"]
    assert "nearest known size: half the L2" in described["level_2_last"]
    assert "transitional between: 30 MiB, 32 MiB" in described["level_2_last"]
    assert "nearest known size: the L2 (CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)" in described["level_3_last"]
    assert "level_5_cycles" not in got


def test_per_footprint_results_and_clock() -> None:
    outcome = ml.summarise(raw_fixture(), ATTRS)
    got = values(outcome)
    assert got["cycles_8kib"] == 32 and got["ns_1gib"] == pytest.approx(670 / 1.98, abs=0.01)
    assert got["cycles_32mib"] == 400 and got["l2_size"] == 60 * 1024 and got["sm_clock_max"] == 1980
    assert got["chase_clock"] == 1980 and outcome.repeats == ml.SEGMENTS
    methods = {r.name: r.method for r in outcome.results}
    assert methods["cycles_8kib"] == methods["level_1_cycles"] == methods["per_sm_ns_max"] == "in-kernel"
    assert methods["levels"] == methods["level_1_first"] == ""
    assert {r.unit for r in outcome.results} == {"cycles", "ns", "KiB", "MHz", "levels", "SM id", "SMs"}


def test_a_flat_curve_is_one_level_and_fails_the_gate() -> None:
    outcome = ml.summarise(raw_fixture(lambda size: 300.0 + (size // KIB) % 3), ATTRS)
    got = values(outcome)
    assert got["levels"] == 1 and (got["level_1_first"], got["level_1_last"]) == (8, 1024 * 1024)
    failed = [g.name for g in outcome.gates if not g.passed]
    assert failed == ["the curve has more than one latency level, each slower than the one before"]


@pytest.mark.parametrize("noisy", [8 * MIB, 44 * MIB, 1 * MIB])
@pytest.mark.parametrize("factor", [1.6, 0.6])
def test_noise_on_one_point_makes_no_level(noisy: int, factor: float) -> None:
    def curve(size: int) -> float:
        return h200_curve(size) * (factor if size == noisy else 1)

    levels, loose = lv.find_levels([(s, curve(s)) for s in lv.footprints(ATTRS["l2_bytes"])])
    assert len(levels) == 4 and noisy in loose
    assert [(level.sizes[0], level.sizes[-1]) for level in levels] == [
        (8 * KIB, 192 * KIB),
        (256 * KIB, 28 * MIB),
        (34 * MIB, 58 * MIB),
        (64 * MIB, GIB),
    ]


def test_a_rise_that_does_not_stay_up_for_three_points_is_no_level() -> None:
    points = [(i * MIB, 100.0) for i in range(1, 9)] + [(9 * MIB, 200.0), (10 * MIB, 200.0)]
    points += [(i * MIB, 100.0) for i in range(11, 15)]
    levels, loose = lv.find_levels(points)
    assert len(levels) == 1 and loose == [9 * MIB, 10 * MIB]


def test_per_sm_summary() -> None:
    got = values(ml.summarise(raw_fixture(), ATTRS))
    assert (got["per_sm_cycles_min"], got["per_sm_cycles_median"], got["per_sm_cycles_max"]) == (260, 275, 290)
    assert (got["per_sm_fastest_sm"], got["per_sm_slowest_sm"]) == (0, 6)
    assert got["per_sm_ns_max"] == pytest.approx(290 / 1.98, abs=0.01)
    assert got["per_sm_blocks"] == SMS and got["per_sm_clock"] == 1980


def test_a_wrong_final_index_or_a_shared_sm_fails() -> None:
    raw = raw_fixture()
    raw["footprints"][3]["final"] = 65
    raw["per_sm"] = per_sm_fixture([*range(SMS - 1), 0])
    failed = [g.name for g in ml.summarise(raw, ATTRS).gates if not g.passed]
    assert failed == [
        "the chase ends where the CPU's walk of the same cycle ends (every footprint, every per-SM block)",
        "the per-SM chase ran one block on every SM (distinct %smid, as many as SMs)",
    ]


def test_a_clock_above_the_maximum_fails() -> None:
    raw = raw_fixture()
    for f in raw["footprints"]:
        f["clock_mhz"] = 2500.0
    failed = [g.name for g in ml.summarise(raw, ATTRS).gates if not g.passed]
    assert failed == ["the SM clock read inside the chase is above zero and at most the attribute's maximum (+5%)"]
