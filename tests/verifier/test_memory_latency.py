"""memory-latency on the CPU: its kernels compile for sm_90, the cycle it links is one cycle the
CPU can walk, and its gates and results from fixture data."""

from __future__ import annotations

from typing import Any

import pytest
from verifier.experiments import memory_latency as ml

MIB = 1 << 20
ATTRS = {"l2_bytes": 50 * MIB, "clock_khz": 1_980_000}
"""Fixture values shaped like an H200's attributes, not measurements."""


def test_kernels_compile_for_sm_90_with_plain_loads() -> None:
    pytest.importorskip("cuda.bindings.nvrtc")
    from verifier.cuda import compile_source

    compiled = compile_source(ml.SOURCE, "memory_latency.cu", "sm_90")
    assert compiled.kind == "cubin" and compiled.image[:4] == b"\x7fELF"
    ptx = compile_source(ml.SOURCE, "memory_latency.cu", "compute_90").image.decode()
    chase = ptx.split(".entry chase", 1)[1].split(".entry", 1)[0]
    assert "ld.global.u64" in chase, "the chase uses plain global loads (L1 may serve them)"
    assert ".cg" not in chase and "volatile" not in chase
    assert chase.count("clock64") or "%clock64" in chase


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


def test_levels_expected_per_footprint() -> None:
    levels = [ml.level(f, ATTRS["l2_bytes"]) for f in ml.FOOTPRINTS]
    assert levels == ["L1", "L1", "between", "L2", "L2", "between", "between", "HBM", "HBM"]


def footprint(size: int, cycles: float, ns: float, final: int = 64) -> dict[str, Any]:
    """One footprint as measure() returns it; fixture values, not measurements."""
    base = 0.02
    return {
        "bytes": size,
        "nodes": size // ml.NODE_BYTES,
        "cycles": [cycles, cycles + 1, cycles - 1] * 4,
        "ms_steps": [base] * 12,
        "ms_double": [base + ns * ml.STEPS / 1e6] * 12,
        "final": final,
        "expected": 64,
    }


LATENCIES = [(33, 17), (33, 17), (40, 20), (260, 131), (270, 136), (400, 200), (600, 300), (820, 414), (880, 444)]


def raw_fixture() -> dict[str, Any]:
    return {"footprints": [footprint(f, c, n) for f, (c, n) in zip(ml.FOOTPRINTS, LATENCIES, strict=True)]}


def test_summary_of_good_fixture() -> None:
    outcome = ml.summarise(raw_fixture(), ATTRS)
    assert all(g.passed for g in outcome.gates), outcome.gates
    values = {r.name: r.value for r in outcome.results}
    # ns are the cycles at the 1980 MHz SM clock of ATTRS (the event times of the fixture are not used)
    assert values["cycles_8kib"] == 33 and values["ns_1gib"] == pytest.approx(880 / 1.98, abs=0.01)
    assert values["l1_cycles"] == 33 and values["l2_cycles"] == 265 and values["hbm_cycles"] == 850
    assert values["l2_ns"] == pytest.approx(265 / 1.98, abs=0.01)
    assert values["knee_footprint"] == 64  # first footprint over (265 + 850) / 2 cycles
    assert values["l2_size"] == 50 and values["sm_clock"] == 1980
    assert outcome.repeats == 12
    assert {r.unit for r in outcome.results} == {"cycles", "ns", "MiB", "MHz"}


def test_a_wrong_final_index_or_flat_latency_fails() -> None:
    raw = raw_fixture()
    raw["footprints"][3]["final"] = 65
    for f in raw["footprints"]:
        f["cycles"] = [300.0] * 12
    failed = [g.name for g in ml.summarise(raw, ATTRS).gates if not g.passed]
    assert failed == [
        "the chase ends where the CPU's walk of the same cycle ends (every footprint)",
        "latency rises from L1 to L2 to HBM (cycles)",
    ]
