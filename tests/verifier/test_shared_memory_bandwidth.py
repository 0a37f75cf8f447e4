"""shared-memory-bandwidth on the CPU: its kernels compile for sm_90 with the probe, the CPU's sums
are what a thread reads, and the gates and results come out of fixture numbers as the page shows them."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import shared_memory_bandwidth as sm

# Fixture values shaped like an H200's (132 SMs, 1980 MHz, about 125 B per clock per SM from shared
# memory and 110 from L1), written by hand for this test: not measurements.
ATTRS = {"sm_count": 132, "clock_khz": 1_980_000}
THREADS = 132 * sm.BLOCKS_PER_SM * sm.BLOCK
PER_CLOCK = {"smem_4b": 125.0, "smem_8b": 126.0, "smem_16b": 126.5, "l1_16b": 110.0}
DUMP = """
        /*0330*/                   LEA R25, R11, UR4, 0x2 ;
        /*0380*/                   LDS.128 R12, [R25] ;
        /*0390*/                   LDS.128 R16, [R25+0x200] ;
        /*03a0*/                   IADD3 R26, R14, R13, R12 ;
        /*06d0*/               @P2 BRA 0x330 ;
"""


def launch(per_clock: float, clock: float = 1980.0, samples: int = 10) -> dict[str, Any]:
    """One launch's Timed.raw() at per_clock bytes per clock per SM, and its checks."""
    ms = THREADS * sm.BYTES_PER_THREAD / (per_clock * clock * 1e6 * 132) * 1e3
    raw = {"ms": [ms] * samples, "stopped": "spread", "reps": 5, "held": 0, "method": "gpu-queued"}
    return raw | {
        "kernel_ms": [ms * 0.998] * samples,
        "clock_mhz": [clock] * samples,
        "wrong": 0,
        "sass": {"dump": DUMP},
    }


def fixture(**change: Any) -> dict[str, Any]:
    return {"threads": THREADS} | {key: launch(rate) for key, rate in PER_CLOCK.items()} | change


def values(outcome: Any) -> dict[str, Any]:
    return {r.name: r for r in outcome.results}


def test_the_kernels_compile_for_sm_90_with_the_probe_and_no_spills() -> None:
    compiled = compile_source(sm.SOURCE, "smem.cu", "sm_90", ("--ptxas-options=-v",))
    assert compiled.kind == "cubin" and compiled.image[:4] == b"\x7fELF"
    assert compiled.log.count("0 bytes spill stores") == 4 and compiled.log.count("16384 bytes smem") == 3
    for _, _, kernel in sm.KERNELS.values():
        assert f" {kernel}(const " in sm.SOURCE
    assert (
        sm.SOURCE.count("ProbeMark mark = probe_begin(probe);") == 4
        and sm.SOURCE.count('asm volatile("" ::: "memory")') == 4
    )


def test_expected_sums_are_what_each_lane_reads() -> None:
    """Three turns of lane 5 (and lane 31) element by element, every width: the base moves 512
    elements a turn and wraps at the pattern's end."""
    words = [int(w) for w in sm.pattern()]
    for width in sm.WIDTHS:
        per = width // 4
        n = len(words) // per
        for lane in (5, 31):
            total = 0
            for turn in range(3):
                base = (turn * 32 * sm.UNROLL) % n
                for u in range(sm.UNROLL):
                    e = base + lane + 32 * u
                    total += sum(words[e * per : (e + 1) * per])
            assert sm.expected(width, 3)[lane] == total % 2**32
    assert sm.expected(4, 3) != sm.expected(4, 4) and sm.expected(16, 2)[0] != sm.expected(16, 2)[1]
    assert all(sm.iters(w) * sm.UNROLL * w == sm.BYTES_PER_THREAD for w in sm.WIDTHS)


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = sm.summarise(fixture(), ATTRS)
    assert outcome.repeats == 10 and all(g.passed for g in outcome.gates) and len(outcome.gates) == 9
    got = values(outcome)
    assert got["smem_4b_bytes_per_clock_per_sm"].value == 125.0 and got["l1_16b_bytes_per_clock_per_sm"].value == 110.0
    assert got["smem_16b_bytes_per_clock_per_sm"].unit == "B/clock/SM"
    assert got["smem_16b_tbps"].value == round(126.5 * 132 * 1.98e9 / 1e12, 2) == 33.06
    assert got["peak_tbps_at_max_clock"].value == round(128 * 132 * 1.98e9 / 1e12, 2) == 33.45
    assert got["smem_8b_fraction_of_peak"].value == round(100 * 126 / 128, 1)
    assert got["warps_per_sm"].value == 64 and got["pattern_bytes"].value == 16 and got["pattern_bytes"].unit == "KiB"
    assert got["l1_16b_clock"].value == 1980 and got["smem_4b_clock"].method == "in-kernel"
    assert got["smem_16b_sass_per_loop"].value == 2 and got["smem_16b_sass_mnemonics"].value == "2 LDS.128"
    assert got["smem_4b_tbps"].samples == [got["smem_4b_tbps"].value] * 10


def test_more_than_128_bytes_per_clock_fails() -> None:
    """140 B per clock per SM is more than 32 banks deliver; at 1500 MHz it is still 27.7 TB/s."""
    raw = fixture(smem_8b=launch(140.0, clock=1500.0))
    failed = [g for g in sm.summarise(raw, ATTRS).gates if not g.passed]
    assert len(failed) == 1 and "smem_8b" in failed[0].name and "best 140.0" in failed[0].detail
    no_clock = fixture(l1_16b=launch(110.0) | {"clock_mhz": []})
    assert [g.name for g in sm.summarise(no_clock, ATTRS).gates if not g.passed] == [
        "the l1_16b rate per clock is at most 128 B per clock per SM"
    ]


def test_wrong_sums_fail_and_report_nothing() -> None:
    outcome = sm.summarise(fixture(smem_4b=launch(125.0) | {"wrong": 3}), ATTRS)
    assert [g.passed for g in outcome.gates] == [False] and outcome.results == []
    assert "'smem_4b': 3" in outcome.gates[0].detail


def test_host_time_fails_its_gate() -> None:
    late = launch(125.0)
    raw = fixture(smem_16b=late | {"ms": [t * 1.1 for t in late["ms"]]}, l1_16b=launch(110.0) | {"held": 1})
    assert [g.name for g in sm.summarise(raw, ATTRS).gates if not g.passed] == [
        "no host time in the 16-byte reads of shared memory (events agree with the in-kernel timer)",
        "no host time in the 16-byte reads of a 16 KiB global buffer (L1 hits) (events agree with the in-kernel timer)",
    ]
