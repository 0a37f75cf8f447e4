"""occupancy on the CPU: NVRTC compiles both kernels for sm_90 (the heavy one really holds many
registers and spills none), and summarise() turns fixture answers into the results and gates."""

from __future__ import annotations

import re

import pytest
from verifier.experiments import occupancy

# Fixture values, plausible for an H200 and NVRTC 13.0: not measurements.
ATTRS = {
    "warp_size": 32,
    "max_threads_per_sm": 2048,
    "max_blocks_per_sm": 32,
    "registers_per_sm": 65536,
    "registers_per_block": 65536,
    "shared_memory_per_sm": 233472,
    "shared_memory_per_block_optin": 232448,
    "reserved_shared_memory_per_block": 1024,
}
KERNELS = {
    "light": {"registers_per_thread": 12, "static_shared_memory": 0, "local_memory": 0, "max_threads_per_block": 1024},
    "heavy": {"registers_per_thread": 119, "static_shared_memory": 0, "local_memory": 0, "max_threads_per_block": 512},
}


def api_answers(attrs: dict[str, int] = ATTRS) -> dict[str, int | str]:
    """What the driver answers, by cuda_occupancy.h's model (reservation and register allocation)."""
    return {
        occupancy.combo(k, b, s): occupancy.count(attrs, KERNELS[k], b, s * 1024, reserve=True, allocate=True)
        for k, b, s in occupancy.combinations(KERNELS, attrs)
    }


def test_both_kernels_compile_for_sm_90_and_the_heavy_one_holds_its_registers() -> None:
    pytest.importorskip("cuda.bindings.nvrtc")
    from verifier.cuda import compile_source

    built = compile_source(occupancy.SOURCE, "occupancy.cu", "sm_90", ("--ptxas-options=--verbose",))
    assert built.kind == "cubin"
    used = dict(re.findall(r"Compiling entry function '(\w+)'.*?Used (\d+) registers", built.log, re.S))
    assert int(used["heavy"]) >= 96 and int(used["light"]) <= 32, built.log
    assert re.findall(r"(\d+) bytes spill stores", built.log) == ["0", "0"], built.log


def test_api_and_naive_counts_side_by_side_with_the_reasons_they_differ() -> None:
    outcome = occupancy.summarise(KERNELS, api_answers(), ATTRS)
    got = {r.name: r for r in outcome.results}
    assert len(got) == len(outcome.results), "each result named once"
    assert got["combinations"].value == 60
    assert (got["heavy_registers_per_thread"].value, got["heavy_registers_per_thread"].unit) == (
        119,
        "registers/thread",
    )
    # 12 KiB: 233472 ÷ 12288 = 19 naive; with 1 KiB reserved, 233472 ÷ 13312 = 17.
    assert (got["light_b32_s12k_naive_blocks"].value, got["light_b32_s12k_blocks"].value) == (19, 17)
    assert got["light_b32_s12k_why"].value == "reserved shared memory"
    assert got["light_b32_s12k_occupancy"].value == 26.6  # 17 warps of 64
    # 119 registers: 65536 ÷ (119 × 32) = 17 naive; 3808 per warp is allocated as 3840, 4 per sub-partition: 16.
    assert (got["heavy_b32_s0k_naive_blocks"].value, got["heavy_b32_s0k_blocks"].value) == (17, 16)
    assert got["heavy_b32_s0k_why"].value == "register allocation"
    assert (got["heavy_b1024_s0k_naive_blocks"].value, got["heavy_b1024_s0k_blocks"].value) == (0, 0)
    assert (got["light_b256_s48k_blocks"].value, got["light_b256_s48k_naive_blocks"].value) == (4, 4)
    assert got["light_b256_s48k_occupancy"].value == 50.0 and got["light_b256_s48k_occupancy"].unit == "%"
    assert got["light_b1024_s0k_occupancy"].value == 100.0
    assert [
        got[f"differ_{c}"].value for c in ("reserved_shared_memory", "register_allocation", "both", "unexplained")
    ] == [2, 3, 0, 0]
    assert all(r.unit == "blocks/SM" for n, r in got.items() if n.endswith("_blocks"))
    assert [g.passed for g in outcome.gates] == [True, True, True]
    assert "light_b32_s12k" in outcome.gates[2].detail


def test_an_api_answer_above_naive_or_missing_fails_its_gate() -> None:
    answers = api_answers()
    answers["light_b256_s48k"] = 5
    answers["heavy_b64_s4k"] = "cuOccupancyMaxActiveBlocksPerMultiprocessor: CUDA_ERROR_INVALID_VALUE (1): bad"
    outcome = occupancy.summarise(KERNELS, answers, ATTRS)
    gates = {g.name: g for g in outcome.gates}
    assert not gates["the occupancy API never exceeds the naive count"].passed
    assert gates["the occupancy API never exceeds the naive count"].detail == "light_b256_s48k: API 5 above naive 4"
    assert not gates["the occupancy API answered every launchable combination"].passed
    assert next(r for r in outcome.results if r.name == "heavy_b64_s4k_blocks").value is None


def test_no_reserved_difference_is_said_not_failed_and_over_the_opt_in_limit_is_skipped() -> None:
    attrs = {**ATTRS, "reserved_shared_memory_per_block": 0, "shared_memory_per_block_optin": 64 * 1024}
    outcome = occupancy.summarise(KERNELS, api_answers(attrs), attrs)
    assert next(r for r in outcome.results if r.name == "combinations").value == 48  # no 100 KiB
    assert not any(r.name.endswith("_s100k_blocks") for r in outcome.results)
    gate = outcome.gates[2]
    assert gate.passed and gate.detail.startswith("none did")


def test_a_block_larger_than_the_kernel_allows_may_be_refused_without_failing() -> None:
    answers = api_answers()
    answers["heavy_b1024_s0k"] = "cuOccupancyMaxActiveBlocksPerMultiprocessor: CUDA_ERROR_INVALID_VALUE (1): bad"
    outcome = occupancy.summarise(KERNELS, answers, ATTRS)
    assert all(g.passed for g in outcome.gates)
    assert next(r for r in outcome.results if r.name == "heavy_b1024_s0k_blocks").value is None
