"""GPU work measured in GPU time: device buffers, kernels built for this GPU, and a timing loop.

Each sample is the time between two CUDA events on one stream, with the work *queued behind a
wait kernel*: the stream first runs `hold`, a one-thread kernel that spins until the host sets
a flag in pinned memory; the start event, the work and the end event are queued behind it, and
only then does the host release the flag. So the start event fires when the GPU starts on work
already waiting for it, and no host time (Python building arguments, the driver's launch call)
lands inside a sample, however short the work is. An event pair around a Python launch of a
short kernel times the host instead: that is how the first glossary measured, and it was wrong.
The hold gives up after HOLD_TIMEOUT_NS (a queue that filled before the host could release it);
the sample then says so, and a gate fails (see Timed.held).

A sample repeats short work until it lasts MIN_SAMPLE_MS (fixed costs such as the events
themselves stay small); its time is divided by the repeats, so a sample is still the time of
one piece of work. Kernels that include PROBE_SOURCE also time themselves from inside
(%globaltimer: first block's start to last block's end) and read the SM clock they ran at
(clock64 cycles over %globaltimer ns, summed over blocks): the second method each event sample
is checked against, and the clock of the timed phase (not NVML's idle reading).

The loop follows nvbench's practice: warm-up runs first (not kept), then samples until their
relative spread (standard deviation over mean) is under a target, with a floor and a ceiling on
how many and a cap on GPU time, and it says which of those stopped it. Every sample is kept.

Experiments that use this module name it in USES (verifier/registry.py hashes it with them).
cuda-python and numpy are imported by the caller's first use, never at import.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from verifier.cuda import Device, check, compile_source
from verifier.timing import (
    HOLD_TIMEOUT_NS,
    LONG_SAMPLE_MS,
    MIN_SAMPLE_MS,
    WARMUP,
    Probe,
    Timed,
    decode_probe,
    repeats_for,
    sampled,
    stop_reason,
)

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

PROBE_WORDS = 8
PROBE_SOURCE = r"""
// Included by kernels that time themselves. Word 0: the earliest block start (%globaltimer ns),
// 1: the latest block end, 2: SM cycles (clock64) summed over block lifetimes, 3: the ns of the
// same lifetimes, 4: blocks. Every thread of a block must reach probe_end (it has a barrier).
__device__ __forceinline__ unsigned long long probe_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
struct ProbeMark { unsigned long long ns; long long clk; };
__device__ __forceinline__ ProbeMark probe_begin(unsigned long long* probe) {
    ProbeMark m = {0ull, 0ll};
    if (probe != 0 && threadIdx.x == 0) { m.clk = clock64(); m.ns = probe_ns(); atomicMin(probe, m.ns); }
    return m;
}
__device__ __forceinline__ void probe_end(unsigned long long* probe, ProbeMark m) {
    if (probe == 0) return;
    __syncthreads();
    if (threadIdx.x == 0) {
        long long clk = clock64();
        unsigned long long ns = probe_ns();
        atomicMax(probe + 1, ns);
        atomicAdd(probe + 2, (unsigned long long)(clk - m.clk));
        atomicAdd(probe + 3, ns - m.ns);
        atomicAdd(probe + 4, 1ull);
    }
}
"""

HOLD_SOURCE = (
    PROBE_SOURCE
    + r"""
// Spins until the host sets *flag (pinned host memory), so what is queued behind it starts
// only once the host has queued all of it; gives up after timeout_ns and says so in *status.
extern "C" __global__ void hold(volatile unsigned int* flag, volatile unsigned int* status,
                                unsigned long long timeout_ns) {
    unsigned long long start = probe_ns();
    while (*flag == 0u) {
        if (probe_ns() - start > timeout_ns) { *status = 2u; __threadfence_system(); return; }
    }
    *status = 1u;
    __threadfence_system();
}
"""
)


class Gpu:
    """The device with a stream, two events and the hold, and what experiments do with them."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.drv = device.driver
        self.stream = check("cuStreamCreate", self.drv.cuStreamCreate(0))
        self.start = check("cuEventCreate", self.drv.cuEventCreate(0))
        self.end = check("cuEventCreate", self.drv.cuEventCreate(0))
        major, minor = device.capability()
        self.arch = f"sm_{major}{minor}"
        flags = self.drv.CU_MEMHOSTALLOC_DEVICEMAP | self.drv.CU_MEMHOSTALLOC_PORTABLE
        self._pinned = int(check("cuMemHostAlloc", self.drv.cuMemHostAlloc(8, flags)))
        self._flag = ctypes.c_uint32.from_address(self._pinned)
        self._status = ctypes.c_uint32.from_address(self._pinned + 4)
        self._flag_dev = int(check("cuMemHostGetDevicePointer", self.drv.cuMemHostGetDevicePointer(self._pinned, 0)))
        self._hold = self.kernel(HOLD_SOURCE, "hold")

    def close(self) -> None:
        for event in (self.start, self.end):
            check("cuEventDestroy", self.drv.cuEventDestroy(event))
        check("cuStreamDestroy", self.drv.cuStreamDestroy(self.stream))
        check("cuMemFreeHost", self.drv.cuMemFreeHost(self._pinned))

    def kernel(self, source: str, name: str, extra: tuple[str, ...] = (), arch: str | None = None) -> Any:
        """The function `name` of source, compiled by NVRTC to SASS for this GPU (or arch, such
        as 'sm_90a') and loaded."""
        image = compile_source(source, f"{name}.cu", arch or self.arch, extra).image
        module, _ = self.device.load(image)
        return self.device.function(module, name)

    def launch(self, fn: Any, grid: int, block: int, args: Sequence[Any], shared: int = 0) -> None:
        """cuLaunchKernel on this stream; args are numpy scalars (a device pointer as np.uint64)."""
        import numpy as np

        held = [np.array([a]) for a in args]
        pointers = np.array([h.ctypes.data for h in held], dtype=np.uint64)
        check(
            "cuLaunchKernel",
            self.drv.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, shared, self.stream, pointers.ctypes.data, 0),
        )

    def sync(self) -> None:
        check("cuStreamSynchronize", self.drv.cuStreamSynchronize(self.stream))

    def elapsed(self) -> float:
        """ms between the two events, once the end event has completed."""
        check("cuEventSynchronize", self.drv.cuEventSynchronize(self.end))
        return float(check("cuEventElapsedTime", self.drv.cuEventElapsedTime(self.start, self.end)))

    def once(self, work: Callable[[], None]) -> float:
        """One sample *with* the host in it: events recorded before and after work as the host
        issues it. For host costs (a pageable copy waits for the host) and graph replays only."""
        check("cuEventRecord", self.drv.cuEventRecord(self.start, self.stream))
        work()
        check("cuEventRecord", self.drv.cuEventRecord(self.end, self.stream))
        return self.elapsed()

    def queued(
        self, work: Callable[[], None], reps: int = 1, probe: int | None = None
    ) -> tuple[float, bool, Probe | None]:
        """One sample of reps runs of work queued behind the hold: (ms, whether the host released
        the hold in time, what a probed kernel recorded)."""
        import numpy as np

        drv = self.drv
        if probe is not None:
            check("cuMemsetD32Async", drv.cuMemsetD32Async(probe, 0, 2 * PROBE_WORDS, self.stream))
            check("cuMemsetD32Async", drv.cuMemsetD32Async(probe, 0xFFFFFFFF, 2, self.stream))
        self._flag.value = 0
        self._status.value = 0
        self.launch(
            self._hold, 1, 1, [np.uint64(self._flag_dev), np.uint64(self._flag_dev + 4), np.uint64(HOLD_TIMEOUT_NS)]
        )
        check("cuEventRecord", drv.cuEventRecord(self.start, self.stream))
        for _ in range(reps):
            work()
        check("cuEventRecord", drv.cuEventRecord(self.end, self.stream))
        self._flag.value = 1
        ms = self.elapsed()
        released = self._status.value == 1
        found = None
        if probe is not None:
            found = decode_probe([int(w) for w in self.download(np.empty(PROBE_WORDS, dtype=np.uint64), probe)])
        return ms, released, found

    def time(
        self,
        work: Callable[[], None],
        warmup: int = WARMUP,
        calls: int = 1,
        probe: int | None = None,
        min_ms: float = MIN_SAMPLE_MS,
    ) -> Timed:
        """Samples of work queued behind the hold, by the rule of stop_reason(), after warm-up
        runs; each sample repeats work (which makes `calls` driver calls) to last min_ms, and
        a probed kernel (probe: a PROBE_WORDS buffer it writes) adds its own span and clock."""
        for _ in range(warmup):
            work()
        self.sync()
        reps = repeats_for(self.queued(work)[0], calls, min_ms)
        samples: list[float] = []
        kernel: list[float] = []
        clocks: list[float] = []
        held = 0
        while (reason := stop_reason(samples, reps)) is None:
            ms, released, found = self.queued(work, reps, probe)
            held += not released
            samples.append(ms / reps)
            if found is not None:
                kernel.append(found.span_ns / 1e6 / reps)
                if found.mhz is not None:
                    clocks.append(found.mhz)
        return Timed(samples, reason, reps, held, kernel, clocks)

    @contextmanager
    def graph(self, work: Callable[[], None], reps: int = 1) -> Iterator[Any]:
        """reps runs of work captured from the stream into an instantiated graph, for the block."""
        drv = self.drv
        mode = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
        check("cuStreamBeginCapture", drv.cuStreamBeginCapture(self.stream, mode))
        try:
            for _ in range(reps):
                work()
        finally:
            graph = check("cuStreamEndCapture", drv.cuStreamEndCapture(self.stream))
        try:
            executable = check("cuGraphInstantiate", drv.cuGraphInstantiate(graph, 0))
            try:
                yield executable
            finally:
                check("cuGraphExecDestroy", drv.cuGraphExecDestroy(executable))
        finally:
            check("cuGraphDestroy", drv.cuGraphDestroy(graph))

    def time_graph(self, work: Callable[[], None], calls: int = 1, min_ms: float = MIN_SAMPLE_MS) -> Timed:
        """The second method: work captured into a graph, repeated to last min_ms, each sample
        one replay between events as the host issues it (one cuGraphLaunch, a few µs of host
        time in a sample of at least min_ms)."""
        reps = repeats_for(self.queued(work)[0], calls, min_ms)
        with self.graph(work, reps) as executable:

            def replay() -> None:
                check("cuGraphLaunch", self.drv.cuGraphLaunch(executable, self.stream))

            samples, reason = sampled(lambda: self.once(replay) / reps, WARMUP, reps)
        return Timed(samples, reason, reps, method="graph-replay")

    def time_unqueued(self, work: Callable[[], None], calls: int = 1, min_ms: float = LONG_SAMPLE_MS) -> Timed:
        """A second method for work much longer than its issue: events around runs of work as
        the host issues them, with no hold, repeated to last min_ms. While each run outlasts
        the host's call, the GPU never waits and only the first call's issue (µs) is in a
        sample; work shorter than its call shows the host's pace instead, and disagrees."""
        reps = repeats_for(self.queued(work)[0], calls, min_ms)

        def run() -> None:
            for _ in range(reps):
                work()

        samples, reason = sampled(lambda: self.once(run) / reps, 1, reps)
        return Timed(samples, reason, reps, method="host")

    @contextmanager
    def buffer(self, nbytes: int) -> Iterator[int]:
        """Device memory for the block's duration, as an address."""
        ptr = check("cuMemAlloc", self.drv.cuMemAlloc(nbytes))
        try:
            yield int(ptr)
        finally:
            check("cuMemFree", self.drv.cuMemFree(ptr))

    @contextmanager
    def probe(self) -> Iterator[int]:
        """A probe buffer (PROBE_WORDS words) for a kernel that includes PROBE_SOURCE."""
        with self.buffer(8 * PROBE_WORDS) as ptr:
            yield ptr

    def upload(self, ptr: int, array: Any) -> None:
        check("cuMemcpyHtoD", self.drv.cuMemcpyHtoD(ptr, array.ctypes.data, array.nbytes))

    def download(self, array: Any, ptr: int) -> Any:
        check("cuMemcpyDtoH", self.drv.cuMemcpyDtoH(array.ctypes.data, ptr, array.nbytes))
        return array


@contextmanager
def opened(device: Device) -> Iterator[Gpu]:
    gpu = Gpu(device)
    try:
        yield gpu
    finally:
        gpu.close()
