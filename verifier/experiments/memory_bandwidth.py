"""Memory bandwidth per level, each level served by construction: L1, L2 and HBM reads, and copies.

HBM: a read-only float4 kernel and cuMemcpyDtoDAsync over 256 MiB to 4 GiB (4 to 68 times the
L2). L2: the same read with `ld.global.cg` (L2 only, never L1) over 8 to 24 MiB, under half the
L2 (an SM reaches Hopper's far L2 partition more slowly), read again and again in one launch.
L1: each block re-reads its own 16 KiB slice with `ld.global.ca`. Where Nsight Compute runs,
each read kernel runs once more under it (verifier/profile.py, verifier/levels.py): hit rates
and DRAM bytes per byte are recorded and gated; elsewhere a result says "not cross-checked".

Samples are queued behind the wait kernel (verifier/gpu.py): no host time. The read kernels time
themselves (%globaltimer) and read their SM clock, and rates per clock sit beside the rates. The
copies are timed a second way, by long unqueued runs, and must agree within 3%; their replay as
CUDA graph memcpy nodes is recorded beside them (a graph may copy another way). The reads sum
what they read (1.0f fills), and the copy's destination is checked at sampled positions. GB/s are
10^9 bytes/s; a copy counts read + write bytes; the theoretical peak is 2 × memory clock × bus
width / 8 from the attributes.

Prediction (4814 GB/s in theory): HBM reads about 90% of it, copies a little lower (PyTorch's
gave 4.3 TB/s here); L2 about twice HBM (a lead); L1 up to 128 B per clock per SM.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check
from verifier.experiment import Outcome, clock_result, timed_result
from verifier.kernels.bandwidth import SOURCE
from verifier.levels import METRICS, crosscheck

ID = "memory-bandwidth"
PURPOSE = "Read bandwidth of L1, L2 and HBM, each served by construction, and device-to-device copies"
USES = ("gpu.py", "timing.py", "profile.py", "levels.py", "kernels/bandwidth.py", "kernels/reduce.py")

MIB = 1 << 20
HBM_SIZES = (256 * MIB, 1024 * MIB, 4096 * MIB)
L2_SIZES = (8 * MIB, 16 * MIB, 24 * MIB)
L1_SLICE = 16 * 1024
"""Bytes each block of the L1 read re-reads; up to 8 such blocks an SM fit its L1 together."""
L2_BYTES_PER_LAUNCH = 2048 * MIB
L1_PASSES = 2048
BLOCK = 256
SANITY = 1.05  # an HBM rate over the theoretical peak by more than clock rounding is impossible
SECOND_METHOD = 0.03
"""A copy timed queued and timed by long unqueued runs (gpu.time_unqueued) agree within 3%."""
HBM_SAMPLE_MS = 20.0
"""HBM samples this long span the stretches of tens of ms in which the H200's reads were seen to
drop about 12%, rather than landing inside one: the median is the sustained rate."""
ONE = 0x3F800000  # 1.0f: the read buffers hold it, so a sum is an element count
PATTERN = 2654435761
"""Word i of the copy's source is i × PATTERN mod 2^32 (Knuth's multiplicative hash)."""


def label(size: int) -> str:
    """'8mib', '1gib': the size as it appears in result names."""
    return f"{size >> 30}gib" if size >= 1 << 30 and size % (1 << 30) == 0 else f"{size >> 20}mib"


def pretty(size: int) -> str:
    return label(size).replace("gib", " GiB").replace("mib", " MiB")


def theoretical_gbs(attrs: dict[str, int]) -> float | None:
    """2 (double data rate) × memory clock (kHz × 1000) × bus width (bits) / 8, in GB/s."""
    khz, bits = attrs.get("memory_clock_khz", 0), attrs.get("bus_width_bits", 0)
    return 2 * khz * 1000 * bits / 8 / 1e9 if khz > 0 and bits > 0 else None


def expected_pattern(index: Any) -> Any:
    """Words of the copy's source at the given indices (numpy), as fill_pattern writes them."""
    import numpy as np

    return (np.asarray(index, dtype=np.uint64) * PATTERN % (1 << 32)).astype(np.uint32)


def rates(case: dict[str, Any]) -> list[float]:
    """GB/s per sample of one case (bytes it moves per run over each sample's ms per run)."""
    return [case["bytes_per_run"] / (ms / 1000) / 1e9 for ms in case["ms"]]


def summarise(raw: dict[str, Any], attrs: dict[str, int]) -> Outcome:
    """Gates and results from the measured cases (see measure_*), the attributes and, where
    ncu ran, the counters (raw['counters']: launches, or why none)."""
    cases: dict[str, dict[str, Any]] = raw["cases"]
    outcome = Outcome(repeats=min((len(c["ms"]) for c in cases.values()), default=0))
    peak = theoretical_gbs(attrs)
    outcome.gate("every case fitted in free memory", not raw.get("skipped"), f"skipped: {raw.get('skipped', [])}")
    wrong = [
        f"{n}: {c['sum']} != {c['expected']}" for n, c in cases.items() if "sum" in c and c["sum"] != c["expected"]
    ]
    outcome.gate("each read kernel's block sums add up to elements × passes", not wrong, "; ".join(wrong))
    bad = [
        f"{n}: {c['mismatches']} of {c['checked']}"
        for n, c in cases.items()
        if c.get("mismatches") or ("checked" in c and not c["checked"])
    ]
    outcome.gate("the copy's destination equals the source at sampled positions", not bad, "; ".join(bad))
    achieved = {name: statistics.median(rates(case)) for name, case in cases.items()}
    over = []
    for name, case in cases.items():
        outcome.no_host_time(name.replace("_", " "), case)
        outcome.add(
            timed_result(name, rates(case), "GB/s", f"{case['what']}; median of samples in GB/s", case, 1, 2),
            *clock_result(name, case, case["what"].split(";")[0]),
        )
        if peak and case.get("level") == "hbm" and achieved[name] > SANITY * peak:
            over.append(f"{name}: {achieved[name]:.0f} GB/s")
    for name, case in cases.items():
        if not case.get("clock_mhz"):
            continue
        mhz, sms = statistics.median(case["clock_mhz"]), attrs.get("sm_count", 0)
        if case.get("level") == "l1" and sms:
            outcome.add(
                Result(
                    f"{name}_per_clock",
                    round(achieved[name] * 1e3 / mhz / sms, 1),
                    "B/clock/SM",
                    f"the L1 read's bytes per SM clock per SM, at the {mhz:.0f} MHz it ran at",
                )
            )
        elif case.get("level") == "l2":
            outcome.add(
                Result(
                    f"{name}_per_clock",
                    round(achieved[name] * 1e3 / mhz, 1),
                    "B/clock",
                    f"the L2 read's bytes per SM clock (all SMs together), at the {mhz:.0f} MHz it ran at",
                )
            )
    for name, case in cases.items():
        if "unqueued_ms" in case:
            queued = achieved[name]
            unqueued = statistics.median(case["bytes_per_run"] / (ms / 1000) / 1e9 for ms in case["unqueued_ms"])
            outcome.gate(
                f"{name.replace('_', ' ')} agrees timed queued and by long unqueued runs (within {SECOND_METHOD:.0%})",
                abs(queued - unqueued) <= SECOND_METHOD * min(queued, unqueued),
                f"queued {queued:.0f} GB/s, unqueued {unqueued:.0f} GB/s",
            )
    if peak is not None:
        outcome.add(
            Result(
                "theoretical_gbs",
                round(peak, 1),
                "GB/s",
                "2 × memory clock (kHz attribute × 1000) × bus width (bits attribute) / 8, in 10^9 bytes/s",
            )
        )
        outcome.gate(
            f"HBM rates are at most {SANITY} × theoretical", not over, "; ".join(over) or f"theoretical {peak:.0f} GB/s"
        )
        largest = label(max(HBM_SIZES))
        for kind in ("copy", "read"):
            if f"{kind}_{largest}" in achieved:
                outcome.add(
                    Result(
                        f"{kind}_efficiency",
                        round(100 * achieved[f"{kind}_{largest}"] / peak, 1),
                        "%",
                        f"{kind} at the largest size ({pretty(max(HBM_SIZES))}) over the theoretical peak",
                    )
                )
    crosscheck(outcome, raw.get("counters"), raw.get("profiled", {}))
    return outcome


PROFILED = {
    "l1_read": ("read_l1", 0, 64, "l1"),
    "l2_read_16mib": ("read_l2", 16 * MIB, 128, "l2"),
    "read_1gib": ("read_hbm", 1024 * MIB, 1, "hbm"),
    "nc_read_4mib": ("read_hbm", 4 * MIB, 16, "nc"),
}
"""profile()'s launches: case, kernel, bytes (0: L1 slices), passes (ncu empties the caches first,
so pass one is DRAM's), level. nc_read_4mib is the first glossary's "L2" read: what served it?"""


def _kernels(gpu: Any, sms: int) -> tuple[dict[str, Any], int]:
    """The kernels, and the grid that fills every SM with resident blocks of the read kernels."""
    fns = {name: gpu.kernel(SOURCE, name) for name in ("read_hbm", "read_l2", "read_l1", "fill_pattern")}
    drv = gpu.drv
    per_sm = check(
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(fns["read_hbm"], BLOCK, 0),
    )
    return fns, max(1, min(int(per_sm), 8)) * sms


def _read(
    gpu: Any, fn: Any, size: int, passes: int, grid: int, probe: int, min_ms: float = 1.0
) -> tuple[dict[str, Any], float]:
    """Time one read kernel over a buffer of 1.0f (size 0: the L1 slices, one per block)."""
    import numpy as np

    nbytes = size or grid * L1_SLICE
    with gpu.buffer(nbytes) as src, gpu.buffer(grid * 8) as sums:
        check("cuMemsetD32Async", gpu.drv.cuMemsetD32Async(src, ONE, nbytes // 4, gpu.stream))
        count = np.uint32(L1_SLICE // 16) if size == 0 else np.uint64(size // 16)
        args = [np.uint64(src), count, np.uint32(passes), np.uint64(sums), np.uint64(probe)]
        timed = gpu.time(lambda: gpu.launch(fn, grid, BLOCK, args), probe=probe or None, min_ms=min_ms)
        gpu.sync()
        total = float(gpu.download(np.empty(grid, dtype=np.float64), sums).sum())
    return timed.raw() | {
        "bytes_per_run": nbytes * passes,
        "sum": total,
        "expected": float(nbytes // 4 * passes),
    }, nbytes


def _copy(gpu: Any, size: int, fill: Any, grid: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Time the copy queued and as a graph replay; check its destination at sampled positions."""
    import numpy as np

    drv, words = gpu.drv, size // 4
    with gpu.buffer(size) as src, gpu.buffer(size) as dst:
        gpu.launch(fill, grid, BLOCK, [np.uint64(src), np.uint64(words)])
        check("cuMemsetD32Async", drv.cuMemsetD32Async(dst, 0, words, gpu.stream))

        def copy() -> None:
            check("cuMemcpyDtoDAsync", drv.cuMemcpyDtoDAsync(dst, src, size, gpu.stream))

        queued, graph = gpu.time(copy, min_ms=HBM_SAMPLE_MS), gpu.time_graph(copy, min_ms=HBM_SAMPLE_MS)
        unqueued = gpu.time_unqueued(copy)
        gpu.sync()
        mismatches = 0
        for start in np.linspace(0, words - 1024, 8, dtype=np.int64):
            got = gpu.download(np.empty(1024, dtype=np.uint32), dst + int(start) * 4)
            mismatches += int(np.count_nonzero(got != expected_pattern(np.arange(start, start + 1024))))
    common = {"bytes_per_run": 2 * size, "level": "hbm"}
    checked = {"mismatches": mismatches, "checked": 8192, "unqueued_ms": unqueued.samples}
    return queued.raw() | common | checked, graph.raw() | common


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    from verifier.gpu import opened
    from verifier.profile import counters

    attrs = device.memory_facts() | device.attributes(sm_count="CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
    l2 = attrs["l2_bytes"] >> 20
    raw: dict[str, Any] = {"cases": {}, "skipped": []}
    cases = raw["cases"]
    with opened(device) as gpu, gpu.probe() as probe:
        fns, grid = _kernels(gpu, attrs["sm_count"])
        case, _ = _read(gpu, fns["read_l1"], 0, L1_PASSES, grid, probe)
        cases["l1_read"] = case | {
            "level": "l1",
            "what": f"L1: each block re-reads its own {L1_SLICE >> 10} KiB slice (ld.global.ca float4), "
            f"{L1_PASSES} passes a launch",
        }
        for size in L2_SIZES:
            case, _ = _read(gpu, fns["read_l2"], size, max(1, L2_BYTES_PER_LAUNCH // size), grid, probe)
            cases[f"l2_read_{label(size)}"] = case | {
                "level": "l2",
                "what": f"L2: a {pretty(size)} buffer read by every SM with ld.global.cg (L2 only, never L1), "
                f"under half the {l2} MiB L2, read again and again",
            }
        for size in HBM_SIZES:
            free, _ = check("cuMemGetInfo", gpu.drv.cuMemGetInfo())
            if 2 * size > int(free) // 2:
                raw["skipped"].append(pretty(size))
                continue
            where = (
                f"{pretty(size)} buffer, {size // attrs['l2_bytes'] if attrs['l2_bytes'] else 0} times the {l2} MiB L2"
            )
            queued, graph = _copy(gpu, size, fns["fill_pattern"], grid)
            cases[f"copy_{label(size)}"] = queued | {
                "what": f"HBM: cuMemcpyDtoDAsync, {where}, read + write bytes, queued behind a wait kernel"
            }
            cases[f"copy_{label(size)}_graph"] = graph | {
                "what": f"HBM: the same copies as memcpy nodes of a CUDA graph, replayed, {where} (a graph "
                "may run a copy another way than a stream does: compare the two)"
            }
            case, _ = _read(gpu, fns["read_hbm"], size, 1, grid, probe, HBM_SAMPLE_MS)
            cases[f"read_{label(size)}"] = case | {
                "level": "hbm",
                "what": f"HBM: read-only float4 kernel (ld.global.nc), {where}",
            }
    raw["profiled"] = {
        name: {"level": level, "bytes": (size or grid * L1_SLICE) * passes}
        for name, (_, size, passes, level) in PROFILED.items()
    }
    raw["counters"] = counters(ID, METRICS)
    return summarise(raw, attrs)


def profile(device: Device) -> None:
    """Each PROFILED case launched once, untimed, for Nsight Compute (verifier/profile.py)."""
    import numpy as np

    from verifier.gpu import opened

    with opened(device) as gpu:
        fns, grid = _kernels(gpu, device.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"))
        for kernel, size, passes, _ in PROFILED.values():
            nbytes = size or grid * L1_SLICE
            with gpu.buffer(nbytes) as src, gpu.buffer(grid * 8) as sums:
                check("cuMemsetD32Async", gpu.drv.cuMemsetD32Async(src, ONE, nbytes // 4, gpu.stream))
                count = np.uint32(L1_SLICE // 16) if size == 0 else np.uint64(size // 16)
                gpu.launch(
                    fns[kernel], grid, BLOCK, [np.uint64(src), count, np.uint32(passes), np.uint64(sums), np.uint64(0)]
                )
                gpu.sync()
