"""What every experiment shares: timing summaries, gates and results (fresh processes: spawn.py)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Gate, Result
from verifier.timing import agreement

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

ROOT = Path(__file__).resolve().parent.parent


def failure(result: dict[str, Any]) -> str:
    """A failed step's CUDA error as one line, said plainly when it is a version mismatch."""
    if result.get("ok"):
        return ""
    text = f"{result['error_name']} ({result['error_code']}): {result['error_message']}"
    if result["error_name"] == "CUDA_ERROR_UNSUPPORTED_PTX_VERSION":
        text += (
            "; the PTX was written by an NVRTC newer than this driver understands: use an NVRTC "
            "no newer than the driver's CUDA version (both are recorded in the provenance)"
        )
    if result.get("jit_log"):
        text += f"; JIT log: {result['jit_log']}"
    return text


def timing(name: str, samples: list[float], description: str, unit: str = "ms") -> list[Result]:
    """Median, min and max of samples (seconds), in ms, each result carrying the raw samples."""
    ms = [s * 1000 for s in samples]
    return [
        Result(f"{name}_median", round(statistics.median(ms), 4), unit, f"{description} (median)", ms),
        Result(f"{name}_min", round(min(ms), 4), unit, f"{description} (fastest)"),
        Result(f"{name}_max", round(max(ms), 4), unit, f"{description} (slowest)"),
    ]


def median_result(
    name: str,
    values: list[float],
    unit: str,
    description: str,
    digits: int | None,
    sample_digits: int,
    method: str = "",
) -> Result:
    """One value as the median of its samples, rounded to digits, carrying the samples rounded to
    sample_digits: the shape most results take, written once so each experiment says only what differs."""
    samples = [round(v, sample_digits) for v in values]
    return Result(name, round(statistics.median(values), digits), unit, description, samples, method=method)


def timed_result(
    name: str, values: list[float], unit: str, description: str, timed: dict[str, Any], digits: int, sample_digits: int
) -> Result:
    """median_result of a GPU timing's per-sample values, its method the one its Timed.raw() names."""
    return median_result(name, values, unit, description, digits, sample_digits, timed_method(timed))


def timed_method(timed: dict[str, Any]) -> str:
    """The method a Timed.raw() names ('gpu-queued' where it names none: runs made before it did)."""
    return str(timed.get("method", "gpu-queued"))


def clock_note(timed: dict[str, Any]) -> str:
    """', SM clock N MHz' (the median in-kernel clock) for a description; '' where the kernel was not probed."""
    return f", SM clock {statistics.median(timed['clock_mhz']):.0f} MHz" if timed.get("clock_mhz") else ""


@dataclass
class Outcome:
    """What an experiment's run() returns."""

    repeats: int
    """How many times the experiment repeated its measurement (recorded in the provenance):
    each experiment says it, as a run made once must not claim the --repeats it was given."""
    gates: list[Gate] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)

    def gate(self, name: str, passed: bool, detail: str = "") -> bool:
        self.gates.append(Gate(name, bool(passed), detail))
        return bool(passed)

    def add(self, *results: Result) -> None:
        self.results.extend(results)

    def no_host_time(self, what: str, raw: dict[str, Any]) -> bool:
        """The gate every queued GPU timing passes: the host released each sample's hold in
        time, and a probed kernel's own span agrees with the events (timing.agreement)."""
        ok, detail = agreement(raw)
        return self.gate(f"no host time in {what} (events agree with the in-kernel timer)", ok, detail)


def clock_result(name: str, raw: dict[str, Any], what: str) -> list[Result]:
    """The SM clock a probed kernel ran at during its timed samples, as `<name>_clock` (MHz),
    with the per-sample clocks as its samples; none where the kernel was not probed."""
    clocks = [float(c) for c in raw.get("clock_mhz") or []]
    if not clocks:
        return []
    description = (
        f"SM clock during {what}, read inside the kernel (clock64 cycles over %globaltimer ns, "
        "summed over its blocks), median of the samples"
    )
    return [median_result(f"{name}_clock", clocks, "MHz", description, None, 1, "in-kernel")]
