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


def test_short_work_is_repeated_to_last_a_millisecond_within_the_queue() -> None:
    assert gpu.repeats_for(0.01, calls=1) == 100  # 10 µs of work: 100 runs make 1 ms
    assert gpu.repeats_for(2.0, calls=1) == 1
    assert gpu.repeats_for(0.001, calls=64) == gpu.MAX_QUEUED_CALLS // 64  # never more calls than the queue holds
    assert gpu.repeats_for(0.0, calls=1) == 1


def test_the_time_cap_counts_every_repeat() -> None:
    samples = [10.0, 10.0, 10.0]  # ms per run, 100 runs a sample: 3 s of GPU time
    assert gpu.stop_reason(samples, reps=1) is None
    assert gpu.stop_reason(samples, reps=100) == "time"


def test_probe_words_give_the_span_and_the_clock_it_ran_at() -> None:
    probe = gpu.decode_probe([1_000, 1_501_000, 2 * 1_980_000, 2 * 1_000_000, 2, 0, 0, 0])
    assert probe is not None and probe.span_ns == 1_500_000 and probe.mhz == pytest.approx(1980)
    assert gpu.decode_probe([2**64 - 1, 0, 0, 0, 0, 0, 0, 0]) is None  # no block ran


def raw(events: list[float], kernel: list[float], held: int = 0) -> dict[str, object]:
    return {"ms": events, "kernel_ms": kernel, "held": held}


def test_events_and_the_in_kernel_span_must_agree() -> None:
    assert gpu.agreement(raw([1.0] * 10, [0.99] * 10))[0]
    # A short kernel with host time in its events: 50 µs of work, 80 µs between the events.
    ok, detail = gpu.agreement(raw([0.08] * 10, [0.05] * 10))
    assert not ok and "events 0.0800 ms, in-kernel 0.0500 ms" in detail
    assert not gpu.agreement(raw([1.0] * 10, [0.99] * 10, held=1))[0]  # a hold that gave up
    assert gpu.agreement(raw([1.0] * 10, [])) == (True, "no in-kernel timer in this work")


def test_ncu_csv_is_read_per_launch_in_order() -> None:
    from verifier.profile import parse_csv

    text = "\n".join(
        [
            "==PROF== Connected to process 1",
            '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
            '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"',
            '"0","1","python3","h","read_l1","1","13","(256,1,1)","(1056,1,1)","0","9.0","Command line profiler '
            'metrics","l1tex__t_sector_hit_rate.pct","%","99.5"',
            '"0","1","python3","h","read_l1","1","13","(256,1,1)","(1056,1,1)","0","9.0","x","dram__bytes_read.sum",'
            '"byte","1,024"',
            '"1","1","python3","h","read_l2","1","13","(256,1,1)","(1056,1,1)","0","9.0","x","dram__bytes_read.sum",'
            '"byte","0"',
        ]
    )
    launches = parse_csv(text, ("l1tex__t_sector_hit_rate.pct", "dram__bytes_read.sum"))
    assert launches == [
        ("read_l1", {"l1tex__t_sector_hit_rate.pct": 99.5, "dram__bytes_read.sum": 1024.0}),
        ("read_l2", {"dram__bytes_read.sum": 0.0}),
    ]
    assert parse_csv("==PROF== no kernels were profiled", ("x",)) == []


def test_what_held_the_clocks_back_is_read_across_the_run_not_at_its_ends() -> None:
    from verifier.provenance import clock_events_during

    before = {"software power cap": 1_000_000, "thermal": 0, "sync boost": 0, "board limit": 0, "reliability": 0}
    after = {**before, "software power cap": 1_000_000 + 5_030_100_000}  # 5.03 s of the run under the power cap
    assert clock_events_during(before, after) == {
        "clock_held_back_during": "software power cap 5030.1 ms",
        "clock_held_back_ms": 5030.1,
    }
    assert clock_events_during(before, before)["clock_held_back_during"] == "none"
    assert clock_events_during(None, after) == {
        "clock_held_back_during": "unknown (NVML's violation counters could not be read)"
    }


def test_a_page_warns_of_the_clocks_held_back_while_the_run_ran() -> None:
    from cudagloss.site.provenance_view import clocks_held

    # NVML idle at both ends ("none"), but its counters saw the power cap during the run.
    during = {"clock_limited_by": "gpu idle", "clock_limited_by_end": "none"}
    assert clocks_held({**during, "clock_held_back_during": "software power cap 5030.1 ms"}) == (
        "software power cap 5030.1 ms"
    )
    assert clocks_held({**during, "clock_held_back_during": "none"}) == ""
    assert clocks_held({"clock_limited_by": "software power cap"}) == "software power cap"  # an older file
    assert clocks_held({**during, "clock_held_back_during": None}) == ""  # not text: the ends decide
