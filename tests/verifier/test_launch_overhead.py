"""launch-overhead on the CPU: its kernels compile for sm_90, and its gates and results come out
of fixture numbers as the page will show them: GPU time apart from host costs, and a queued
sample with host time in it failing its gate."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import launch_overhead as lo
from verifier.timing import Timed

NAMES = ["stream_launch", "queued_launch", "graph_launch", "host_launch_call", "launch_sync_round_trip"]


def fixture(held: int = 0, **change: Any) -> dict[str, Any]:
    # Fixture values of plausible H200 size, written by hand for this test: not measurements.
    raw: dict[str, Any] = {
        "n": 1000,
        "queued_n": 500,
        "graph_nodes": 2000,
        "stream_ms": [3.0, 3.2, 3.1],  # 3.1 µs per launch: host-bound
        "queued": Timed([1.0, 1.1, 0.9], "spread", held=held).raw(),  # 2 µs per kernel on the GPU
        "graph": Timed([1.6, 1.6, 1.8], "spread", method="graph-replay").raw(),  # 0.8 µs per node
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
    for entry in (b".entry empty", b".entry count"):
        assert entry in ptx


def test_the_queued_batch_never_fills_the_queue_and_the_graph_fills_a_sample() -> None:
    from verifier.timing import MAX_QUEUED_CALLS, MIN_SAMPLE_MS

    assert lo.QUEUED <= MAX_QUEUED_CALLS
    assert lo.GRAPH_NODES * 0.5e-3 >= MIN_SAMPLE_MS  # at 0.5 µs per node, a replay still lasts 1 ms
    assert lo.USES == ("gpu.py", "timing.py")


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = lo.summarise(fixture(), repeats=3)
    assert [g.passed for g in outcome.gates] == [True, True, True, True]
    values = {r.name: r for r in outcome.results}
    assert values["stream_launch"].value == 3.1 and values["stream_launch"].unit == "µs"
    assert values["stream_launch"].samples == [3.0, 3.2, 3.1]
    assert values["queued_launch"].value == 2.0
    assert values["graph_launch"].value == 0.8
    assert values["host_launch_call"].value == 2.4
    assert values["launch_sync_round_trip"].value == 10.0
    assert values["queued_over_graph"].value == 2.5 and values["queued_over_graph"].unit == "×"
    assert not values["queued_over_graph"].samples
    assert [r.name for r in outcome.results] == [*NAMES, "queued_over_graph"]


def test_host_costs_are_method_host_and_gpu_times_say_how_they_were_taken() -> None:
    values = {r.name: r for r in lo.summarise(fixture(), repeats=3).results}
    methods = {name: values[name].method for name in NAMES}
    assert methods == {
        "stream_launch": "host",
        "queued_launch": "gpu-queued",
        "graph_launch": "graph-replay",
        "host_launch_call": "host",
        "launch_sync_round_trip": "host",
    }
    for name in ("stream_launch", "host_launch_call", "launch_sync_round_trip"):
        description = values[name].description
        assert description.startswith("host cost: ") and description.endswith("the host CPU is in the provenance")
    assert "host-paced" in values["stream_launch"].description
    for name in ("queued_launch", "graph_launch"):
        assert values[name].description.startswith("GPU time: ") and "no host time" in values[name].description
    assert values["queued_over_graph"].method == ""


def test_host_time_in_a_queued_sample_fails_its_gate() -> None:
    """A hold that timed out (the host was still queuing when it gave up) means host time in
    the sample: the no-host-time gate fails, whatever the numbers say."""
    gates = lo.summarise(fixture(held=1), repeats=3).gates
    queued = next(g for g in gates if g.name.startswith("no host time in the 500 queued"))
    assert not queued.passed and "1 of 3 samples" in queued.detail
    graph = next(g for g in gates if g.name.startswith("no host time in the replays"))
    assert graph.passed


def test_a_short_count_fails() -> None:
    gates = lo.summarise(fixture(counter=1999), repeats=3).gates
    assert not gates[0].passed and gates[0].detail == "counter 1999"
