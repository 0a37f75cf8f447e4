"""warp-divergence on the CPU: its kernel compiles for sm_90 with 32 distinct branches, the CPU
reference gives each branch its own value, and the gates and results come out of fixture numbers."""

from __future__ import annotations

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import warp_divergence as wd

from raw_fixtures import NS, THREADS, fixture, timed


def test_the_kernel_compiles_for_sm_90_with_32_distinct_branches_and_the_probe() -> None:
    assert wd.SOURCE.count("case ") == 32 and wd.SOURCE.count("fma.rn.f32") == 32
    assert "ProbeMark mark = probe_begin(probe);" in wd.SOURCE and "probe_end(probe, mark);" in wd.SOURCE
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
    assert all(g.passed for g in outcome.gates) and len(outcome.gates) == 2 + len(wd.PATHS)
    assert outcome.repeats == 10
    values = {r.name: r for r in outcome.results}
    assert values["ns_per_element_1_paths"].value == 0.4 and values["ns_per_element_1_paths"].unit == "ns"
    assert values["ns_per_element_1_paths"].method == "gpu-queued" and values["slowdown_2_paths"].method == ""
    assert values["diverge_clock"].value == 1980 and values["diverge_clock"].method == "in-kernel"
    assert "SM clock 1980 MHz" in values["ns_per_element_32_paths"].description
    assert len(values["ns_per_element_32_paths"].samples) == 10
    assert [values[f"slowdown_{p}_paths"].value for p in wd.PATHS[1:]] == [2.0, 4.0, 8.0, 16.0, 32.0]
    assert values["slowdown_32_paths"].unit == "×"


def test_wrong_outputs_fail_and_a_faster_divergent_run_fails_its_sanity_gate() -> None:
    bad = wd.summarise(fixture(max_rel_error={**dict.fromkeys(wd.PATHS, 0.0), 8: 0.01}))
    assert [g.passed for g in bad.gates] == [False] and bad.results == []
    merged = wd.summarise(fixture({**NS, 32: 0.2}))
    assert not merged.gates[-1].passed


def test_host_time_in_a_sample_fails_and_a_throttled_clock_shows() -> None:
    raw = fixture()
    one = raw["cases"][1]
    raw["cases"][1] = one | {"ms": [t * 1.4 for t in one["ms"]]}
    raw["cases"][32] = timed(NS[32] * THREADS / 1e6, clock=1500.0) | {"held": 1}
    outcome = wd.summarise(raw)
    failed = [g.name for g in outcome.gates if not g.passed]
    assert failed == [
        "no host time in the kernel with 1 path (events agree with the in-kernel timer)",
        "no host time in the kernel with 32 paths (events agree with the in-kernel timer)",
    ]
    values = {r.name: r for r in outcome.results}
    assert "SM clock 1500 MHz" in values["ns_per_element_32_paths"].description
    assert values["diverge_clock"].value == 1980 and 1500.0 in values["diverge_clock"].samples
