"""Work measured at the clock it settles to: warm the GPU up for a while, and read what NVML
says while it is loaded.

Under sustained Tensor Core load a GPU lowers its SM clock to stay under its power cap, within
a fraction of a second: a rate timed in the first milliseconds is one at a clock the work
cannot keep. So throughput work runs for WARM_S before its samples, and NVML (nvidia-ml-py, where
installed) is read while more of the same work is queued, to say why the clock is where it is
(its clock event reasons: 'software power cap' and so on) and what the GPU draws. Nothing here
changes a clock or a power setting: it only reads them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from verifier.provenance import gpu_state, nvml_handle

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

WARM_S = 0.5
"""Seconds of the work run before sampling (the clock settles under the power cap in this time)."""
LOADED_S = 0.3
"""Seconds of the work queued while NVML is read, the reading taken after LOADED_S / 2."""
MAX_QUEUED = 256


def warm(gpu: Any, work: Callable[[], None], one_ms: float, seconds: float = WARM_S) -> float:
    """Run work back to back for about `seconds` of GPU time (work takes about one_ms);
    returns the seconds it took (host clock: a warm-up, not a measurement)."""
    batch = max(1, min(MAX_QUEUED, round(50 / max(one_ms, 1e-3))))
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(batch):
            work()
        gpu.sync()
    return time.perf_counter() - t0


def nvml_reading(device: Any) -> dict[str, Any]:
    """The SM clock, why it is held back and the power drawn, from NVML now (the provenance's
    own reading, plus the power); {} where NVML is not installed, {'error': ...} where it
    cannot be read."""
    state = gpu_state(device)
    if "nvml" in state:
        return {} if state["nvml"].startswith("absent") else {"error": state["nvml"]}
    try:
        pynvml, handle = nvml_handle(device)
        power = round(pynvml.nvmlDeviceGetPowerUsage(handle) / 1000, 1)
    except Exception as exc:  # NVML raises its own error types; a reading is never worth a crash
        return {"error": f"{type(exc).__name__}: {str(exc)[:100]}"}
    keys = ("sm_clock_mhz", "clock_limited_by", "power_limit_w")
    return {**{k: state[k] for k in keys if k in state}, "power_w": power}


def under_load(gpu: Any, work: Callable[[], None], one_ms: float, seconds: float = LOADED_S) -> dict[str, Any]:
    """NVML's reading while about `seconds` of work is queued (taken halfway through it)."""
    for _ in range(max(1, min(MAX_QUEUED, round(seconds * 1000 / max(one_ms, 1e-3))))):
        work()
    time.sleep(seconds / 2)
    reading = nvml_reading(gpu.device)
    gpu.sync()
    return reading
