"""launch-overhead on the CPU: its kernels compile for sm_90, and its gates and results come out
of fixture numbers as the page will show them."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import launch_overhead as lo


def fixture(**change: Any) -> dict[str, Any]:
    # Fixture values of plausible H200 size, written by hand for this test: not measurements.
    raw: dict[str, Any] = {
        "n": 1000,
        "queued": 500,
        "stream_ms": [3.0, 3.2, 3.1],  # 3.1 µs per launch: host-bound
        "queued_ms": [1.0, 1.1, 0.9],  # 2 µs per kernel on the GPU
        "graph_ms": [0.8, 0.8, 0.9],  # 0.8 µs per kernel in a graph
        "host_enqueue_s": [0.0012, 0.0013, 0.0011],
        "round_trip_s": [9e-6, 1e-5, 1.1e-5],
        "counter": 2000,
    }
    raw.update(change)
    return raw


def test_the_kernels_compile_for_sm_90() -> None:
    cubin = compile_source(lo.SOURCE, "launch.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"
    ptx = compile_source(lo.SOURCE, "launch.cu", "compute_90").image
    for entry in (b".entry empty", b".entry count", b".entry spin", b"globaltimer"):
        assert entry in ptx


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = lo.summarise(fixture(), repeats=3)
    assert [g.passed for g in outcome.gates] == [True, True, True]
    values = {r.name: r for r in outcome.results}
    assert values["stream_launch"].value == 3.1 and values["stream_launch"].unit == "µs"
    assert values["stream_launch"].samples == [3.0, 3.2, 3.1]
    assert values["queued_launch"].value == 2.0
    assert values["graph_launch"].value == 0.8
    assert values["host_launch_call"].value == 2.4
    assert values["launch_sync_round_trip"].value == 10.0
    assert values["queued_over_graph"].value == 2.5 and values["queued_over_graph"].unit == "×"
    assert not values["queued_over_graph"].samples
    assert [r.name for r in outcome.results] == [
        "stream_launch",
        "queued_launch",
        "graph_launch",
        "host_launch_call",
        "launch_sync_round_trip",
        "queued_over_graph",
    ]


def test_a_short_count_or_an_enqueue_longer_than_the_spin_fails() -> None:
    gates = lo.summarise(fixture(counter=1999), repeats=3).gates
    assert not gates[0].passed and gates[0].detail == "counter 1999"
    gates = lo.summarise(fixture(host_enqueue_s=[0.001, 0.025]), repeats=3).gates
    assert gates[0].passed and not gates[1].passed and "25.00 ms" in gates[1].detail
