"""launch-limits on the CPU: its kernels compile for sm_90, the heavy kernel really needs more
registers than a block of 1024 threads can have, the cases sit at and one past each limit, and
the gates and results come out of fixture numbers as the page will show them."""

from __future__ import annotations

import re
from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import launch_limits as ll

from outcomes import recordable, values

# Device attributes shaped like an H200's, written by hand for this test: not measurements.
ATTRS = {
    "max_block_dim_x": 1024,
    "max_block_dim_y": 1024,
    "max_block_dim_z": 64,
    "max_grid_dim_x": 2**31 - 1,
    "max_grid_dim_y": 65535,
    "max_grid_dim_z": 65535,
    "cooperative_launch": 1,
    "sm_count": 132,
    "max_threads_per_block": 1024,
    "shared_memory_per_block": 49152,
}
HEAVY_MAX = 896


def refused(name: str, message: str, code: int) -> dict[str, Any]:
    return {
        "ok": False,
        "call": "cuLaunchKernel",
        "error_name": name,
        "error_code": code,
        "error_message": message,
        "jit_log": "",
        "blocks_ran": 0,
        "after_ok": True,
    }


def placement_runs(n: int, per_sm: int = 1, start: int = 1_000_000) -> list[list[list[int]]]:
    """Blocks b on SM b // per_sm, starting 10 ns apart, spinning 20 µs at 1980 MHz."""
    blocks = [[b // per_sm, 132, start + 10 * b, start + 10 * b + 20_000, 39_600] for b in range(n)]
    return [blocks] * ll.REPEATS


def fixture(**change: Any) -> dict[str, Any]:
    """What run() would gather on an H200 as predicted, written by hand: not measurements."""
    cases: dict[str, Any] = {}
    for name, (_, grid, _, _) in ll.cases(ATTRS, HEAVY_MAX).items():
        if name.endswith("_over"):
            out_of = name == "registers_over"
            cases[name] = (
                refused("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch", 701)
                if out_of
                else refused("CUDA_ERROR_INVALID_VALUE", "invalid argument", 1)
            )
        else:
            cases[name] = {"ok": True, "blocks_ran": grid[0] * grid[1] * grid[2]}
    placement = {"1": placement_runs(1), "8": placement_runs(8), "sms": placement_runs(132)}
    placement["2sms"] = placement_runs(264, per_sm=2)
    raw = {
        "cases": cases,
        "placement": placement,
        "cluster": {"portable": 8, "non_portable": 16},
        "heavy_registers": 72,
        "heavy_max_threads": HEAVY_MAX,
    }
    return raw | change


def test_the_kernels_compile_and_heavy_needs_more_registers_than_1024_threads_have() -> None:
    for kernel in ("edge", "heavy", "where"):
        assert compile_source(ll.SOURCE, f"{kernel}.cu", "sm_90").image[:4] == b"\x7fELF"
    log = compile_source(ll.SOURCE, "heavy.cu", "sm_90", ("--ptxas-options=-v",)).log
    used = int(re.search(r"Function properties for heavy\n.*\n.*Used (\d+) registers", log)[1])  # type: ignore[index]
    assert used * 1024 > 65536


def test_each_case_is_at_or_one_past_its_limit() -> None:
    cases = ll.cases(ATTRS, HEAVY_MAX)
    assert cases["threads_over"][2] == (1025, 1, 1) and cases["grid_y_over"][1] == (1, 65536, 1)
    for name, case in cases.items():
        assert ll.past_limit(case, ATTRS, HEAVY_MAX) == name.endswith("_over"), name
    assert ll.past_limit(("heavy", (1, 1, 1), (HEAVY_MAX + 1, 1, 1), 0), ATTRS, HEAVY_MAX)
    assert not ll.past_limit(("edge", (1, 1, 1), (HEAVY_MAX + 1, 1, 1), 0), ATTRS, HEAVY_MAX)


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = ll.summarise(fixture(), ATTRS)
    recordable(outcome, ll)
    assert [(g.name, g.passed) for g in outcome.gates if not g.passed] == []
    assert len(outcome.gates) == 5
    got = values(outcome)
    assert got["max_block_dim_z"] == 64 and got["max_grid_dim_y"] == 65535 and got["cooperative_launch"] is True
    assert got["max_cluster_size_portable"] == 8 and got["max_cluster_size_non_portable"] == 16
    assert got["threads_over_error"] == "CUDA_ERROR_INVALID_VALUE" and got["threads_over_error_code"] == 1
    assert got["registers_over_error"] == "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
    assert got["grid_y_at_limit_launched"] is True and "grid_y_at_limit_error" not in got
    assert got["placement_sms_own_sm"] is True and got["placement_sms_distinct_sms"] == 132
    assert got["placement_2sms_distinct_sms"] == 132 and got["placement_2sms_most_on_one_sm"] == 2
    assert "placement_2sms_own_sm" not in got and got["placement_8_sm_ids"] == "0, 1, 2, 3, 4, 5, 6, 7"
    assert got["placement_2sms_start_spread"] == 2.63 and got["placement_2sms_co_resident"] is True
    assert got["nsmid"] == 132 and got["placement_clock"] == 1980


def test_a_cluster_size_the_api_did_not_give_is_said_so() -> None:
    raw = fixture(cluster={"portable": 8, "non_portable": "cuOccupancyMaxPotentialClusterSize: CUDA_ERROR_X"})
    result = next(r for r in ll.summarise(raw, ATTRS).results if r.name == "max_cluster_size_non_portable")
    assert result.value is None and "not answered: cuOccupancy" in result.description


def test_a_launch_past_a_limit_that_ran_fails_and_one_at_a_limit_that_failed_fails() -> None:
    raw = fixture()
    raw["cases"]["grid_y_over"] = {"ok": True, "blocks_ran": 65536}
    raw["cases"]["threads_at_limit"] = refused("CUDA_ERROR_INVALID_VALUE", "invalid argument", 1)
    gates = {g.name: g for g in ll.summarise(raw, ATTRS).gates}
    assert not gates["every launch past a limit was refused, no block ran"].passed
    assert "grid_y_over: launched" in gates["every launch past a limit was refused, no block ran"].detail
    assert not gates["every launch at a limit ran all its blocks"].passed


def test_a_context_left_unusable_fails() -> None:
    raw = fixture()
    raw["cases"]["shared_over"]["after_ok"] = False
    gates = {g.name: g.passed for g in ll.summarise(raw, ATTRS).gates}
    assert not gates["after each refused launch the context still runs a kernel"]


def test_an_sm_id_past_the_count_or_a_missing_block_fails_and_shared_sms_are_reported() -> None:
    raw = fixture()
    raw["placement"]["8"] = placement_runs(8, per_sm=2)
    raw["placement"]["sms"] = [[[140 if b == 5 else b, 144, 1000 + b, 30_000, 39_600] for b in range(132)]]
    raw["placement"]["1"] = [[[0, 132, 0, 0, 0]]]
    outcome = ll.summarise(raw, ATTRS)
    recordable(outcome, ll)
    gates = {g.name: g for g in outcome.gates}
    assert not gates["every block recorded an SM id below the SM count (132)"].passed
    assert "SM 140" in gates["every block recorded an SM id below the SM count (132)"].detail
    assert not gates["every block of every placement grid recorded itself"].passed
    got = values(outcome)
    assert got["placement_8_own_sm"] is False and got["placement_8_distinct_sms"] == 4
    assert "placement_1_blocks" not in got and got["nsmid"] == 144


def test_blocks_that_all_start_in_one_timer_tick_give_no_zero_duration() -> None:
    raw = fixture()
    raw["placement"]["8"] = [[[b, 132, 5000, 25_000, 39_600] for b in range(8)]] * ll.REPEATS
    raw["placement"]["sms"] = [*raw["placement"]["sms"][:2], [[b, 132, 5000, 25_000, 39_600] for b in range(132)]]
    outcome = ll.summarise(raw, ATTRS)
    recordable(outcome, ll)
    spread = {r.name: r for r in outcome.results if r.name.endswith("_start_spread")}
    assert spread["placement_8_start_spread"].value is None and spread["placement_8_start_spread"].samples == []
    assert spread["placement_sms_start_spread"].value == 1.31 and len(spread["placement_sms_start_spread"].samples) == 2
    assert "median of the 2 runs" in spread["placement_sms_start_spread"].description
    assert "placement_1_start_spread" not in spread
