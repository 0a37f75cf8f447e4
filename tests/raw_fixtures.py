"""Raw samples shaped like a warp-divergence run's, for the tests of its summary and of
make rederive: written by hand for the tests, not measurements."""

from __future__ import annotations

from typing import Any

from verifier.experiments import warp_divergence as wd

THREADS = 132 * wd.BLOCKS_PER_SM * wd.BLOCK
# Fixture values shaped like an H200's (each extra branch costs about one more pass), written
# by hand for this test: not measurements.
NS = {1: 0.4, 2: 0.8, 4: 1.6, 8: 3.2, 16: 6.4, 32: 12.8}


def timed(ms: float, clock: float = 1980.0) -> dict[str, Any]:
    """A case's Timed.raw(): per-run ms, the in-kernel span a little under it, and the clock."""
    return {"ms": [ms] * 10, "stopped": "spread", "reps": 3, "held": 0, "method": "gpu-queued",
            "kernel_ms": [ms * 0.995] * 10, "clock_mhz": [clock] * 10}  # fmt: skip


def fixture(ns: dict[int, float] = NS, **change: Any) -> dict[str, Any]:
    raw = {"threads": THREADS, "max_rel_error": dict.fromkeys(wd.PATHS, 1e-7)}
    raw |= {"cases": {p: timed(ns[p] * THREADS / 1e6) for p in wd.PATHS}}
    return raw | change
