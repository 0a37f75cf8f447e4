"""host-transfer on the CPU (it has no kernel): which sizes fit, and its gates and results from
fixture numbers as the page will show them: pinned copies as GPU time with no host time in them,
pageable copies as host costs."""

from __future__ import annotations

from typing import Any

import pytest
from verifier.experiments import host_transfer as ht
from verifier.timing import Timed

# Fixture rates of plausible H200-on-PCIe-5 size, written by hand for this test: not measurements.
GBPS = {"pinned": 50.0, "pageable": 20.0}


def fixture(skipped: tuple[int, ...] = (), **change: Any) -> dict[str, Any]:
    timed: dict[str, dict[str, Any]] = {}
    for size in ht.SIZES:
        if size in skipped:
            continue
        for direction in ht.DIRECTIONS:
            for kind in ht.KINDS:
                rate = GBPS[kind] * (1.05 if direction == "d2h" else 1.0)
                ms = [size / rate / 1e6] * 10
                key = f"{direction}_{kind}_{ht.size_name(size)}"
                timed[key] = Timed(ms, "spread", reps=8).raw() if kind == "pinned" else {"ms": ms, "method": "host"}
    raw: dict[str, Any] = {"timed": timed, "intact": dict.fromkeys(timed, True), "skipped": list(skipped)}
    raw.update(change)
    return raw


def test_sizes_are_named_and_skipped_when_memory_is_short() -> None:
    assert [ht.size_name(s) for s in ht.SIZES] == ["64kib", "1mib", "16mib", "256mib"]
    assert ht.size_text(64 << 10) == "64 KiB" and ht.size_text(256 << 20) == "256 MiB"
    assert ht.fits(256 << 20, host_free=8 << 30, device_free=140 << 30)
    assert not ht.fits(256 << 20, host_free=1 << 30, device_free=140 << 30)
    assert not ht.fits(256 << 20, host_free=8 << 30, device_free=256 << 20)
    assert ht.USES == ("gpu.py", "timing.py")


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = ht.summarise(fixture(), repeats=10)
    assert len(outcome.gates) == 2 + 4 * 2  # intact, fastest, and no host time in each pinned case
    assert all(g.passed for g in outcome.gates)
    values = {r.name: r for r in outcome.results}
    assert len(values) == 4 * 2 * 2 + 3
    assert values["largest_size"].value == 256 and values["largest_size"].unit == "MiB"
    assert values["largest_size"].description.endswith("memory was short: none)")
    assert values["h2d_pinned_256mib"].value == pytest.approx(50.0)
    assert values["h2d_pinned_256mib"].unit == "GB/s" and len(values["h2d_pinned_256mib"].samples) == 10
    assert values["d2h_pageable_64kib"].value == pytest.approx(21.0)
    assert values["h2d_pinned_over_pageable"].value == 2.5 and values["h2d_pinned_over_pageable"].unit == "×"
    assert "256 MiB" in values["d2h_pinned_over_pageable"].description


def test_pinned_copies_are_gpu_time_and_pageable_ones_host_costs() -> None:
    results = ht.summarise(fixture(), repeats=10).results
    for r in results:
        if "_pinned_" in r.name and "over" not in r.name:
            assert r.method == "gpu-queued", r.name
            assert r.description.startswith("GPU time: ") and "no host time" in r.description
        elif "_pageable_" in r.name:
            assert r.method == "host", r.name
            assert r.description.startswith("host cost: ") and "host-paced" in r.description
            assert r.description.endswith("the host CPU is in the provenance")
        else:
            assert r.method == "", r.name  # a size or a ratio of medians: derived, not measured


def test_host_time_in_a_pinned_sample_fails_its_gate() -> None:
    raw = fixture()
    raw["timed"]["h2d_pinned_64kib"]["held"] = 2
    gates = {g.name: g for g in ht.summarise(raw, repeats=10).gates}
    failed = [name for name, g in gates.items() if not g.passed]
    assert failed == ["no host time in the pinned h2d copies of 64 KiB (events agree with the in-kernel timer)"]
    assert "2 of 10 samples" in gates[failed[0]].detail


def test_corrupted_data_or_an_impossible_rate_fails_and_a_skipped_size_is_said() -> None:
    raw = fixture()
    raw["intact"]["d2h_pinned_1mib"] = False
    gates = ht.summarise(raw, repeats=10).gates
    assert not gates[0].passed and gates[0].detail == "corrupted: d2h_pinned_1mib"
    outcome = ht.summarise(fixture(skipped=(256 << 20,)), repeats=10)
    assert all(g.passed for g in outcome.gates)
    values = {r.name: r for r in outcome.results}
    assert values["largest_size"].value == 16 and "short: 256 MiB)" in values["largest_size"].description
    assert "16 MiB" in values["d2h_pinned_over_pageable"].description
    raw = fixture()
    raw["timed"]["h2d_pinned_16mib"]["ms"] = [1e-6] * 10
    fastest = next(g for g in ht.summarise(raw, repeats=10).gates if g.name.startswith("no copy is faster"))
    assert not fastest.passed
