"""fp32-throughput on the CPU: its kernel compiles for sm_90, the CPU reference is the chain it
claims, and the gates and results come out of fixture numbers as the page will show them."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import fp32_throughput as fp

# Fixture values shaped like an H200's (132 SMs, 1980 MHz attribute, ~60 TFLOP/s achieved),
# written by hand for this test: not measurements.
ATTRS = {"sm_count": 132, "cc": "9.0", "clock_khz": 1_980_000}
THREADS = 132 * fp.WAVES * fp.BLOCK
FLOP = THREADS * fp.ITERS * fp.UNROLL * fp.CHAINS * 2


def fixture(tflops: list[float], clock: float = 1980.0, **change: Any) -> dict[str, Any]:
    """Timed.raw() of the samples (in-kernel span a little under the events) and the checks."""
    ms = [FLOP / (t * 1e12) * 1e3 for t in tflops]
    raw = {"ms": ms, "stopped": "spread", "reps": 12, "held": 0, "method": "gpu-queued"}
    raw |= {"kernel_ms": [t * 0.999 for t in ms], "clock_mhz": [clock] * len(ms)}
    raw |= {"threads": THREADS, "max_rel_error": 2e-7, "finite": True, "warmup_launches": 115}
    return raw | change


def values(outcome: Any) -> dict[str, Any]:
    return {r.name: r for r in outcome.results}


def test_the_kernel_compiles_for_sm_90_with_the_probe() -> None:
    cubin = compile_source(fp.SOURCE, "fma.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"
    assert "ProbeMark mark = probe_begin(probe);" in fp.SOURCE and "probe_end(probe, mark);" in fp.SOURCE


def test_cpu_reference_follows_the_chain() -> None:
    """Thread 5's sum after one loop turn, step by step in scalars: chain c starts at 5e-4 + c/8."""
    import numpy as np

    total = np.float32(0)
    for c in range(fp.CHAINS):
        x = np.float32(5 * float(np.float32(1e-4)) + c * 0.125)
        for _ in range(fp.UNROLL):
            x = np.float32(float(x) * float(np.float32(fp.A)) + float(np.float32(fp.B)))
        total = np.float32(total + x)
    assert fp.expected((0, 5), 1)[1] == total
    assert fp.expected((5,), 2)[0] != total  # one more turn shows


def test_warm_up_lasts_half_a_second_even_at_the_peak() -> None:
    ideal_ms = FLOP / (132 * 256 * 1.98e9) * 1e3  # 4.23 ms: no launch is faster
    assert fp.warmup_launches(10.0, THREADS, ATTRS) == -(-fp.WARMUP_MS // ideal_ms)  # a cold first launch
    assert fp.warmup_launches(5.0, THREADS, ATTRS | {"cc": "1.0"}) == 100
    assert fp.warmup_launches(0.0, THREADS, ATTRS | {"clock_khz": 0}) >= 1


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = fp.summarise(fixture([60.0, 61.0, 59.0]), ATTRS)
    assert [g.passed for g in outcome.gates] == [True, True, True, True]
    got = values(outcome)
    assert got["fp32_tflops"].value == 60.0 and got["fp32_tflops"].unit == "TFLOP/s"
    assert got["fp32_tflops"].samples == [60.0, 61.0, 59.0] and got["fp32_tflops"].method == "gpu-queued"
    assert got["fp32_tflops_best"].value == 61.0
    assert got["fp32_theoretical_tflops"].value == round(132 * 128 * 2 * 1.98e9 / 1e12, 2) == 66.91
    assert got["fp32_fraction_of_theoretical"].value == 89.7
    assert got["sm_clock"].value == 1980.0 and got["fp32_lanes_per_sm"].value == 128
    assert "whitepaper" in got["fp32_lanes_per_sm"].description
    assert got["fp32_peak_flop_per_clock_per_sm"].value == 256
    assert got["fp32_flop_per_clock_per_sm"].value == round(60e12 / (132 * 1.98e9), 1) == 229.6
    assert got["fp32_fraction_of_peak_per_clock"].value == 89.7
    assert got["fp32_clock"].value == 1980 and got["fp32_clock"].method == "in-kernel"
    assert "115 warm-up launches" in got["fp32_tflops"].description
    assert outcome.repeats == 3


def test_a_throttled_clock_is_the_one_the_per_clock_rate_uses() -> None:
    """At 1500 of 1980 MHz, 48 TFLOP/s is 242 FLOP per clock per SM: 95% of the peak per clock,
    though only 72% of the theoretical at the maximum clock."""
    got = values(fp.summarise(fixture([48.0] * 10, clock=1500.0), ATTRS))
    assert got["fp32_clock"].value == 1500
    assert got["fp32_flop_per_clock_per_sm"].value == round(48e12 / (132 * 1.5e9), 1) == 242.4
    assert got["fp32_fraction_of_peak_per_clock"].value == 94.7
    assert got["fp32_fraction_of_theoretical"].value == 71.7
    assert got["fp32_peak_tflops_at_clock"].value == round(132 * 256 * 1.5e9 / 1e12, 2)


def test_a_per_clock_rate_above_the_peak_fails() -> None:
    """60 TFLOP/s at 1500 MHz would be 303 FLOP per clock per SM: more than 256 lanes can do,
    though it passes the gate against the maximum clock."""
    gates = fp.summarise(fixture([60.0] * 10, clock=1500.0), ATTRS).gates
    per_clock = next(g for g in gates if "per clock" in g.name)
    assert not per_clock.passed and "303.0" in per_clock.detail
    assert next(g for g in gates if "maximum clock" in g.name).passed
    no_clock = fp.summarise(fixture([60.0], clock_mhz=[]), ATTRS).gates
    assert not next(g for g in no_clock if "per clock" in g.name).passed


def test_host_time_in_the_samples_fails() -> None:
    raw = fixture([60.0] * 10)
    late = fp.summarise(raw | {"ms": [t * 1.2 for t in raw["ms"]]}, ATTRS).gates
    held = fp.summarise(raw | {"held": 3}, ATTRS).gates
    assert [g.passed for g in late] == [True, False, True, True] and not held[1].passed


def test_wrong_outputs_fail_and_report_nothing() -> None:
    outcome = fp.summarise(fixture([60.0], max_rel_error=3e-3), ATTRS)
    assert [g.passed for g in outcome.gates] == [False] and outcome.results == []
    assert not fp.summarise(fixture([60.0], finite=False), ATTRS).gates[0].passed


def test_a_rate_above_theoretical_fails_and_a_zero_clock_reports_achieved_only() -> None:
    assert not fp.summarise(fixture([80.0]), ATTRS).gates[-1].passed
    outcome = fp.summarise(fixture([60.0]), ATTRS | {"clock_khz": 0})
    names = [r.name for r in outcome.results]
    assert "fp32_theoretical_tflops" not in names and "fp32_tflops" in names and "fp32_flop_per_clock_per_sm" in names
    assert "SM clock attribute is 0" in str(outcome.results[-1].value)
