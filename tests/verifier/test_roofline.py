"""roofline on the CPU: its kernels compile for sm_90 without spilling, the CPU reference follows the
kernel's chains step by step, and the gates and results come out of fixture numbers."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import roofline as rl
from verifier.kernels import roofline as kern

# Fixture values shaped like an H200's (132 SMs, 1980 MHz, 4814 GB/s theoretical), written by
# hand for this test: not measurements.
ATTRS = {
    "sm_count": 132,
    "cc": "9.0",
    "clock_khz": 1_980_000,
    "memory_clock_khz": 3_201_000,
    "bus_width_bits": 6016,
    "l2_bytes": 60 << 20,
}
THREADS = 132 * 8 * 256
ITERS = 59
BUFFER = ITERS * kern.LOADS * THREADS * 16


def point(fmas: int, bandwidth: float = 4.5e12, compute: float = 64e12, clock: float = 1980.0) -> dict[str, Any]:
    """One point as run() keeps it: per-launch ms at the lower of the two roofs, and its checks."""
    flop = BUFFER // 16 * fmas * 2
    moved = BUFFER + THREADS * 4 * (2 if fmas < 4 else 1)
    ms = max(moved / bandwidth, flop / compute) * 1e3
    samples = [ms, ms * 1.004, ms * 0.996] * 4
    return {
        "ms": samples,
        "stopped": "spread",
        "reps": 20,
        "held": 0,
        "method": "gpu-queued",
        "kernel_ms": [t * 0.999 for t in samples],
        "clock_mhz": [clock] * len(samples),
        "max_rel_error": 3e-7,
        "touch_ok": True,
        "finite": True,
    }


def fixture(**change: Any) -> dict[str, Any]:
    raw = {"threads": THREADS, "iters": ITERS, "buffer_bytes": BUFFER, "local_bytes": dict.fromkeys(kern.FMAS, 0)}
    return raw | {"points": {f: point(f) for f in kern.FMAS}} | change


def values(outcome: Any) -> dict[str, Any]:
    return {r.name: r for r in outcome.results}


def test_the_kernels_compile_for_sm_90_without_spilling() -> None:
    import re

    compiled = compile_source(kern.SOURCE, "roofline.cu", "sm_90", ("--ptxas-options=-v",))
    assert compiled.kind == "cubin"
    spills = re.findall(r"(\d+) bytes spill stores", compiled.log)
    assert len(spills) == len(kern.FMAS) + 1 and set(spills) == {"0"}
    for f in kern.FMAS:
        assert f"roof_f{f}(" in kern.SOURCE and f"roof<{f}>" in kern.SOURCE


def test_the_fill_is_exact_floats_below_one() -> None:
    got = kern.words(range(100_000))
    assert got.dtype.name == "float32" and got.min() >= 0 and got.max() < 1
    assert all(float(x) * 4096 == int(float(x) * 4096) for x in got[:1000])
    assert len(set(got[:4096].tolist())) > 1000


def scalar(thread: int, fmas: int, iters: int, total: int) -> tuple[Any, int]:
    """Thread `thread`'s output, FMA by FMA in the kernel's order, in numpy float32 scalars."""
    import numpy as np

    f32 = np.float32
    acc = [f32((thread % 4096) * float(f32(1e-4)) + c * 0.125) for c in range(kern.CHAINS)]
    a, touch = float(f32(kern.A)), 0
    for it in range(iters):
        for u in range(kern.LOADS):
            k = (it * kern.LOADS + u) * total + thread
            x = kern.words([4 * k + i for i in range(4)])
            for i in range(min(fmas, 4), 4):
                touch ^= int(x[i : i + 1].view(np.uint32)[0])
            for j in range(fmas):
                c = (u * fmas + j) % kern.CHAINS
                acc[c] = f32(float(acc[c]) * a + float(x[j % 4]))
    total_sum = f32(0)
    for c in range(kern.CHAINS):
        total_sum = f32(total_sum + acc[c])
    return total_sum, touch


@pytest.mark.parametrize("fmas", [1, 2, 4, 8, 32])
def test_cpu_reference_follows_the_kernel_fma_by_fma(fmas: int) -> None:
    sums, touch = kern.expected((0, 5, 300), fmas, 3, 1000)
    for i, t in enumerate((0, 5, 300)):
        want, word = scalar(t, fmas, 3, 1000)
        assert sums[i] == want
        assert fmas >= 4 or int(touch[i]) == word
    shorter, _ = kern.expected((5,), fmas, 2, 1000)
    assert shorter[0] != sums[1]  # one turn fewer shows


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = rl.summarise(fixture(), ATTRS)
    assert all(g.passed for g in outcome.gates), [g for g in outcome.gates if not g.passed]
    got = values(outcome)
    assert got["gflops_2flop"].unit == "GFLOP/s" and got["gbs_2flop"].unit == "GB/s"
    assert got["gbs_2flop"].value == pytest.approx(4500, rel=1e-3) and got["gflops_2flop"].value < 600
    assert got["gflops_1024flop"].value == pytest.approx(64000, rel=1e-3)
    assert got["intensity_2flop"].value == pytest.approx(0.125, rel=1e-2) and got["intensity_1024flop"].value < 64
    assert got["gflops_2flop_clock"].value == 1980 and got["gflops_2flop"].method == "gpu-queued"
    assert got["bandwidth_plateau_gbs"].value == pytest.approx(4500, rel=1e-3)
    assert got["compute_plateau_gflops"].value == pytest.approx(64000, rel=1e-3)
    assert got["ridge_flop_per_byte"].value == pytest.approx(64 / 4.5, rel=1e-2)
    assert got["ridge_theoretical_flop_per_byte"].value == pytest.approx(132 * 256 * 1.98e9 / 4814.3e9, rel=1e-3)
    assert got["memory_bound_to"].value == pytest.approx(8, rel=1e-2)  # 16 is compute-bound here
    assert got["compute_bound_from"].value == pytest.approx(16, rel=1e-2)
    assert got["roof_fraction_min"].value == pytest.approx(100, rel=1e-2)
    assert got["fp32_peak_gflops_at_clock"].value == pytest.approx(132 * 256 * 1.98, rel=1e-4)
    assert got["threads_launched"].value == THREADS and got["buffer_bytes"].value == BUFFER
    assert outcome.repeats == 12


def test_a_knee_below_both_roofs_is_the_least_share_of_its_roof() -> None:
    raw = fixture()
    raw["points"][128]["ms"] = [t * 1.25 for t in raw["points"][128]["ms"]]
    raw["points"][128]["kernel_ms"] = [t * 0.999 for t in raw["points"][128]["ms"]]
    got = values(rl.summarise(raw, ATTRS))
    assert got["roof_fraction_min"].value == pytest.approx(80, rel=1e-2)
    assert "256 FLOP per load" in got["roof_fraction_min"].description


def test_wrong_outputs_fail_first_and_report_nothing() -> None:
    raw = fixture()
    raw["points"][64] = raw["points"][64] | {"max_rel_error": 2e-3}
    outcome = rl.summarise(raw, ATTRS)
    assert [g.passed for g in outcome.gates] == [False] and outcome.results == []
    raw = fixture()
    raw["points"][1] = raw["points"][1] | {"touch_ok": False}
    assert not rl.summarise(raw, ATTRS).gates[0].passed


def test_a_rate_above_the_peak_per_clock_or_the_bandwidth_fails() -> None:
    slow_clock = fixture(points={f: point(f, clock=1500.0) for f in kern.FMAS})
    gates = {g.name: g for g in rl.summarise(slow_clock, ATTRS).gates}
    assert not next(g for n, g in gates.items() if "FP32 peak per clock" in n).passed
    fast = fixture(points={f: point(f, bandwidth=5.2e12) for f in kern.FMAS})
    gates = {g.name: g for g in rl.summarise(fast, ATTRS).gates}
    assert not next(g for n, g in gates.items() if "theoretical" in n).passed
    assert next(g for n, g in gates.items() if "FP32 peak per clock" in n).passed


def test_spills_and_host_time_fail() -> None:
    gates = rl.summarise(fixture(local_bytes={1: 16}), ATTRS).gates
    assert not next(g for g in gates if "spills" in g.name).passed
    raw = fixture()
    raw["points"][8] = raw["points"][8] | {"held": 2}
    assert [g.passed for g in rl.summarise(raw, ATTRS).gates].count(False) == 1
