"""The timing rules, apart from CUDA: when sampling stops, what a sample of queued work is, and
when the in-kernel timer and the events agree (so no host time leaked into a GPU value).

Pure Python (no cuda-python, no numpy): the CPU tests check every rule here on fixtures, and
verifier/gpu.py applies them on the GPU. See gpu.py's docstring for the method.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

TARGET_SPREAD = 0.01
"""Stop once stdev / mean of the samples is under 1%..."""
MIN_SAMPLES, MAX_SAMPLES = 10, 200
"""...and at least this many were taken; never more than MAX_SAMPLES."""
MAX_GPU_SECONDS = 2.0
"""Nor more than this much GPU time in samples (a slow case stops on time, and says so)."""
WARMUP = 3
MIN_SAMPLE_MS = 1.0
"""A sample repeats short work until it lasts about this long (fixed costs stay ~1% or less)."""
LONG_SAMPLE_MS = 10.0
"""Samples of the unqueued second method last this long, so one call's issue time is ~0.1% of it."""
MAX_QUEUED_CALLS = 512
"""Calls queued behind the hold per sample: well under the driver's queue, which blocks the host
when full (the host could then never release the hold)."""
HOLD_TIMEOUT_NS = 5_000_000_000
"""The hold gives up after 5 s: far longer than the host takes to queue a sample."""
AGREEMENT = 0.03
"""The event time of queued kernels and their in-kernel span agree within 3% (plus AGREEMENT_MS):
the events also hold the first launch's start-up and the last block's drain, a few µs."""
AGREEMENT_MS = 0.01

QUEUED = "gpu-queued"
"""The method name recorded per result: CUDA events around work queued behind a wait kernel."""


def relative_spread(samples: Sequence[float]) -> float:
    """Standard deviation over mean (0 for fewer than two samples or a zero mean)."""
    if len(samples) < 2:
        return 0.0
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / mean if mean > 0 else 0.0


def stop_reason(samples: Sequence[float], reps: int = 1) -> str | None:
    """Why sampling should stop now, or None to take another: the loop's whole rule. Each
    sample ran the work reps times (the GPU time cap counts them all)."""
    if len(samples) >= MIN_SAMPLES and relative_spread(samples) < TARGET_SPREAD:
        return "spread"
    if len(samples) >= MAX_SAMPLES:
        return "count"
    if len(samples) >= 3 and sum(samples) * reps / 1000 >= MAX_GPU_SECONDS:
        return "time"
    return None


def sampled(
    sample: Callable[[], float],
    warmup: int = WARMUP,
    reps: int = 1,
    max_samples: int = MAX_SAMPLES,
    max_ms: float = float("inf"),
) -> tuple[list[float], str]:
    """Samples (ms each) of sample() after warm-up calls, by the rule of stop_reason() and
    a caller's own caps on their count and total: the one loop every host-paced timing uses."""
    for _ in range(warmup):
        sample()
    samples: list[float] = []
    while (reason := stop_reason(samples, reps)) is None:
        if len(samples) >= max_samples or sum(samples) >= max_ms:
            return samples, "count" if len(samples) >= max_samples else "time"
        samples.append(sample())
    return samples, reason


def repeats_for(one_ms: float, calls: int, min_ms: float = MIN_SAMPLE_MS) -> int:
    """How many times a sample repeats work that takes one_ms and makes `calls` driver calls:
    enough to last min_ms, never more calls than MAX_QUEUED_CALLS."""
    wanted = 1 if one_ms <= 0 else -(-min_ms // one_ms)
    return int(max(1, min(wanted, MAX_QUEUED_CALLS // max(1, calls))))


@dataclass(frozen=True)
class Probe:
    """What a probed kernel recorded about itself over one sample (all its launches)."""

    span_ns: int
    """First block's start to last block's end, by %globaltimer."""
    cycles: int
    """SM clock cycles (clock64) summed over every block's lifetime..."""
    block_ns: int
    """...and %globaltimer ns over the same lifetimes: cycles / block_ns is the clock it ran at."""
    blocks: int

    @property
    def mhz(self) -> float | None:
        return 1000 * self.cycles / self.block_ns if self.block_ns > 0 and self.cycles > 0 else None


def decode_probe(words: Sequence[int]) -> Probe | None:
    """The probe buffer (PROBE_WORDS 64-bit words as PROBE_SOURCE fills them), or None where no
    block ran (the start stayed at its reset value)."""
    start, end, cycles, block_ns, blocks = (int(w) for w in words[:5])
    if blocks == 0 or end < start:
        return None
    return Probe(end - start, cycles, block_ns, blocks)


@dataclass(frozen=True)
class Timed:
    """Samples of one piece of GPU work, in ms, and why the loop stopped."""

    samples: list[float]
    stopped: str
    """'spread' (under TARGET_SPREAD), 'count' (MAX_SAMPLES) or 'time' (MAX_GPU_SECONDS)."""
    reps: int = 1
    """How many times each sample ran the work (each sample is divided by it)."""
    held: int = 0
    """Samples whose hold timed out before the host released it: host time may be in them."""
    kernel_ms: list[float] = field(default_factory=list)
    """Per sample, the in-kernel span over reps (a probed kernel), else empty."""
    clock_mhz: list[float] = field(default_factory=list)
    """Per sample, the SM clock the probed kernel ran at, else empty."""
    method: str = QUEUED

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        return relative_spread(self.samples)

    @property
    def clock(self) -> float | None:
        """The median SM clock during the samples (MHz), where the kernel was probed."""
        return statistics.median(self.clock_mhz) if self.clock_mhz else None

    def raw(self) -> dict[str, object]:
        """As an experiment keeps it for summarise() (plain data, so the CPU tests build fixtures)."""
        return {
            "ms": self.samples,
            "stopped": self.stopped,
            "reps": self.reps,
            "held": self.held,
            "kernel_ms": self.kernel_ms,
            "clock_mhz": self.clock_mhz,
            "method": self.method,
        }


def agreement(raw: Mapping[str, object]) -> tuple[bool, str]:
    """Whether the events and the in-kernel span of the same samples agree (no host time in the
    events, and no sample the hold gave up on), with the figures as a gate's detail; raw is
    Timed.raw() (or a fixture of it)."""
    samples = [float(x) for x in raw["ms"]]  # type: ignore[attr-defined]
    kernel = [float(x) for x in raw.get("kernel_ms") or []]  # type: ignore[attr-defined]
    held = int(raw.get("held") or 0)  # type: ignore[call-overload]
    if held:
        return False, f"{held} of {len(samples)} samples: the hold timed out before the host released it"
    if not kernel:
        return True, "no in-kernel timer in this work"
    events, span = statistics.median(samples), statistics.median(kernel)
    slack = 1 + AGREEMENT
    ok = span > 0 and span <= events * slack + AGREEMENT_MS and events <= span * slack + AGREEMENT_MS
    return ok, f"events {events:.4f} ms, in-kernel {span:.4f} ms per run (within {AGREEMENT:.0%} + {AGREEMENT_MS} ms)"
