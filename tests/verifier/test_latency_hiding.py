"""latency-hiding on the CPU: its kernels compile for sm_90 with the registers the residency plan
needs, the placement check reads the blocks' records, and the gates and results come out of
fixture numbers."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import latency_hiding as lh
from verifier.kernels.latency_hiding import ILP, SOURCE

# Fixture values shaped like an H200's (132 SMs, 4814 GB/s theoretical, ~400 ns a DRAM round trip
# unloaded), written by hand for this test: not measurements.
ATTRS = {"sm_count": 132, "memory_clock_khz": 3_201_000, "bus_width_bits": 6016}
SMS = 132
BYTES = SMS * 32 * lh.WORK * 16


def point(u: int, w: int, latency_ns: float = 400.0, peak: float = 4.5e12, **change: Any) -> dict[str, Any]:
    """One point as measure() keeps it: each round waits the latency or, once the bytes in flight
    pass bandwidth × latency, the time the peak bandwidth takes to move them."""
    block, per_sm = lh.shape(w)
    rounds = lh.WORK // (w * u)
    round_ns = max(latency_ns, SMS * w * 32 * u * 16 / peak * 1e9)
    ms = rounds * round_ns / 1e6
    samples = [ms, ms * 1.003, ms * 0.997] * 4
    floats = float(SMS * per_sm * block * u * rounds * 4)
    raw = {"ms": samples, "stopped": "spread", "reps": 3, "held": 0, "method": "gpu-queued"}
    raw |= {"kernel_ms": [t * 0.999 for t in samples], "clock_mhz": [1980.0] * len(samples)}
    raw |= {"ilp": u, "warps": w, "block": block, "blocks_per_sm": per_sm, "rounds": rounds, "lever": "grid size"}
    raw |= {"sum": floats, "expected": floats}
    raw["placement"] = {"sms_used": SMS, "fewest": per_sm, "most": per_sm, "together": True, "exact": True}
    return raw | change


def fixture() -> dict[str, Any]:
    points = {lh.name(u, w): point(u, w) for u in ILP for w in lh.WARPS if w * u < 512}
    return {
        "points": points,
        "skipped": ["64 warps × 8 loads: at 51 registers a thread, 1 blocks of 1024 threads fit an SM, not 2"],
        "registers": {1: 24, 2: 28, 4: 31, 8: 51},
        "bytes_per_run": BYTES,
    }


def values(outcome: Any) -> dict[str, Any]:
    return {r.name: r for r in outcome.results}


def test_the_kernels_compile_and_fit_the_residency_they_are_asked_for() -> None:
    import re

    log = compile_source(SOURCE, "latency_hiding.cu", "sm_90", ("--ptxas-options=-v",)).log
    used = dict(re.findall(r"entry function 'stream_u(\d+)'.*?Used (\d+) registers", log, re.S))
    assert set(used) == {str(u) for u in ILP}
    assert all(int(used[str(u)]) <= 32 for u in (1, 2, 4))  # two blocks of 1024 threads per SM
    assert int(used["8"]) <= 64 and set(re.findall(r"(\d+) bytes spill stores", log)) == {"0"}


def test_shapes_make_the_warps_asked_and_every_launch_reads_the_same_bytes() -> None:
    for w in lh.WARPS:
        block, per_sm = lh.shape(w)
        assert block * per_sm == 32 * w and block <= 1024
        for u in ILP:
            assert (lh.WORK // (w * u)) * w * u == lh.WORK


def test_placement_reads_the_blocks_records() -> None:
    import numpy as np

    def records(sms: list[int], starts: list[int], ends: list[int]) -> Any:
        return np.array([x for row in zip(sms, starts, ends, strict=True) for x in row], dtype=np.uint64)

    good = lh.placement(records([0, 1, 2, 3, 0, 1, 2, 3], [10] * 8, [50] * 8), 4, 2)
    assert good["exact"] and good["sms_used"] == 4 and good["together"]
    crowded = lh.placement(records([0, 0, 0, 1, 2, 3, 3, 2], [10] * 8, [50] * 8), 4, 2)
    assert not crowded["exact"] and crowded["most"] == 3 and crowded["fewest"] == 1
    waves = lh.placement(records([0, 1, 2, 3, 0, 1, 2, 3], [10, 10, 10, 10, 60, 60, 60, 60], [50] * 8), 4, 2)
    assert not waves["exact"] and not waves["together"]


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = lh.summarise(fixture(), ATTRS)
    assert all(g.passed for g in outcome.gates), [g for g in outcome.gates if not g.passed]
    got = values(outcome)
    one = SMS * 512 / 400e-9 / 1e9  # one warp, one load: 512 B per SM every 400 ns
    assert got["gbs_ilp1_w1"].value == pytest.approx(one, rel=1e-3) and got["gbs_ilp1_w1"].unit == "GB/s"
    assert got["roundtrip_ilp1_w1"].value == pytest.approx(400, rel=1e-3) and got["roundtrip_ilp1_w1"].unit == "ns"
    assert got["inflight_ilp1_w1"].value == 512 and got["inflight_ilp4_w64"].value == 64 * 32 * 4 * 16
    assert got["gbs_ilp1_w1_clock"].value == 1980 and got["gbs_ilp4_w64"].value == pytest.approx(4500, rel=1e-2)
    assert "gbs_ilp8_w64" not in got and "64 warps × 8 loads" in got["skipped"].value
    assert got["peak_gbs"].value == pytest.approx(4500, rel=1e-2)
    # 4.5 TB/s × 400 ns / 132 SMs = 13.6 KB per SM: the first power of two past 90% of it is 16 KiB
    assert got["inflight_90pct_per_sm"].value == 16384 and got["inflight_90pct_per_sm"].unit == "B/SM"
    assert [got[f"warps_90pct_ilp{u}"].value for u in ILP] == [32, 16, 8, 4]
    assert got["registers_ilp8"].value == 51 and got["registers_ilp8"].unit == "registers/thread"
    assert got["roundtrip_growth"].value > 1 and got["theoretical_gbs"].value == pytest.approx(4814.3, rel=1e-4)
    assert outcome.repeats == 12


def test_wrong_sums_fail_first_and_report_nothing() -> None:
    raw = fixture()
    raw["points"]["ilp2_w8"]["sum"] -= 4
    outcome = lh.summarise(raw, ATTRS)
    assert [g.passed for g in outcome.gates] == [False] and outcome.results == []


def test_misplaced_blocks_host_time_and_impossible_bandwidth_fail() -> None:
    raw = fixture()
    raw["points"]["ilp1_w1"]["placement"] = {"sms_used": 131, "fewest": 1, "most": 2, "together": True, "exact": False}
    gates = lh.summarise(raw, ATTRS).gates
    assert not next(g for g in gates if "every SM held" in g.name).passed
    raw = fixture()
    raw["points"]["ilp4_w16"]["held"] = 1
    assert [g.passed for g in lh.summarise(raw, ATTRS).gates].count(False) == 1
    fast = fixture()
    fast["points"] = {lh.name(4, w): point(4, w, peak=5.5e12, latency_ns=40) for w in lh.WARPS}
    gates = lh.summarise(fast, ATTRS).gates
    assert not next(g for g in gates if "theoretical" in g.name).passed
