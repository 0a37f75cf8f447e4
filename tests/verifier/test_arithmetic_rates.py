"""arithmetic-rates on the CPU: its four kernels compile for sm_90 with the probe, the CPU copies
round each fused step once (as the hardware does, not as two operations would), and the gates
and results come out of fixture numbers as the page will show them."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import arithmetic_rates as ar
from verifier.kernels import arith_chains as ac

# Fixture values shaped like an H200's (132 SMs, 1980 MHz, rates a little under the peaks),
# written by hand for this test: not measurements.
ATTRS = {"sm_count": 132, "cc": "9.0", "clock_khz": 1_980_000}
THREADS = 132 * ac.WAVES * ac.BLOCK
RATES = {"fp64": 63.5, "fp16": 250.0, "bf16": 249.0, "int32": 63.8}
KINDS = {k.name: k for k in ac.KINDS}
DUMP = """
        /*0000*/                   IMAD R1, R0, UR4, R1 ;
        /*0010*/              @!P2 BRA 0x80 ;
        /*0020*/                   IMAD R2, R2, UR5, R0 ;
        /*0030*/                   UIADD3 UR4, UR4, 0x1, URZ ;
        /*0040*/                   IMAD R3, R3, UR5, R0 ;
        /*0050*/              @!P2 BRA 0x20 ;
        /*0060*/                   IMAD.MOV.U32 R4, RZ, RZ, 0x1 ;
"""


def kind_raw(name: str, rate: float, clock: float = 1980.0, samples: int = 10) -> dict[str, Any]:
    """One kind's Timed.raw() at `rate` results per clock per SM, and its checks."""
    ms = THREADS * ar.steps_per_thread(KINDS[name]) / (rate * clock * 1e6 * 132) * 1e3
    raw = {"ms": [ms] * samples, "stopped": "spread", "reps": 4, "held": 0, "method": "gpu-queued"}
    raw |= {"kernel_ms": [ms * 0.998] * samples, "clock_mhz": [clock] * samples}
    return raw | {"got": [1, 2], "want": [1, 2], "twins": True, "warmup_launches": 90, "sass": {"dump": DUMP}}


def fixture(**change: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"threads": THREADS} | {k: kind_raw(k, r) for k, r in RATES.items()}
    return raw | change


def values(outcome: Any) -> dict[str, Any]:
    return {r.name: r for r in outcome.results}


def test_the_kernels_compile_for_sm_90_with_the_probe() -> None:
    cubin = compile_source(ac.SOURCE, "arith_chains.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"
    for kind in ac.KINDS:
        assert f'extern "C" __global__ void {kind.kernel}(' in ac.SOURCE
    assert (
        ac.SOURCE.count("ProbeMark mark = probe_begin(probe);") == 4 and ac.SOURCE.count("probe_end(probe, mark);") == 4
    )


def test_fma64_rounds_once() -> None:
    """(1 + 2^-30)(1 - 2^-30) - 1 is -2^-60 fused; rounded twice, the product is 1 and the sum 0."""
    x, a = 1 + 2**-30, 1 - 2**-30
    assert ac.fma64(x, a, -1.0) == -(2.0**-60) and x * a - 1.0 == 0.0
    rng = random.Random(3)
    for _ in range(200):
        x, a, b = (rng.uniform(-4, 4) for _ in range(3))
        assert ac.fma64(x, a, b) == float(Fraction(x) * Fraction(a) + Fraction(b))


def test_round_bf16_is_round_to_nearest_even_of_float32() -> None:
    import numpy as np

    assert ac.round_bf16(1 + 2**-8) == 1.0 and ac.round_bf16(1 + 3 * 2**-8) == 1 + 2**-6  # ties to even
    assert ac.round_bf16(1 + 2**-8 + 2**-20) == 1 + 2**-7
    values = np.random.default_rng(5).uniform(-3, 3, 1000).astype(np.float32)
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)
    assert np.array_equal(ac.round_bf16(values.astype(np.float64)), rounded.astype(np.float64))


def test_packed_constants_hold_the_value_in_both_halves() -> None:
    a, b = ac.packed(KINDS["fp16"])
    assert a == 0x3BFE3BFE and b == 0x14001400  # 1 - 2^-10 and 2^-10 as float16
    a, b = ac.packed(KINDS["bf16"])
    assert a == 0x3F7E3F7E and b == 0x3C003C00  # 1 - 2^-7 and 2^-7 as bfloat16


def test_cpu_references_follow_the_chains() -> None:
    """One loop turn of thread 5 step by step in scalars, and a further turn shows in each format."""
    import numpy as np

    f16 = np.float16
    total = np.float32(0)
    for c in range(ac.CHAINS):
        for lane in range(2):
            h = f16(5 / 8192 + c * 0.125 + lane * 0.0625)
            for _ in range(ac.UNROLL):
                h = f16(float(h) * float(f16(ac.KINDS[1].a)) + float(f16(ac.KINDS[1].b)))
            total = np.float32(total + np.float32(h))
    assert ac.expected(KINDS["fp16"], (5,), 1) == [float(total)]
    x = [5 * 8 + c for c in range(ac.CHAINS)]
    for _ in range(ac.UNROLL):
        x = [(v * 1664525 + 1013904223) % 2**32 for v in x]
    assert ac.expected(KINDS["int32"], (5,), 1) == [sum(x) % 2**32]
    for kind in ac.KINDS:
        one, two = ac.expected(kind, (0, 5, 4096 + 5), 1), ac.expected(kind, (0, 5, 4096 + 5), 2)
        assert one[1] == one[2] and one[1] != two[1] and one[0] != one[1]


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = ar.summarise(fixture(), ATTRS)
    assert outcome.repeats == 10 and all(g.passed for g in outcome.gates) and len(outcome.gates) == 12
    got = values(outcome)
    assert got["fp64_per_clock_per_sm"].value == 63.5 and got["fp64_per_clock_per_sm"].unit == "results/clock/SM"
    assert got["fp16_per_clock_per_sm"].value == 250.0 and got["int32_per_clock_per_sm"].value == 63.8
    assert got["fp64_peak_per_clock_per_sm"].value == 64 and got["bf16_peak_per_clock_per_sm"].value == 256
    assert got["fp32_peak_per_clock_per_sm"].value == 128
    assert got["fp16_fraction_of_peak_per_clock"].value == round(100 * 250 / 256, 1) == 97.7
    assert got["fp64_tflops"].value == round(2 * 63.5 * 132 * 1.98e9 / 1e12, 2) == 33.19
    assert got["int32_tops"].unit == "TOPS" and "bf16_tflops" in got and "int32_tflops" not in got
    assert got["fp16_clock"].value == 1980 and got["fp16_clock"].method == "in-kernel"
    assert got["int32_sass_per_loop"].value == 2 and got["int32_sass_mnemonics"].value == "2 IMAD"
    assert got["fp64_sass_per_loop"].value == 0 and "fp64_sass" not in got
    assert got["int32_sass"].method == "info" and "/*0020*/ IMAD R2, R2, UR5, R0 ;" in got["int32_sass"].value
    assert got["threads_launched"].value == THREADS and got["steps_per_chain"].value == ac.ITERS * ac.UNROLL


def test_a_rate_per_clock_above_the_peak_fails() -> None:
    """70 DFMA per clock per SM is more than the 64 FP64 units of a Hopper SM can do."""
    gates = ar.summarise(fixture(fp64=kind_raw("fp64", 70.0)), ATTRS).gates
    failed = [g for g in gates if not g.passed]
    assert len(failed) == 1 and "fp64 rate per clock" in failed[0].name and "best 70.0" in failed[0].detail
    no_clock = ar.summarise(fixture(bf16=kind_raw("bf16", 200.0) | {"clock_mhz": []}), ATTRS).gates
    assert [g.name for g in no_clock if not g.passed] == ["the bf16 rate per clock is at most the peak per clock"]


def test_wrong_outputs_fail_and_report_nothing_of_that_kind() -> None:
    outcome = ar.summarise(fixture(int32=kind_raw("int32", 63.0) | {"got": [1, 3]}), ATTRS)
    assert [g.name for g in outcome.gates if not g.passed] == [
        "the int32 chains' outputs equal the CPU's, each fused step rounded once"
    ]
    assert not [r for r in outcome.results if r.name.startswith("int32_")]
    twins = ar.summarise(fixture(fp16=kind_raw("fp16", 250.0) | {"twins": False}), ATTRS)
    assert not twins.gates[next(i for i, g in enumerate(twins.gates) if "fp16" in g.name)].passed


def test_host_time_fails_and_a_gpu_without_peaks_reports_rates_only() -> None:
    late = kind_raw("fp64", 63.0)
    gates = ar.summarise(fixture(fp64=late | {"ms": [t * 1.2 for t in late["ms"]]}), ATTRS).gates
    assert [g.name for g in gates if not g.passed] == [
        "no host time in the fp64 kernel (events agree with the in-kernel timer)"
    ]
    outcome = ar.summarise(fixture(), ATTRS | {"cc": "8.0"})
    got = values(outcome)
    assert "fp64_per_clock_per_sm" in got and "fp64_peak_per_clock_per_sm" not in got and "peak_note" in got
    assert len(outcome.gates) == 8 and all(g.passed for g in outcome.gates)
    note = values(ar.summarise(fixture(fp64=kind_raw("fp64", 63.0) | {"sass": {"missing": "no cuobjdump"}}), ATTRS))
    assert note["fp64_sass_note"].value == "no cuobjdump" and "fp64_sass_per_loop" not in note
