"""Kernel launch overhead: what an empty kernel costs on one stream, in a CUDA graph, and on the host.

Four views of one empty kernel (one block of 32 threads): a batch of N launches back to back
on one stream, timed by CUDA events around the batch (what a Python loop of launches gets:
the slower of the host's issue rate and the GPU's); the same launches queued behind a kernel
that spins for a fixed time, with the start event after the spin, so the events time only
the GPU working through a full queue, and the host's perf_counter over the enqueue gives the
cost of one cuLaunchKernel call; a CUDA graph of N launches captured from the stream and
replayed with cuGraphLaunch; and one launch followed by cuStreamSynchronize, the round trip.
A counter kernel launched the same ways checks that the launches ran.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check
from verifier.experiment import Outcome

ID = "launch-overhead"
PURPOSE = "empty-kernel launch time on one stream, queued, in a CUDA graph, and on the host"
USES = ("gpu.py",)

N = 10_000
"""Launches in a stream batch and nodes in the graph."""
QUEUED = 500
"""Launches queued behind the spin kernel: few enough that the driver's queue does not fill."""
SPIN_NS = 20_000_000
"""How long the spin kernel holds the stream (20 ms), longer than the host takes to enqueue QUEUED."""
QUEUED_SAMPLES = 30
ROUND_TRIPS = 200

SOURCE = r"""
extern "C" __global__ void empty() {}

extern "C" __global__ void count(unsigned* counter) {
    if (threadIdx.x == 0) atomicAdd(counter, 1u);
}

extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
"""


@contextmanager
def _graph(gpu: Any, launch_one: Callable[[], None], n: int) -> Iterator[Any]:
    """n launches captured from the stream into a graph, instantiated; both destroyed after the block."""
    drv = gpu.drv
    mode = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
    check("cuStreamBeginCapture", drv.cuStreamBeginCapture(gpu.stream, mode))
    try:
        for _ in range(n):
            launch_one()
    finally:
        graph = check("cuStreamEndCapture", drv.cuStreamEndCapture(gpu.stream))
    try:
        executable = check("cuGraphInstantiate", drv.cuGraphInstantiate(graph, 0))
        try:
            yield executable
        finally:
            check("cuGraphExecDestroy", drv.cuGraphExecDestroy(executable))
    finally:
        check("cuGraphDestroy", drv.cuGraphDestroy(graph))


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened, stop_reason

    raw: dict[str, Any] = {"n": N, "queued": QUEUED}
    with opened(device) as gpu:
        drv = gpu.drv
        empty, count, spin = (gpu.kernel(SOURCE, name) for name in ("empty", "count", "spin"))

        def launch_empty() -> None:
            check("cuLaunchKernel", drv.cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, gpu.stream, 0, 0))

        def batch() -> None:
            for _ in range(N):
                launch_empty()

        raw["stream_ms"] = gpu.time(batch, warmup=1).samples
        queued_ms: list[float] = []
        host_s: list[float] = []
        while len(queued_ms) < QUEUED_SAMPLES and stop_reason(queued_ms) is None:
            gpu.launch(spin, 1, 1, [np.uint64(SPIN_NS)])
            check("cuEventRecord", drv.cuEventRecord(gpu.start, gpu.stream))
            began = time.perf_counter()
            for _ in range(QUEUED):
                launch_empty()
            host_s.append(time.perf_counter() - began)
            check("cuEventRecord", drv.cuEventRecord(gpu.end, gpu.stream))
            check("cuEventSynchronize", drv.cuEventSynchronize(gpu.end))
            queued_ms.append(float(check("cuEventElapsedTime", drv.cuEventElapsedTime(gpu.start, gpu.end))))
        raw["queued_ms"], raw["host_enqueue_s"] = queued_ms, host_s
        with _graph(gpu, launch_empty, N) as executable:
            raw["graph_ms"] = gpu.time(
                lambda: check("cuGraphLaunch", drv.cuGraphLaunch(executable, gpu.stream))
            ).samples
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
            with _graph(gpu, lambda: gpu.launch(count, 1, 32, [pointer]), N) as executable:
                check("cuGraphLaunch", drv.cuGraphLaunch(executable, gpu.stream))
                gpu.sync()
            raw["counter"] = int(gpu.download(np.zeros(1, dtype=np.uint32), counter)[0])
    return summarise(raw, repeats=len(raw["stream_ms"]))


def _us(name: str, samples: list[float], description: str) -> Result:
    rounded = [round(s, 4) for s in samples]
    return Result(name, round(statistics.median(samples), 4), "µs", f"{description} (median)", rounded)


def summarise(raw: dict[str, Any], repeats: int) -> Outcome:
    """Gates and results from the raw numbers run() collected (pure: the CPU test feeds it fixtures)."""
    outcome = Outcome(repeats=repeats)
    n, queued = raw["n"], raw["queued"]
    outcome.gate(
        f"the counter kernel, launched {n} times on the stream and {n} times in one graph replay, counted {2 * n}",
        raw["counter"] == 2 * n,
        f"counter {raw['counter']}",
    )
    slowest = max(raw["host_enqueue_s"]) * 1e9
    outcome.gate(
        f"every queued batch was enqueued while the spin kernel still held the stream ({SPIN_NS / 1e6:g} ms)",
        slowest < SPIN_NS,
        f"slowest enqueue of {queued} launches {slowest / 1e6:.2f} ms",
    )
    stream = [ms * 1000 / n for ms in raw["stream_ms"]]
    gpu_queue = [ms * 1000 / queued for ms in raw["queued_ms"]]
    graph = [ms * 1000 / n for ms in raw["graph_ms"]]
    host = [s * 1e6 / queued for s in raw["host_enqueue_s"]]
    trips = [s * 1e6 for s in raw["round_trip_s"]]
    outcome.gate("every time is positive", all(x > 0 for x in (*stream, *gpu_queue, *graph, *host, *trips)))
    outcome.add(
        _us(
            "stream_launch",
            stream,
            f"CUDA-event time of {n} empty-kernel launches issued back to back from Python on one stream, per "
            "launch: the slower of the host's issue rate and the GPU's",
        ),
        _us(
            "queued_launch",
            gpu_queue,
            f"CUDA-event time for the GPU to run {queued} empty kernels already queued on one stream (behind a "
            "spin kernel), per kernel",
        ),
        _us(
            "graph_launch",
            graph,
            f"CUDA-event time of one cuGraphLaunch replay of a graph of {n} captured empty-kernel launches, per kernel",
        ),
        _us(
            "host_launch_call",
            host,
            f"host perf_counter time of one cuLaunchKernel call from Python (cuda-bindings), no sync, over {queued} "
            "calls while the GPU was busy",
        ),
        _us(
            "launch_sync_round_trip",
            trips,
            "host perf_counter time of one empty-kernel launch and cuStreamSynchronize, Python (cuda-bindings)",
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
