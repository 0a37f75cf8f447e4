"""The GPU timing loop's rule and the provenance of clocks, on the CPU: what stops sampling, and
what is recorded where NVML cannot be read."""

from __future__ import annotations

import pytest
from verifier.provenance import THROTTLE_REASONS, throttle_text

from verifier import timing as gpu


def test_sampling_stops_once_the_spread_is_under_target_and_not_before_the_floor() -> None:
    steady = [1.0, 1.001, 0.999] * 10
    assert gpu.stop_reason(steady[: gpu.MIN_SAMPLES - 1]) is None
    assert gpu.stop_reason(steady[: gpu.MIN_SAMPLES]) == "spread"


def test_noisy_samples_run_to_the_ceiling_or_the_time_cap() -> None:
    noisy = [1.0, 2.0] * (gpu.MAX_SAMPLES // 2)
    assert all(gpu.stop_reason(noisy[:n]) is None for n in range(gpu.MAX_SAMPLES))
    assert gpu.stop_reason(noisy) == "count"
    slow = [1000.0, 1500.0, 700.0]  # ms each: three samples are past MAX_GPU_SECONDS
    assert gpu.stop_reason(slow[:2]) is None and gpu.stop_reason(slow) == "time"


@pytest.mark.parametrize(
    ("samples", "spread"),
    [([], 0.0), ([5.0], 0.0), ([1.0, 1.0], 0.0), ([1.0, 3.0], 2**0.5 / 2), ([0.0, 0.0], 0.0)],
)
def test_relative_spread_is_stdev_over_mean(samples: list[float], spread: float) -> None:
    assert gpu.relative_spread(samples) == pytest.approx(spread)


def test_clock_reasons_are_named_and_unknown_bits_are_kept() -> None:
    assert throttle_text(0) == "none"
    assert throttle_text(0x4 | 0x40) == "software power cap, hardware thermal slowdown"
    assert throttle_text(0x1000 | 0x1) == "gpu idle, other (0x1000)"
    assert len(THROTTLE_REASONS) == 9
