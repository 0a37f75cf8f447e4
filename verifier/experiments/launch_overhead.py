"""Kernel launch overhead: what an empty kernel costs the GPU queued and in a CUDA graph, and what
launching one costs the host.

GPU time (gpu.py queues the work behind its hold first, so no host time is in a sample):
queued_launch, QUEUED empty kernels already waiting on one stream, per kernel; graph_launch,
one replay of a graph of GRAPH_NODES captured empty-kernel launches, per node (the replay is
queued too, so its one cuGraphLaunch call is outside the events).

Host costs (set by the host CPU, the driver and the Python binding, not by the GPU; the CPU is
in the provenance): host_launch_call, perf_counter over the QUEUED cuLaunchKernel calls of each
queued sample (the GPU is held, so no call waits for it); stream_launch, CUDA events around N
launches as a Python loop issues them on an idle stream, host-paced (the slower of the host's
issue rate and the GPU's, which on an H200 is the host's); launch_sync_round_trip, one launch
and cuStreamSynchronize by perf_counter. A counter kernel launched N times on the stream and N
times in one graph replay checks that launches ran.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check
from verifier.experiment import Outcome, median_result
from verifier.timing import sampled

ID = "launch-overhead"
PURPOSE = "empty-kernel launch time on one stream, queued, in a CUDA graph, and on the host"
USES = ("gpu.py", "timing.py")

N = 10_000
"""Launches in a host-paced stream batch and in the counter's graph."""
QUEUED = 500
"""Launches queued behind the hold per sample: under timing.MAX_QUEUED_CALLS, so the driver's
queue never fills while the GPU is held (about 0.8 ms of GPU time on an H200)."""
GRAPH_NODES = 2_000
"""Nodes in the timed graph: a replay lasts over a millisecond (about 1.4 ms on an H200)."""
ROUND_TRIPS = 200

SOURCE = r"""
extern "C" __global__ void empty() {}

extern "C" __global__ void count(unsigned* counter) {
    if (threadIdx.x == 0) atomicAdd(counter, 1u);
}
"""

HOST = "the host CPU is in the provenance"


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    raw: dict[str, Any] = {"n": N, "queued_n": QUEUED, "graph_nodes": GRAPH_NODES}
    with opened(device) as gpu:
        drv = gpu.drv
        empty, count = (gpu.kernel(SOURCE, name) for name in ("empty", "count"))

        def launch_empty() -> None:
            check("cuLaunchKernel", drv.cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, gpu.stream, 0, 0))

        host_s: list[float] = []

        def queued_batch() -> None:
            began = time.perf_counter()
            for _ in range(QUEUED):
                launch_empty()
            host_s.append(time.perf_counter() - began)

        queued = gpu.time(queued_batch, calls=QUEUED)
        raw["queued"] = queued.raw()
        timed_calls = len(queued.samples) * queued.reps  # the last calls were the samples', the first warm-up
        raw["host_enqueue_s"] = host_s[len(host_s) - timed_calls :]

        with gpu.graph(launch_empty, GRAPH_NODES) as executable:
            raw["graph"] = gpu.time(lambda: check("cuGraphLaunch", drv.cuGraphLaunch(executable, gpu.stream))).raw()

        def batch() -> None:
            for _ in range(N):
                launch_empty()

        raw["stream_ms"] = sampled(lambda: gpu.once(batch), warmup=1)[0]

        trips: list[float] = []
        for _ in range(ROUND_TRIPS):
            began = time.perf_counter()
            launch_empty()
            gpu.sync()
            trips.append(time.perf_counter() - began)
        raw["round_trip_s"] = trips
        with gpu.buffer(4) as counter:
            check("cuMemsetD32", drv.cuMemsetD32(counter, 0, 1))
            pointer = np.uint64(counter)
            for _ in range(N):
                gpu.launch(count, 1, 32, [pointer])
            with gpu.graph(lambda: gpu.launch(count, 1, 32, [pointer]), N) as executable:
                check("cuGraphLaunch", drv.cuGraphLaunch(executable, gpu.stream))
                gpu.sync()
            raw["counter"] = int(gpu.download(np.zeros(1, dtype=np.uint32), counter)[0])
    return summarise(raw, repeats=len(raw["queued"]["ms"]))


def _us(name: str, samples: list[float], what: str, method: str) -> Result:
    """A per-launch time in µs (median of samples), said as GPU time or as a host cost."""
    if method == "host":
        description = f"host cost: {what} (median); {HOST}"
    else:
        description = f"GPU time: {what} (median); no host time in it"
    return median_result(name, samples, "µs", description, 4, 4, method)


def summarise(raw: dict[str, Any], repeats: int) -> Outcome:
    """Gates and results from the raw numbers run() collected (pure: the CPU test feeds it fixtures)."""
    outcome = Outcome(repeats=repeats)
    n, queued_n, nodes = raw["n"], raw["queued_n"], raw["graph_nodes"]
    outcome.gate(
        f"the counter kernel, launched {n} times on the stream and {n} times in one graph replay, counted {2 * n}",
        raw["counter"] == 2 * n,
        f"counter {raw['counter']}",
    )
    outcome.no_host_time(f"the {queued_n} queued empty kernels", raw["queued"])
    outcome.no_host_time(f"the replays of a graph of {nodes} empty kernels", raw["graph"])
    stream = [ms * 1000 / n for ms in raw["stream_ms"]]
    gpu_queue = [ms * 1000 / queued_n for ms in raw["queued"]["ms"]]
    graph = [ms * 1000 / nodes for ms in raw["graph"]["ms"]]
    host = [s * 1e6 / queued_n for s in raw["host_enqueue_s"]]
    trips = [s * 1e6 for s in raw["round_trip_s"]]
    outcome.gate("every time is positive", all(x > 0 for x in (*stream, *gpu_queue, *graph, *host, *trips)))
    outcome.add(
        _us(
            "stream_launch",
            stream,
            f"CUDA-event time of {n} empty-kernel launches as a Python loop (cuda-bindings) issues them on one "
            "idle stream, per launch: host-paced, the slower of the host's issue rate and the GPU's",
            "host",
        ),
        _us(
            "queued_launch",
            gpu_queue,
            f"CUDA-event time for the GPU to run {queued_n} empty kernels already queued on one stream (behind a "
            "wait kernel the host releases once all are queued), per kernel",
            "gpu-queued",
        ),
        _us(
            "graph_launch",
            graph,
            f"CUDA-event time of one replay of a graph of {nodes} captured empty-kernel launches, queued behind a "
            "wait kernel (the cuGraphLaunch call is outside the events), per kernel",
            "graph-replay",
        ),
        _us(
            "host_launch_call",
            host,
            f"perf_counter time of one cuLaunchKernel call from Python (cuda-bindings), no sync, over {queued_n} "
            "calls while the GPU was held",
            "host",
        ),
        _us(
            "launch_sync_round_trip",
            trips,
            "perf_counter time, from Python (cuda-bindings), of one empty-kernel launch and cuStreamSynchronize",
            "host",
        ),
    )
    q, g = statistics.median(gpu_queue), statistics.median(graph)
    outcome.add(
        Result(
            "queued_over_graph",
            round(q / g, 2) if g > 0 else 0.0,
            "×",
            "GPU time per queued stream launch over GPU time per kernel in a graph replay (medians)",
        )
    )
    return outcome
