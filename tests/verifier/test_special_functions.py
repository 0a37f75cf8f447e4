"""special-functions on the CPU: its kernels compile for sm_90, the CPU reference lands on each map's
fixed point, and the gates and results come out of fixture numbers as the pages will cite them."""

from __future__ import annotations

import math
from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import special_functions as sf

from cudagloss.model.chart_spec import match_results
from verifier import sm_rate

# Fixture values shaped like an H200's (132 SMs; MUFU at the guide's 16 results per clock per SM, FFMA
# at 126), written by hand for this test: not measurements.
SMS = 132
ATTRS = {"sm_count": SMS, "cc": "9.0"}
RATES = {"ffma": 126.0, "ex2": 15.9, "rsqrt": 16.0, "sin": 15.8}
WORK = 32 * sf.WARPS * sf.CHAINS * sf.STEPS


def fixture(rates: dict[str, float] = RATES, error: float = 3e-7, **change: Any) -> dict[str, Any]:
    raw = {}
    for name, rate in rates.items():
        cycles = round(WORK / rate)
        raw[name] = {"cycles": [[cycles] * SMS] * 5, "distinct_sms": [SMS] * 5, "clock_mhz": [1980.0] * 5}
        raw[name]["max_rel_error"] = 0.0 if name == "ffma" else error
    return raw | change


def values(outcome: Any) -> dict[str, Any]:
    return {r.name: r for r in outcome.results}


def test_every_kernel_compiles_for_sm_90() -> None:
    cubin = compile_source(sf.SOURCE, "special_functions.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"
    for f in sf.FUNCTIONS:
        assert f"{f.name}_rate(" in sf.SOURCE
    assert all(f"{n}.approx.ftz.f32" in sf.SOURCE for n in ("ex2", "rsqrt", "sin"))


def test_the_cpu_reference_lands_on_each_maps_fixed_point() -> None:
    threads = sf.checked(SMS)
    ex2 = sf.expected("ex2", threads)
    assert abs(ex2 - 2.0**-ex2).max() < 1e-12 and abs(ex2 - 0.641185744).max() < 1e-8
    assert abs(sf.expected("rsqrt", threads) - 1).max() < 1e-12
    sin = sf.expected("sin", threads)
    assert abs(sin - [[math.sin(v + 1) for v in row] for row in sin]).max() < 1e-12 and abs(sin - 0.935).max() < 1e-3
    assert (sf.expected("ffma", threads) == 1).all()
    assert sf.expected("ex2", [5], 1)[0, 2] == 2.0 ** -(0.5 + 5 / 16 + 2)  # one step from the kernel's start


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = sf.summarise(fixture(), ATTRS)
    assert all(g.passed for g in outcome.gates) and len(outcome.gates) == 3
    got = values(outcome)
    assert got["ex2_results_per_clock"].value == 15.9 and got["ex2_results_per_clock"].unit == "results/clock/SM"
    assert got["ffma_results_per_clock"].value == 126.0 and got["sin_results_per_clock"].samples == [15.8] * 5
    assert got["ffma_over_rsqrt"].value == round(126 / 16, 2) and got["ffma_over_sin"].unit == "×"
    assert got["guide_mufu_per_clock"].value == 16 and got["guide_ffma_per_clock"].value == 128
    assert got["rsqrt_over_guide"].value == 1.0 and got["ffma_over_guide"].value == 0.984
    assert got["functions_clock"].value == 1980 and outcome.repeats == 5
    bars = match_results("{name}_results_per_clock", [r.name for r in outcome.results])
    assert [m.token for m in bars] == ["ffma", "ex2", "rsqrt", "sin"]


def test_a_rate_past_one_issue_per_scheduler_per_clock_fails() -> None:
    gates = sf.summarise(fixture(RATES | {"ffma": 131.0}), ATTRS).gates
    bound = next(g for g in gates if "128 results" in g.name)
    assert not bound.passed and "131.00" in bound.detail


def test_wrong_or_missing_outputs_fail_and_report_nothing() -> None:
    for error in (1e-3, float("nan")):
        outcome = sf.summarise(fixture(error=error), ATTRS)
        assert [g.passed for g in outcome.gates] == [False] and outcome.results == []


def test_two_blocks_on_one_sm_fail_the_one_block_gate() -> None:
    raw = fixture()
    raw["sin"]["distinct_sms"] = [SMS - 1] * 5
    assert not next(g for g in sf.summarise(raw, ATTRS).gates if "each SM" in g.name).passed
    assert sm_rate.one_per_sm({"distinct_sms": [SMS], "cycles": [[1] * SMS]}, SMS)[0]
    assert not sm_rate.one_per_sm({"distinct_sms": [], "cycles": []}, SMS)[0]


def test_sass_gate_wants_one_instruction_per_unrolled_step() -> None:
    def dump(opcode: str, count: int) -> dict[str, str]:
        lines = [f"        /*{16 * i:04x}*/                   {opcode} R4, R4 ;" for i in range(count)]
        return {"dump": "\n".join(lines)}

    raw = fixture()
    for f in sf.FUNCTIONS:
        raw[f.name]["sass"] = dump(f.opcode, sf.BODY)
    outcome = sf.summarise(raw, ATTRS)
    assert next(g for g in outcome.gates if "SASS" in g.name).passed
    assert values(outcome)["sin_sass_mnemonic"].value == "MUFU.SIN"
    raw["ex2"]["sass"] = dump("MUFU.EX2", 3)
    assert not next(g for g in sf.summarise(raw, ATTRS).gates if "SASS" in g.name).passed
    raw["ex2"]["sass"] = {"missing": "cuobjdump is not on this node's PATH"}
    outcome = sf.summarise(raw, ATTRS)
    assert not [g for g in outcome.gates if "SASS" in g.name] and "ex2_sass_note" in values(outcome)


def test_rates_are_per_block_medians_and_the_shared_memory_keeps_one_block_per_sm() -> None:
    assert sm_rate.rates({"cycles": [[100, 200, 400], [0, 50, 50]]}, 800) == [4.0, 16.0]

    class Device:
        def attribute(self, name: str) -> int:
            return {"CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 233472}.get(name, 232448)

    shared = sm_rate.one_block_shared(Device())
    assert 2 * (shared + 1024) > 233472 >= shared + 1024  # one block fits with its reservation, two do not
