"""tensor-core on the CPU: its kernels compile (mma.sync for sm_90, wgmma for sm_90a), the wgmma
shared-memory layout and descriptor are what the PTX ISA describes, and the gates and results
come out of fixture numbers as the page will show them."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiment import Outcome
from verifier.experiments import tensor_core as tc
from verifier.kernels import mma_sync, wgmma

# Fixture values shaped like an H200's (132 SMs, 1980 MHz maximum), written by hand for this
# test: not measurements. Per clock per SM: wgmma 3500 FLOP (85%), mma.sync 2100 (51%).
ATTRS = {"sm_count": 132, "cc": "9.0", "clock_khz": 1_980_000}
MMA_INSTRUCTIONS = 132 * mma_sync.BLOCKS_PER_SM * mma_sync.BLOCK // 32 * mma_sync.ITERS * mma_sync.ACC
WGMMA_INSTRUCTIONS = 132 * wgmma.WARPGROUPS * wgmma.ITERS * wgmma.UNROLL
NVML = {"sm_clock_mhz": 1755, "clock_limited_by": "software power cap", "power_w": 698.2, "power_limit_w": 700.0}


def measured(instructions: int, flop: int, per_clock: float, mhz: float, n: int = 10) -> dict[str, Any]:
    """Raw numbers for one instruction: n samples at per_clock FLOP/clk/SM and mhz, events and
    in-kernel span agreeing."""
    ms = instructions * flop / (per_clock * mhz * 1e6 * 132) * 1e3
    timed = {
        "ms": [ms * (1 + 0.001 * (i % 3 - 1)) for i in range(n)],
        "stopped": "spread",
        "reps": 20,
        "held": 0,
        "kernel_ms": [ms * 0.998] * n,
        "clock_mhz": [mhz] * n,
        "method": "gpu-queued",
    }
    return {
        "timed": timed,
        "warm_s": 0.51,
        "under_load": dict(NVML),
        "check_error": 3e-7,
        "loop_error": 2e-6,
        "instructions": instructions,
        "layout": "fixture",
    }


def raw(wgmma_per_clock: float = 3500.0, wgmma_mhz: float = 1755.0) -> dict[str, Any]:
    return {
        "mma_sync": measured(MMA_INSTRUCTIONS, mma_sync.FLOP, 2100.0, 1830.0),
        "wgmma": measured(WGMMA_INSTRUCTIONS, wgmma.FLOP, wgmma_per_clock, wgmma_mhz),
    }


def results(outcome: Outcome) -> dict[str, Any]:
    return {r.name: r for r in outcome.results}


@pytest.mark.parametrize("name", ["mma_tile", "mma_loop"])
def test_the_mma_sync_kernels_compile_for_sm_90(name: str) -> None:
    cubin = compile_source(mma_sync.SOURCE, f"{name}.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"


@pytest.mark.parametrize("name", ["wgmma_check", "wgmma_loop"])
def test_the_wgmma_kernels_compile_for_sm_90a(name: str) -> None:
    cubin = compile_source(wgmma.SOURCE, f"{name}.cu", "sm_90a")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"
    # ptxas advises (C7515 'wgmma ... serialized', C7519 'warpgroup.arrive is injected') where other
    # instructions touch the accumulators between wgmmas: each would stall the Tensor Cores
    assert "GMMA" not in cubin.log.upper(), cubin.log


def test_the_descriptor_fields_sit_where_the_ptx_isa_puts_them() -> None:
    desc = wgmma.descriptor(0x1230, lbo=128, sbo=256)
    assert desc & 0x3FFF == 0x1230 >> 4
    assert (desc >> 16) & 0x3FFF == 128 >> 4 and (desc >> 32) & 0x3FFF == 256 >> 4
    assert (desc >> 49) & 0x7 == 0 and desc >> 62 == 0  # base offset 0, no swizzle
    assert wgmma.descriptor(0x40000 + 0x100) == wgmma.descriptor(0x100)  # 18 address bits, the 4 low ones dropped


def test_the_packed_operand_is_core_matrices_of_8_rows_of_16_bytes() -> None:
    rows = 64
    x = np.arange(rows * 16, dtype=np.float32).reshape(rows, 16).astype(np.float16)
    packed = wgmma.pack(x).view(np.float16)
    # (8-row group, K half, row, column): LBO = 128 bytes to the next K half, SBO = 256 to the next group
    expected = x.reshape(rows // 8, 8, 2, 8).transpose(0, 2, 1, 3).ravel()
    assert np.array_equal(packed, expected)
    assert np.array_equal(packed[:64].reshape(8, 8), x[:8, :8])  # the first core matrix: 128 contiguous bytes
    assert np.array_equal(packed[64:128].reshape(8, 8), x[:8, 8:])  # its neighbour in K, LBO bytes on
    assert np.array_equal(packed[128:192].reshape(8, 8), x[8:16, :8])  # its neighbour in M, SBO bytes on
    assert all(wgmma.offset(r, k) == 2 * int(np.flatnonzero(packed == x[r, k])[0]) for r in (0, 9, 63) for k in (0, 15))


@pytest.mark.parametrize(
    ("fragment", "threads", "shape"), [(mma_sync.fragment, 32, (16, 8)), (wgmma.fragment, 128, (64, 256))]
)
def test_the_accumulator_fragments_cover_the_tile_once(fragment: Any, threads: int, shape: tuple[int, int]) -> None:
    seen = [rc for t in range(threads) for rc in fragment(t)]
    assert sorted(seen) == [(r, c) for r in range(shape[0]) for c in range(shape[1])]


def test_the_wgmma_fragment_is_the_ptx_isa_figure() -> None:
    assert wgmma.fragment(0)[:4] == [(0, 0), (0, 1), (8, 0), (8, 1)]
    assert wgmma.fragment(5)[4:8] == [(1, 10), (1, 11), (9, 10), (9, 11)]  # lane 5: row 1, columns 2 + 8
    assert wgmma.fragment(32)[0] == (16, 0) and wgmma.fragment(127)[-1] == (63, 255)


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = tc.summarise(raw(), ATTRS)
    assert all(g.passed for g in outcome.gates), [g for g in outcome.gates if not g.passed]
    values = results(outcome)
    assert values["dense_fp16_peak_flop_per_clock_per_sm"].value == 4096
    assert values["sm_clock_max"].value == 1980
    assert values["wgmma_flop_per_clock_per_sm"].value == 3500
    assert values["wgmma_fraction_of_peak_per_clock"].value == round(100 * 3500 / 4096, 1) == 85.4
    assert values["wgmma_tflops"].value == round(3500 * 1755e6 * 132 / 1e12, 1)
    assert values["wgmma_tflops"].method == "gpu-queued" and len(values["wgmma_tflops"].samples) == 10
    assert values["wgmma_clock"].value == 1755 and values["wgmma_clock"].method == "in-kernel"
    assert values["mma_sync_flop_per_clock_per_sm"].value == 2100
    assert values["mma_sync_vs_wgmma_per_clock"].value == 60.0
    assert values["wgmma_clock_limited_by"].value == "software power cap"
    assert values["wgmma_power"].value == 698.2 and values["wgmma_power"].method == "info"
    assert outcome.repeats == 10
    for result in values.values():
        assert result.unit in ("", "%", "MHz", "W", "TFLOP/s", "FLOP/clock/SM"), result


def test_a_clock_held_back_is_said_and_the_rate_per_clock_uses_the_in_kernel_clock() -> None:
    outcome = tc.summarise(raw(wgmma_per_clock=3500.0, wgmma_mhz=1500.0), ATTRS)
    values = results(outcome)
    assert values["wgmma_clock"].value == 1500
    assert values["wgmma_clock_below_max"].value == 480
    text = values["wgmma_clock_below_max"].description
    assert "ran at 1500 MHz" in text and "held back from the maximum 1980 MHz" in text and "power cap" in text
    rate = values["wgmma_tflops"].value
    assert values["wgmma_flop_per_clock_per_sm"].value == round(rate * 1e12 / (1500e6 * 132), -1)  # not at 1980
    steady = results(tc.summarise(raw(wgmma_mhz=1975.0), ATTRS))["wgmma_clock_below_max"]
    assert steady.value == 5 and "at its maximum" in steady.description


def test_a_rate_per_clock_above_the_peak_fails_a_gate() -> None:
    outcome = tc.summarise(raw(wgmma_per_clock=4200.0), ATTRS)
    failed = [g for g in outcome.gates if not g.passed]
    assert [g.name for g in failed] == ["no wgmma sample is above the dense FP16 peak per clock per SM"]
    assert "highest 42" in failed[0].detail
    just_under = copy.deepcopy(raw(wgmma_per_clock=4090.0))
    assert all(g.passed for g in tc.summarise(just_under, ATTRS).gates)


def test_host_time_in_the_samples_fails_the_gate_and_reports_nothing_for_it() -> None:
    leaked = raw()
    leaked["wgmma"]["timed"]["ms"] = [2 * ms for ms in leaked["wgmma"]["timed"]["ms"]]  # events hold twice the kernel
    outcome = tc.summarise(leaked, ATTRS)
    failed = [g.name for g in outcome.gates if not g.passed]
    assert failed == ["no host time in the wgmma samples (events agree with the in-kernel timer)"]
    assert not [r for r in outcome.results if r.name.startswith("wgmma_")]
    assert "mma_sync_tflops" in results(outcome) and "mma_sync_vs_wgmma_per_clock" not in results(outcome)
    held = raw()
    held["mma_sync"]["timed"]["held"] = 1
    assert not tc.summarise(held, ATTRS).gates[2].passed


def test_a_wrong_product_or_loop_fails_and_reports_nothing_for_it() -> None:
    wrong = raw()
    wrong["wgmma"]["check_error"] = 0.4  # LBO and SBO swapped would look like this
    outcome = tc.summarise(wrong, ATTRS)
    assert [g.name for g in outcome.gates if not g.passed] == [tc.INSTRUCTIONS[1].check]
    assert "wgmma_tflops" not in results(outcome)
    skipped = raw()
    skipped["mma_sync"]["loop_error"] = float("nan")
    assert not tc.summarise(skipped, ATTRS).gates[1].passed


def test_no_in_kernel_clock_fails_rather_than_using_the_maximum() -> None:
    unclocked = raw()
    unclocked["wgmma"]["timed"]["clock_mhz"] = []
    outcome = tc.summarise(unclocked, ATTRS)
    assert [g.name for g in outcome.gates if not g.passed] == ["the wgmma kernel read its SM clock"]
    assert "wgmma_flop_per_clock_per_sm" not in results(outcome)


def test_another_architecture_skips_wgmma_and_has_its_own_peak_or_none() -> None:
    a100 = {"mma_sync": raw()["mma_sync"], "wgmma": {"skipped": "wgmma is sm_90a code; this GPU is 8.0"}}
    outcome = tc.summarise(a100, ATTRS | {"sm_count": 132, "cc": "8.0"})
    values = results(outcome)
    assert values["dense_fp16_peak_flop_per_clock_per_sm"].value == 2048
    assert "wgmma_tflops" not in values and values["wgmma_note"].value.startswith("wgmma is sm_90a")
    unknown = tc.summarise(a100, ATTRS | {"cc": "8.6"})
    assert "dense_fp16_peak_flop_per_clock_per_sm" not in results(unknown)
    assert "mma_sync_flop_per_clock_per_sm" in results(unknown) and all(g.passed for g in unknown.gates)


def test_a_wgmma_that_could_not_run_fails_its_gate_and_keeps_mma_sync() -> None:
    broken = {"mma_sync": raw()["mma_sync"], "wgmma": {"error": "NVRTC_ERROR_INVALID_OPTION (5): sm_90a"}}
    outcome = tc.summarise(broken, ATTRS)
    assert [g.name for g in outcome.gates if not g.passed] == ["the wgmma kernels compiled, loaded and ran"]
    assert "mma_sync_tflops" in results(outcome)
