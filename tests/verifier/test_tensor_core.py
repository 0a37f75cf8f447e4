"""tensor-core on the CPU: its inline-PTX kernels compile for sm_90, and the gates and results
come out of fixture numbers as the page will show them."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import tensor_core as tc

# Fixture values shaped like an H200's (132 SMs, 1980 MHz attribute, ~600 TFLOP/s from mma.sync),
# written by hand for this test: not measurements.
ATTRS = {"sm_count": 132, "cc": "9.0", "clock_khz": 1_980_000}
WARPS = 132 * tc.BLOCKS_PER_SM * tc.BLOCK // 32
FLOP = WARPS * tc.ITERS * tc.ACC * 2 * 16 * 8 * 16


def fixture(tflops: list[float], **change: Any) -> dict[str, Any]:
    raw = {"tile_max_error": 4e-7, "loop_wrong": 0, "stopped": "spread", "warps": WARPS}
    return raw | {"ms": [FLOP / (t * 1e12) * 1e3 for t in tflops]} | change


@pytest.mark.parametrize("name", ["mma_tile", "mma_loop"])
def test_the_kernels_compile_for_sm_90(name: str) -> None:
    cubin = compile_source(tc.SOURCE, f"{name}.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"


def test_the_loop_sum_is_exact_in_float32() -> None:
    import numpy as np

    assert np.float16(2.0**-7).view(np.uint16) == tc.HALF
    assert float(np.float32(tc.LOOP_SUM)) == tc.LOOP_SUM == tc.ACC * 4 * tc.ITERS * 2.0**-10


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = tc.summarise(fixture([600.0, 610.0, 590.0]), ATTRS)
    assert [g.passed for g in outcome.gates] == [True, True, True]
    values = {r.name: r for r in outcome.results}
    assert values["mma_fp16_tflops"].value == 600.0 and values["mma_fp16_tflops"].unit == "TFLOP/s"
    assert values["mma_fp16_tflops"].samples == [600.0, 610.0, 590.0]
    assert values["mma_fp16_tflops_best"].value == 610.0
    assert values["dense_fp16_peak_tflops"].value == round(132 * 4096 * 1.98e9 / 1e12, 1) == 1070.5
    assert values["mma_fraction_of_peak"].value == 56.0
    assert outcome.repeats == 3


def test_a_wrong_tile_or_loop_fails_and_reports_nothing() -> None:
    bad_tile = tc.summarise(fixture([600.0], tile_max_error=0.2), ATTRS)
    assert [g.passed for g in bad_tile.gates] == [False, True] and bad_tile.results == []
    bad_loop = tc.summarise(fixture([600.0], loop_wrong=3), ATTRS)
    assert [g.passed for g in bad_loop.gates] == [True, False] and "3 threads" in bad_loop.gates[1].detail


def test_above_the_peak_fails_and_an_unknown_architecture_has_no_peak() -> None:
    assert not tc.summarise(fixture([1200.0]), ATTRS).gates[-1].passed
    outcome = tc.summarise(fixture([300.0]), ATTRS | {"cc": "8.6"})
    assert len(outcome.gates) == 2 and "dense_fp16_peak_tflops" not in [r.name for r in outcome.results]
