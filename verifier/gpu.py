"""GPU work measured in GPU time: device buffers, kernels built for this GPU, and a timing loop.

An experiment that times work on the GPU (a copy, a kernel, a launch) uses this module rather
than wall clocks: each sample is the time between two CUDA events recorded around the work on
one stream, so the host's scheduling is not in it. The loop follows nvbench's practice:
warm-up runs first (not kept), then samples until their relative spread (standard deviation
over mean) is under a target, with a floor and a ceiling on how many and a cap on GPU time,
and it says which of those stopped it. Every sample is kept.

Experiments that use this module name it in USES (verifier/registry.py hashes it with them).
cuda-python and numpy are imported by the caller's first use, never at import.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from verifier.cuda import Device, check, compile_source

TARGET_SPREAD = 0.01
"""Stop once stdev / mean of the samples is under 1%..."""
MIN_SAMPLES, MAX_SAMPLES = 10, 200
"""...and at least this many were taken; never more than MAX_SAMPLES."""
MAX_GPU_SECONDS = 2.0
"""Nor more than this much GPU time in samples (a slow case stops on time, and says so)."""
WARMUP = 3


@dataclass(frozen=True)
class Timed:
    """Samples of one piece of GPU work, in ms, and why the loop stopped."""

    samples: list[float]
    stopped: str
    """'spread' (under TARGET_SPREAD), 'count' (MAX_SAMPLES) or 'time' (MAX_GPU_SECONDS)."""

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        return relative_spread(self.samples)


def relative_spread(samples: Sequence[float]) -> float:
    """Standard deviation over mean (0 for fewer than two samples or a zero mean)."""
    if len(samples) < 2:
        return 0.0
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / mean if mean > 0 else 0.0


def stop_reason(samples: Sequence[float]) -> str | None:
    """Why sampling should stop now, or None to take another: the loop's whole rule."""
    if len(samples) >= MIN_SAMPLES and relative_spread(samples) < TARGET_SPREAD:
        return "spread"
    if len(samples) >= MAX_SAMPLES:
        return "count"
    if len(samples) >= 3 and sum(samples) / 1000 >= MAX_GPU_SECONDS:
        return "time"
    return None


class Gpu:
    """The device with a stream and two events, and what experiments do with them."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.drv = device.driver
        self.stream = check("cuStreamCreate", self.drv.cuStreamCreate(0))
        self.start = check("cuEventCreate", self.drv.cuEventCreate(0))
        self.end = check("cuEventCreate", self.drv.cuEventCreate(0))
        major = device.attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
        minor = device.attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
        self.arch = f"sm_{major}{minor}"

    def close(self) -> None:
        for event in (self.start, self.end):
            check("cuEventDestroy", self.drv.cuEventDestroy(event))
        check("cuStreamDestroy", self.drv.cuStreamDestroy(self.stream))

    def kernel(self, source: str, name: str, extra: tuple[str, ...] = ()) -> Any:
        """The function `name` of source, compiled by NVRTC to SASS for this GPU and loaded."""
        module, _ = self.device.load(compile_source(source, f"{name}.cu", self.arch, extra).image)
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

    def once(self, work: Callable[[], None]) -> float:
        """One sample: the ms between events recorded before and after work on the stream."""
        check("cuEventRecord", self.drv.cuEventRecord(self.start, self.stream))
        work()
        check("cuEventRecord", self.drv.cuEventRecord(self.end, self.stream))
        check("cuEventSynchronize", self.drv.cuEventSynchronize(self.end))
        return float(check("cuEventElapsedTime", self.drv.cuEventElapsedTime(self.start, self.end)))

    def time(self, work: Callable[[], None], warmup: int = WARMUP) -> Timed:
        """Samples of work by the rule of stop_reason(), after warm-up runs."""
        for _ in range(warmup):
            work()
        self.sync()
        samples: list[float] = []
        while (reason := stop_reason(samples)) is None:
            samples.append(self.once(work))
        return Timed(samples, reason)

    @contextmanager
    def buffer(self, nbytes: int) -> Iterator[int]:
        """Device memory for the block's duration, as an address."""
        ptr = check("cuMemAlloc", self.drv.cuMemAlloc(nbytes))
        try:
            yield int(ptr)
        finally:
            check("cuMemFree", self.drv.cuMemFree(ptr))

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
