"""warp-divergence on the CPU: its kernel compiles for sm_90 with 32 distinct branches, the CPU
reference gives each branch its own value, and the gates and results come out of fixture numbers."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import warp_divergence as wd

THREADS = 132 * wd.BLOCKS_PER_SM * wd.BLOCK
# Fixture values shaped like an H200's (each extra branch costs about one more pass), written
# by hand for this test: not measurements.
NS = {1: 0.4, 2: 0.8, 4: 1.6, 8: 3.2, 16: 6.4, 32: 12.8}


def fixture(ns: dict[int, float] = NS, **change: Any) -> dict[str, Any]:
    raw = {"threads": THREADS, "max_rel_error": dict.fromkeys(wd.PATHS, 1e-7)}
    raw |= {"ms": {p: [ns[p] * THREADS / 1e6] * 10 for p in wd.PATHS}, "stopped": dict.fromkeys(wd.PATHS, "spread")}
    return raw | change


def test_the_kernel_compiles_for_sm_90_with_32_distinct_branches() -> None:
    assert wd.SOURCE.count("case ") == 32 and wd.SOURCE.count("fma.rn.f32") == 32
    assert len({wd.constants(k) for k in range(32)}) == 32
    cubin = compile_source(wd.SOURCE, "diverge.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"


def test_cpu_reference_gives_each_branch_its_own_value() -> None:
    one, thirty_two = wd.expected(1, 64, 64), wd.expected(32, 64, 64)
    assert one[0] == thirty_two[0] and one[1] != thirty_two[1]
    assert len(set(wd.expected(32, 32, 64).tolist())) == 32
    a, b = wd.constants(0)
    assert wd.expected(1, 2, 1)[1] == pytest.approx(2.0**-10 * a + b, rel=1e-7)


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = wd.summarise(fixture())
    assert [g.passed for g in outcome.gates] == [True, True] and outcome.repeats == 10
    values = {r.name: r for r in outcome.results}
    assert values["ns_per_element_1_paths"].value == 0.4 and values["ns_per_element_1_paths"].unit == "ns"
    assert len(values["ns_per_element_32_paths"].samples) == 10
    assert [values[f"slowdown_{p}_paths"].value for p in wd.PATHS[1:]] == [2.0, 4.0, 8.0, 16.0, 32.0]
    assert values["slowdown_32_paths"].unit == "×"


def test_wrong_outputs_fail_and_a_faster_divergent_run_fails_its_sanity_gate() -> None:
    bad = wd.summarise(fixture(max_rel_error={**dict.fromkeys(wd.PATHS, 0.0), 8: 0.01}))
    assert [g.passed for g in bad.gates] == [False] and bad.results == []
    merged = wd.summarise(fixture({**NS, 32: 0.2}))
    assert not merged.gates[-1].passed
