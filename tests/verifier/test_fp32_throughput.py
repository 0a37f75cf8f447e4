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


def fixture(tflops: list[float], **change: Any) -> dict[str, Any]:
    raw = {"ms": [FLOP / (t * 1e12) * 1e3 for t in tflops], "stopped": "spread", "threads": THREADS}
    raw |= {"max_rel_error": 2e-7, "finite": True}
    return raw | change


def test_the_kernel_compiles_for_sm_90() -> None:
    cubin = compile_source(fp.SOURCE, "fma.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"


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


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = fp.summarise(fixture([60.0, 61.0, 59.0]), ATTRS)
    assert [g.passed for g in outcome.gates] == [True, True]
    values = {r.name: r for r in outcome.results}
    assert values["fp32_tflops"].value == 60.0 and values["fp32_tflops"].unit == "TFLOP/s"
    assert values["fp32_tflops"].samples == [60.0, 61.0, 59.0]
    assert values["fp32_tflops_best"].value == 61.0
    assert values["fp32_theoretical_tflops"].value == round(132 * 128 * 2 * 1.98e9 / 1e12, 2) == 66.91
    assert values["fp32_fraction_of_theoretical"].value == 89.7
    assert values["sm_clock"].value == 1980.0 and values["fp32_lanes_per_sm"].value == 128
    assert outcome.repeats == 3


def test_wrong_outputs_fail_and_report_nothing() -> None:
    outcome = fp.summarise(fixture([60.0], max_rel_error=3e-3), ATTRS)
    assert [g.passed for g in outcome.gates] == [False] and outcome.results == []
    assert not fp.summarise(fixture([60.0], finite=False), ATTRS).gates[0].passed


def test_a_rate_above_theoretical_fails_and_a_zero_clock_reports_achieved_only() -> None:
    assert not fp.summarise(fixture([80.0]), ATTRS).gates[-1].passed
    outcome = fp.summarise(fixture([60.0]), ATTRS | {"clock_khz": 0})
    names = [r.name for r in outcome.results]
    assert "fp32_theoretical_tflops" not in names and "fp32_tflops" in names
    assert "SM clock attribute is 0" in str(outcome.results[-1].value)
