"""register-spilling on the CPU: NVRTC really caps the registers and spills (its log says so),
the CPU reference follows the kernel's map, and the gates and results come out of fixture
numbers as the page will show them."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import register_spilling as rs

from outcomes import recordable, values

ATTRS = {"sm_count": 132, "max_threads_per_sm": 2048}
THREADS = 132 * rs.BLOCKS_PER_SM * rs.BLOCK


def log(used: int, frame: int, stores: int, loads: int) -> str:
    return (
        "ptxas info    : Compiling entry function 'spill' for 'sm_90'\n"
        f"ptxas         .     {frame} bytes stack frame, {stores} bytes spill stores, {loads} bytes spill loads\n"
        f"ptxas info    : Used {used} registers, used 1 barriers\n"
    )


def fixture(ms: dict[int, float] | None = None, **change: Any) -> dict[str, Any]:
    """run()'s raw data as predicted for an H200, written by hand for this test: not measurements."""
    ms = ms or {255: 0.8, 64: 1.2, 32: 8.0}
    want = [0.5 + i / 1000 for i in range(rs.CHECKED)]
    shapes = {"nocap": (80, 0, 0, 0, 3), 255: (79, 0, 0, 0, 3), 64: (64, 64, 108, 92, 4), 32: (32, 280, 484, 468, 8)}
    variants: dict[Any, dict[str, Any]] = {}
    for key, (used, frame, stores, loads, blocks) in shapes.items():
        variants[key] = {
            "log": log(used, frame, stores, loads),
            "registers": used,
            "local_memory": frame,
            "max_threads_per_block": 1024 if used <= 64 else 768,
            "blocks_per_sm": blocks,
        }
        if key != "nocap":
            t = ms[key]  # type: ignore[index]
            timed = {"ms": [t, t * 1.01, t * 0.99] * 4, "stopped": "spread", "reps": 2, "held": 0}
            timed |= {"kernel_ms": [t * 0.999] * 12, "clock_mhz": [1980.0] * 12, "method": "gpu-queued"}
            variants[key] |= {"finite": True, "checked": list(want), "differ_from_base": 0, "timed": timed}
    return {"threads": THREADS, "variants": variants, "expected": want} | change


def test_nvrtc_caps_the_registers_and_spills_what_does_not_fit() -> None:
    reports = {}
    for cap in rs.CAPS:
        compiled = compile_source(rs.SOURCE, "spill.cu", "sm_90", rs.options(cap))
        assert compiled.image[:4] == b"\x7fELF"
        reports[cap] = rs.ptxas_report(compiled.log)
        assert reports[cap]["used"] <= cap
    assert reports[255]["spill_stores"] == 0 and reports[255]["stack_frame"] == 0 and reports[255]["used"] > 64
    assert 0 < reports[64]["spill_stores"] < reports[32]["spill_stores"]
    assert reports[32]["stack_frame"] > reports[64]["stack_frame"] > 0
    assert reports[32]["line"].startswith("ptxas . ") and "bytes spill loads" in reports[32]["line"]


def test_cpu_reference_follows_the_map() -> None:
    """Thread with x = 1e-4 after one round, by hand: v[k] = a·v[k] + (b·v[k+1] + x), v[63] using the new v[0]."""
    import numpy as np

    x = np.float32(1e-4)
    a, b = float(np.float32(rs.A)), float(np.float32(rs.B))
    v = [np.float32(x * np.float32(k + 1)) for k in range(rs.VALUES)]
    for k in range(rs.VALUES):
        inner = np.float32(float(v[(k + 1) % rs.VALUES]) * b + float(x))
        v[k] = np.float32(float(v[k]) * a + float(inner))
    total = np.float32(0)
    for k in range(rs.VALUES):
        total = np.float32(total + v[k])
    assert rs.expected([x], 1)[0] == total
    assert rs.expected([x], 2)[0] != total


def test_the_checked_threads_span_the_grid() -> None:
    picked = rs.checked_threads(THREADS)
    assert picked[0] == 0 and picked[-1] == THREADS - 1 and len(picked) == rs.CHECKED


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = rs.summarise(fixture(), ATTRS)
    recordable(outcome, rs)
    assert [(g.name, g.passed) for g in outcome.gates if not g.passed] == []
    assert len(outcome.gates) == 6
    got = values(outcome)
    assert got["cap255_registers"] == 79 and got["cap64_registers"] == 64 and got["cap32_registers"] == 32
    assert got["cap255_local_memory"] == 0 and got["cap32_local_memory"] == 280
    assert got["cap32_spill_stores"] == 484 and got["cap64_spill_loads"] == 92 and got["cap64_stack_frame"] == 64
    assert got["cap255_ptxas_line"] == "ptxas . 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
    assert got["nocap_registers"] == 80 and "nocap_time_median" not in got
    assert got["cap255_occupancy"] == 37.5 and got["cap32_occupancy"] == 100.0 and got["cap64_blocks_per_sm"] == 4
    assert got["cap255_time_median"] == 0.8 and got["cap32_clock"] == 1980 and got["block_size"] == 256
    assert got["cap64_slowdown"] == 1.5 and got["cap32_slowdown"] == 10.0 and "cap255_slowdown" not in got
    assert outcome.repeats == 12


def test_wrong_outputs_fail_and_report_nothing() -> None:
    raw = fixture()
    raw["variants"][32]["checked"][7] *= 1.001
    outcome = rs.summarise(raw, ATTRS)
    recordable(outcome, rs)
    assert [g.passed for g in outcome.gates] == [False] and outcome.results == []
    assert "cap 32: 1.00e-03" in outcome.gates[0].detail
    raw = fixture()
    raw["variants"][64]["finite"] = False
    assert not rs.summarise(raw, ATTRS).gates[0].passed


def test_a_variant_over_its_cap_or_with_other_bits_fails() -> None:
    raw = fixture()
    raw["variants"][32]["registers"] = 40
    raw["variants"][64]["differ_from_base"] = 3
    gates = {g.name: g for g in rs.summarise(raw, ATTRS).gates}
    assert not gates["each capped variant uses at most its cap of registers"].passed
    assert "cap 32: 40 registers" in gates["each capped variant uses at most its cap of registers"].detail
    bits = gates["spilling changed no output: each variant's outputs equal the uncapped one's bit for bit"]
    assert not bits.passed and f"cap 64: 3 of {THREADS} differ" in bits.detail


def test_host_time_in_a_variant_fails_its_own_gate() -> None:
    raw = fixture()
    timed = raw["variants"][32]["timed"]
    timed["kernel_ms"] = [t * 0.5 for t in timed["kernel_ms"]]
    gates = [g for g in rs.summarise(raw, ATTRS).gates if g.name.startswith("no host time")]
    assert [g.passed for g in gates] == [True, True, False]


def test_a_log_without_ptxas_lines_gives_no_figures() -> None:
    assert rs.ptxas_report("") == {
        "line": "",
        "used": None,
        "stack_frame": None,
        "spill_stores": None,
        "spill_loads": None,
    }
