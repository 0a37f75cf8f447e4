"""bank-conflicts on the CPU: its kernel compiles for sm_90, and its gates and results come out of
fixture numbers as the page will show them."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import bank_conflicts as bc

# Fixture values shaped like an H200's (about one cycle per pass, 32 passes at stride 32),
# written by hand for this test: not measurements.
PASSES = {"broadcast": 1.02, "stride_1": 1.0, "stride_2": 2.0, "stride_4": 4.0}
PASSES |= {"stride_8": 8.01, "stride_16": 16.0, "stride_32": 32.0}


def timed(ms: float, clock: float = 1980.0) -> dict[str, Any]:
    """A launch's Timed.raw(): per-run ms, the in-kernel span a little under it, and the clock."""
    return {"ms": [ms] * 10, "stopped": "spread", "reps": 2, "held": 0, "method": "gpu-queued",
            "kernel_ms": [ms * 0.995] * 10, "clock_mhz": [clock] * 10}  # fmt: skip


def fixture(**change: Any) -> dict[str, Any]:
    keys = [bc.label(s) for s in bc.STRIDES]
    raw: dict[str, Any] = {
        "sms": 2,
        "latency": {k: [30.0 + 2 * PASSES[k]] * 3 for k in keys},
        "throughput": {k: [PASSES[k], PASSES[k] * 1.01] for k in keys},
        "timed": {k: timed(PASSES[k] * bc.ITERS * bc.WARPS / 1.98e9 * 1e3) for k in keys},
        "sums_ok": dict.fromkeys(keys, True),
    }
    raw.update(change)
    return raw


def test_the_kernel_compiles_for_sm_90_with_the_probe() -> None:
    cubin = compile_source(bc.SOURCE, "chase.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"
    assert "ProbeMark mark = probe_begin(probe);" in bc.SOURCE and "probe_end(probe, mark);" in bc.SOURCE


def test_expected_sums_and_block_cycles() -> None:
    assert bc.expected_sums(2, 34, iters=3) == [3 * (t % 32) * 2 * 4 for t in range(34)]
    assert bc.expected_sums(32, 32)[31] == (bc.ITERS * 992 * 4) % 2**32
    stamps = [100, 200, 90, 250, 0, 10, 5, 20]  # two blocks of two warps: (start, end) each
    assert bc.block_cycles(stamps, 2) == [160 / (bc.ITERS * 2), 20 / (bc.ITERS * 2)]


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = bc.summarise(fixture(), repeats=3)
    assert outcome.repeats == 3
    assert all(g.passed for g in outcome.gates) and len(outcome.gates) == 3 + len(bc.STRIDES)
    values = {r.name: r for r in outcome.results}
    assert values["cycles_per_access_stride_32"].method == "in-kernel"
    assert values["latency_cycles_stride_1"].method == "in-kernel"
    assert values["ns_per_access_stride_1"].method == "gpu-queued"
    assert values["chase_clock"].value == 1980 and values["chase_clock"].method == "in-kernel"
    assert values["cycles_per_access_stride_32"].value == pytest.approx(32.16)
    assert values["cycles_per_access_stride_32"].unit == "cycles"
    assert values["slowdown_stride_32"].value == 32.0 and values["slowdown_stride_32"].unit == "×"
    assert values["slowdown_broadcast"].value == 1.02
    assert "slowdown_stride_1" not in values
    assert values["latency_cycles_stride_4"].value == 38.0
    assert values["ns_per_access_stride_1"].unit == "ns"
    assert values["ns_per_access_stride_1"].value == pytest.approx(1 / 1.98, abs=1e-4)
    assert len(values["ns_per_access_stride_1"].samples) == 10
    assert not values["slowdown_stride_2"].samples
    assert len(outcome.results) == 7 * 3 + 6 + 1


def test_a_wrong_checksum_or_a_loop_that_missed_the_banks_fails() -> None:
    sums = dict.fromkeys([bc.label(s) for s in bc.STRIDES], True) | {"stride_8": False}
    gates = bc.summarise(fixture(sums_ok=sums), repeats=1).gates
    assert not gates[0].passed and gates[0].detail == "wrong at stride_8"
    flat = {bc.label(s): [1.0] for s in bc.STRIDES}
    gates = bc.summarise(fixture(throughput=flat), repeats=1).gates
    assert gates[0].passed and not gates[1].passed and gates[1].detail == "1.0×"


def test_host_time_in_the_timed_launch_fails_its_gate() -> None:
    raw = fixture()
    late = raw["timed"]["stride_1"]
    raw["timed"]["stride_1"] = late | {"ms": [t + 0.05 for t in late["ms"]]}  # 50 µs of host per run
    raw["timed"]["broadcast"] = late | {"held": 1}
    failed = [g.name for g in bc.summarise(raw, repeats=1).gates if not g.passed]
    assert failed == [
        "no host time in the 32-warp launch at broadcast (events agree with the in-kernel timer)",
        "no host time in the 32-warp launch at stride 1 (events agree with the in-kernel timer)",
    ]
