"""Latency hiding: DRAM read bandwidth against resident warps per SM and loads in flight per thread.

Each point reads from a buffer at least BUFFER_L2S times the L2 with W warps resident on every SM
(W = 1, 2, 4 ... 64) and U independent 16-byte loads in flight per thread (U = 1, 2, 4, 8): no
load of a round issues before every load of the round before returned (verifier/kernels/
latency_hiding.py), so each SM has exactly W × 32 × U × 16 bytes in flight, and each round trip
waits one loaded memory latency. Residency: one block of 32·W threads per SM (two of 1024 for 64
warps), grid = SMs × blocks per SM. The blocks record the SM they ran on and when: a gate checks
that every SM held exactly that many blocks, all resident at once. Where an untimed launch shows
the block scheduler did not spread them so, that point is run again with dynamic shared memory
that lets no SM hold more (the lever is in the point's description). A point the kernel's
registers cannot make resident (the occupancy API) is skipped and listed.

Each launch reads a fresh slice of the buffer (the slices rotate, so no launch finds its bytes
in L2), of WORK // (W·U) rounds per thread: the same bytes at every point. Samples are queued
behind the wait kernel (gpu.py: no host time in them) and the kernel carries the probe. Per point:
GB/s (10^9 bytes/s), and the time of one round trip, launch time / rounds, which Little's law says
is the bytes in flight over the bandwidth: the latency each load saw under that load.

Predicted on an H200 SXM (132 SMs, 4814 GB/s theoretical; the memory-latency experiment's HBM
level is ~683 cycles, ~345 ns at 1980 MHz, for one load alone): one warp and one load per thread
keep 512 bytes in flight per SM, so about 132 × 512 B / 0.4 µs ≈ 0.17 TB/s; the rate doubles with W
or U while latency stays near the unloaded one, and levels off near 4.5 TB/s once the bytes in
flight pass bandwidth × latency ≈ 4.6 TB/s × 345 ns / 132 ≈ 12 KB per SM, more (20-30 KB) as
the loaded latency grows: 90% of the peak at about 32-64 warps with one load, 16-32 with two,
8-16 with four, 4-8 with eight. The round trip then grows (Little's law: queueing), to several µs
at 64 warps × 4 loads. Eight float4s in flight take 32 registers a thread, so 64 warps × 8 loads
(the whole 256 KB register file in flight) cannot be resident: that point is skipped.
"""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check, compile_source
from verifier.experiment import Outcome, clock_result, timed_result
from verifier.kernels.latency_hiding import ILP, SOURCE

ID = "latency-hiding"
PURPOSE = "DRAM read bandwidth against resident warps per SM and independent loads in flight per thread"
USES = ("gpu.py", "timing.py", "kernels/latency_hiding.py", "kernels/reduce.py")

WARPS = (1, 2, 4, 8, 16, 32, 64)
WORK = 4096
"""Rounds per thread × W × U: every launch reads SMs × 512 B × WORK (277 MB on 132 SMs)."""
BUFFER_L2S, SLICES = 16, 4
"""The buffer holds at least this many L2s and this many launches' slices."""
SAMPLE_MS = 5.0
ONE = 0x3F800000
BANDWIDTH_SLACK = 1.02
NEAR_PEAK = 0.9
"""A point is near the peak at 90% of the sweep's highest bandwidth."""


def shape(warps: int) -> tuple[int, int]:
    """(threads per block, blocks per SM) that make `warps` resident warps per SM."""
    block = 32 * min(warps, 32)
    return block, warps * 32 // block


def name(ilp: int, warps: int) -> str:
    return f"ilp{ilp}_w{warps}"


def placement(where: Any, sms: int, per_sm: int) -> dict[str, Any]:
    """How the blocks of one launch sat: SMs used, fewest and most blocks on one, and whether
    every block started before any ended (all resident at once)."""
    counts = Counter(int(s) for s in where[0::3])
    together = int(where[1::3].max()) < int(where[2::3].min())
    return {
        "sms_used": len(counts),
        "fewest": min(counts.values()),
        "most": max(counts.values()),
        "together": together,
        "exact": len(counts) == sms and set(counts.values()) == {per_sm} and together,
    }


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    from verifier.gpu import opened

    attrs = device.attributes(
        sm_count="CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
        memory_clock_khz="CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE",
        bus_width_bits="CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH",
        smem_sm="CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
        optin="CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
        reserved="CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK",
    )
    sms, l2 = attrs["sm_count"], device.attribute("CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE")
    slice4 = sms * 32 * WORK  # float4s a launch reads: SMs × 32 lanes × W × U × rounds
    n4 = max(-(-BUFFER_L2S * l2 // (16 * slice4)), SLICES) * slice4
    raw: dict[str, Any] = {"points": {}, "skipped": [], "registers": {}, "bytes_per_run": slice4 * 16}
    with opened(device) as gpu, gpu.probe() as probe, gpu.buffer(n4 * 16) as src:
        drv, attr = gpu.drv, gpu.drv.CUfunction_attribute
        check("cuMemsetD32Async", drv.cuMemsetD32Async(src, ONE, n4 * 4, gpu.stream))
        module, _ = device.load(compile_source(SOURCE, "latency_hiding.cu", gpu.arch).image)
        fns = {u: device.function(module, f"stream_u{u}") for u in ILP}
        for u, fn in fns.items():
            regs = drv.cuFuncGetAttribute(attr.CU_FUNC_ATTRIBUTE_NUM_REGS, fn)
            raw["registers"][u] = int(check("cuFuncGetAttribute", regs))
        for u in ILP:
            for w in WARPS:
                block, per_sm = shape(w)
                call = drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(fns[u], block, 0)
                fits = int(check("cuOccupancyMaxActiveBlocksPerMultiprocessor", call))
                if fits < per_sm:
                    raw["skipped"].append(
                        f"{w} warps × {u} loads: at {raw['registers'][u]} registers a thread, {fits} blocks of "
                        f"{block} threads fit an SM, not {per_sm}"
                    )
                    continue
                raw["points"][name(u, w)] = measure(gpu, fns[u], (src, n4, slice4, probe), u, w, attrs)
    return summarise(raw, attrs)


def measure(
    gpu: Any, fn: Any, buffers: tuple[int, int, int, int], u: int, w: int, attrs: dict[str, int]
) -> dict[str, Any]:
    """One point: where an untimed launch shows the scheduler did not place exactly the blocks per
    SM asked, dynamic shared memory that lets no SM hold more; then the timed samples, the last
    launch's block sums and where its blocks sat."""
    import numpy as np

    src, n4, slice4, probe = buffers
    block, per_sm = shape(w)
    sms = attrs["sm_count"]
    grid, rounds = sms * per_sm, WORK // (w * u)
    state = {"base": 0, "shared": 0}
    with gpu.buffer(grid * 8) as sums, gpu.buffer(grid * 24) as where:

        def work() -> None:
            args = [src, state["base"], rounds, 0, sums, where, probe]
            types = (np.uint64, np.uint64, np.uint32, np.uint32, np.uint64, np.uint64, np.uint64)
            gpu.launch(fn, grid, block, [t(v) for t, v in zip(types, args, strict=True)], shared=state["shared"])
            state["base"] = (state["base"] + slice4) % n4

        def placed() -> dict[str, Any]:
            gpu.sync()
            return placement(gpu.download(np.zeros(3 * grid, dtype=np.uint64), where), sms, per_sm)

        work()
        lever = "grid size"
        if not placed()["exact"]:
            attr = gpu.drv.CUfunction_attribute
            static = int(
                check("cuFuncGetAttribute", gpu.drv.cuFuncGetAttribute(attr.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn))
            )
            state["shared"] = min(attrs["optin"], attrs["smem_sm"] // per_sm - attrs["reserved"]) - static
            opt_in = attr.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            check("cuFuncSetAttribute", gpu.drv.cuFuncSetAttribute(fn, opt_in, state["shared"]))
            lever = f"grid size and {state['shared']} bytes of dynamic shared memory a block"
        timed = gpu.time(work, probe=probe, min_ms=SAMPLE_MS)
        where_now = placed()
        total = float(gpu.download(np.zeros(grid, dtype=np.float64), sums).sum())
    point: dict[str, Any] = timed.raw() | {
        "ilp": u, "warps": w, "block": block, "blocks_per_sm": per_sm, "rounds": rounds, "lever": lever,
        "sum": total, "expected": float(grid * block * u * rounds * 4), "placement": where_now,
    }  # fmt: skip
    return point


def in_flight(point: dict[str, Any]) -> int:
    """Bytes in flight per SM: warps × 32 lanes × loads × 16 bytes."""
    return int(point["warps"]) * 32 * int(point["ilp"]) * 16


def summarise(raw: dict[str, Any], attrs: dict[str, int]) -> Outcome:
    """Gates and results from the measured points (pure: the CPU test feeds it fixture data)."""
    points: dict[str, dict[str, Any]] = raw["points"]
    outcome = Outcome(repeats=min((len(p["ms"]) for p in points.values()), default=0))
    wrong = [f"{n}: {p['sum']:.0f} != {p['expected']:.0f}" for n, p in points.items() if p["sum"] != p["expected"]]
    if not outcome.gate("every point's block sums count the floats it read", not wrong, "; ".join(wrong)):
        return outcome
    misplaced = [f"{n}: {p['placement']}" for n, p in points.items() if not p["placement"]["exact"]]
    levers = Counter(str(p["lever"]) for p in points.values())
    outcome.gate(
        "every SM held exactly the blocks asked, all resident at once",
        not misplaced,
        "; ".join(misplaced) or f"levers: {dict(levers)}",
    )
    sms = attrs["sm_count"]
    bytes_per_run = raw["bytes_per_run"]
    gbs = {n: [bytes_per_run / ms / 1e6 for ms in p["ms"]] for n, p in points.items()}
    median = {n: statistics.median(v) for n, v in gbs.items()}
    for n, p in points.items():
        outcome.no_host_time(n.replace("_", " "), p)
        what = (
            f"{p['warps']} warps per SM ({p['blocks_per_sm']} block(s) of {p['block']} threads, placed by "
            f"{p['lever']}), {p['ilp']} independent 16-byte load(s) in flight per thread: {in_flight(p)} bytes in "
            f"flight per SM"
        )
        trips = [ms * 1e6 / p["rounds"] for ms in p["ms"]]
        bandwidth = (
            f"DRAM read bandwidth, {what}; {bytes_per_run} bytes a launch, {p.get('reps', 1)} launches a sample, "
            f"stopped on {p['stopped']} (median)"
        )
        trip = (
            f"time of one round of loads, launch time ÷ {p['rounds']} rounds: by Little's law the bytes in flight "
            f"over the bandwidth, the latency each load saw, {what} (median)"
        )
        outcome.add(
            timed_result(f"gbs_{n}", gbs[n], "GB/s", bandwidth, p, 1, 2),
            timed_result(f"roundtrip_{n}", trips, "ns", trip, p, 1, 2),
            Result(f"inflight_{n}", in_flight(p), "B/SM", f"bytes in flight per SM: {p['warps']} warps × 32 "
                   f"threads × {p['ilp']} loads × 16 bytes"),
            *clock_result(f"gbs_{n}", p, f"the {n.replace('_', ' ')} point"),
        )  # fmt: skip
    for u, regs in sorted(raw.get("registers", {}).items()):
        outcome.add(Result(f"registers_ilp{u}", regs, "registers/thread", f"registers a thread of stream_u{u} uses"))
    skipped = raw.get("skipped") or []
    outcome.add(
        Result(
            "skipped",
            "; ".join(skipped) or "none",
            "",
            "points that cannot be resident: the kernel's registers leave too few blocks per SM",
        )
    )
    theoretical = 2 * attrs["memory_clock_khz"] * 1000 * attrs["bus_width_bits"] / 8 / 1e9
    if theoretical > 0:
        over = [f"{n}: {max(v):.0f} GB/s" for n, v in gbs.items() if max(v) > theoretical * BANDWIDTH_SLACK]
        outcome.gate(
            "no bandwidth above the theoretical (2% for the rounded memory clock)",
            not over,
            "; ".join(over) or f"theoretical {theoretical:.0f} GB/s",
        )
        outcome.add(
            Result("theoretical_gbs", round(theoretical, 1), "GB/s", "2 × memory clock (kHz attribute × 1000) × bus "
                   "width (bits attribute) / 8, in 10^9 bytes/s"),
        )  # fmt: skip
    if median:
        near(outcome, points, median, sms)
    return outcome


def near(outcome: Outcome, points: dict[str, dict[str, Any]], median: dict[str, float], sms: int) -> None:
    """The peak, the fewest warps per SM near it for each load count, and the fewest bytes in flight."""
    best = max(median, key=lambda n: median[n])
    close = [n for n in points if median[n] >= NEAR_PEAK * median[best]]
    least = min(close, key=lambda n: (in_flight(points[n]), points[n]["warps"]))
    outcome.add(
        Result("peak_gbs", round(median[best], 1), "GB/s", f"the highest median bandwidth of the sweep ({best})"),
        Result("peak_inflight_per_sm", in_flight(points[best]), "B/SM", f"bytes in flight per SM at the peak ({best})"),
        Result("inflight_90pct_per_sm", in_flight(points[least]), "B/SM", f"the fewest bytes in flight per SM of a "
               f"point within {1 - NEAR_PEAK:.0%} of the peak ({least}: {points[least]['warps']} warps × "
               f"{points[least]['ilp']} loads)"),
    )  # fmt: skip
    for u in ILP:
        mine = [points[n]["warps"] for n in close if points[n]["ilp"] == u]
        if mine:
            outcome.add(
                Result(f"warps_90pct_ilp{u}", min(mine), "warps/SM", f"the fewest resident warps per SM with {u} "
                       f"load(s) in flight per thread that reached {NEAR_PEAK:.0%} of the peak bandwidth"),
            )  # fmt: skip
    first = name(1, 1)
    if first in points:
        trips = {n: statistics.median(p["ms"]) * 1e6 / p["rounds"] for n, p in points.items()}
        outcome.add(
            Result("roundtrip_growth", round(trips[best] / trips[first], 2), "×", f"round trip at the peak ({best}) "
                   f"over the round trip of one warp with one load per SM ({first}): the latency queueing adds"),
        )  # fmt: skip
