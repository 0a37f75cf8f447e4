"""Host<->device copies: pageable (a numpy array) against pinned (cuMemHostAlloc) memory, both ways.

The GPU's copy engines read and write host memory by DMA, which needs page-locked memory: from
a pageable buffer the driver first copies through a pinned staging buffer of its own, with the
CPU, so a pageable copy is host-paced and its rate a host cost (the host CPU is in the
provenance). Its samples are CUDA events around one cuMemcpyHtoDAsync or cuMemcpyDtoHAsync as
the host issues it (queued behind a held stream, a pageable copy that waits for the GPU would
never return). A pinned copy is the GPU's and the link's: its copies are queued behind gpu.py's
hold and repeated to fill each sample (gpu.time), so no host time is in it; an event pair
around one small copy issued from Python timed mostly the host (a 64 KiB copy read 6.8 GB/s on h200-lent).
Sizes run from 64 KiB to 256 MiB (a size is skipped when host or device memory is short).
After each direction's samples, the data is copied back and compared with what was sent.
"""

from __future__ import annotations

import os
import statistics
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check
from verifier.experiment import Outcome, median_result
from verifier.timing import sampled

ID = "host-transfer"
PURPOSE = "host-to-device and device-to-host copy rates, pageable against pinned memory, 64 KiB to 256 MiB"
USES = ("gpu.py", "timing.py")

SIZES = (64 << 10, 1 << 20, 16 << 20, 256 << 20)
KINDS = ("pageable", "pinned")
DIRECTIONS = ("h2d", "d2h")
WAYS = {"h2d": "host to device", "d2h": "device to host"}
MAX_SAMPLES, MAX_MS = 40, 400.0
"""Per pageable case, beside the spread rule: 8 host-paced cases must fit the experiment's budget
(pinned cases follow gpu.time's rule: at most 2 s of GPU time each)."""
METHOD = {"pageable": "host", "pinned": "gpu-queued"}
FASTEST_LINK_GBPS = 900.0
"""NVLink-C2C (GH200) is the fastest host link an H200 has; a faster copy was not timed right."""


def size_name(size: int) -> str:
    return f"{size >> 20}mib" if size >= 1 << 20 else f"{size >> 10}kib"


def size_text(size: int) -> str:
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def fits(size: int, host_free: int, device_free: int) -> bool:
    """Room for the case: two host buffers of each kind and one device buffer, with a margin."""
    return 4 * size <= host_free // 2 and size <= device_free // 2


def _pinned(drv: Any, size: int) -> tuple[int, Any]:
    """A pinned host buffer and a numpy view of it (freed by the caller with cuMemFreeHost)."""
    import ctypes

    import numpy as np

    ptr = int(check("cuMemHostAlloc", drv.cuMemHostAlloc(size, 0)))
    return ptr, np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(ptr))


def _host_paced(gpu: Any, work: Callable[[], None]) -> dict[str, Any]:
    """Samples of work as the host issues it (events around the call), as Timed.raw() keeps them."""
    samples, _ = sampled(lambda: gpu.once(work), warmup=2, max_samples=MAX_SAMPLES, max_ms=MAX_MS)
    return {"ms": samples, "method": "host"}


def _case(gpu: Any, dev: int, size: int, kind: str, src: Any, dst: Any) -> dict[str, tuple[dict[str, Any], bool]]:
    """Both directions for one host buffer pair: the timing (pinned queued behind the hold, one
    copy per call; pageable host-paced), and whether the data came back intact."""
    drv = gpu.drv
    sent = zlib.crc32(src)

    def h2d() -> None:
        check("cuMemcpyHtoDAsync", drv.cuMemcpyHtoDAsync(dev, src.ctypes.data, size, gpu.stream))

    def d2h() -> None:
        check("cuMemcpyDtoHAsync", drv.cuMemcpyDtoHAsync(dst.ctypes.data, dev, size, gpu.stream))

    def timed(work: Callable[[], None]) -> dict[str, Any]:
        return gpu.time(work, calls=1).raw() if kind == "pinned" else _host_paced(gpu, work)

    check("cuMemsetD8", drv.cuMemsetD8(dev, 0, size))
    dst[:] = 0
    up = timed(h2d)
    d2h()
    gpu.sync()
    up_ok = zlib.crc32(dst) == sent
    dst[:] = 0
    down = timed(d2h)
    gpu.sync()
    return {"h2d": (up, up_ok), "d2h": (down, zlib.crc32(dst) == sent)}


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    host_free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    raw: dict[str, Any] = {"timed": {}, "intact": {}, "skipped": []}
    rng = np.random.default_rng(15)
    with opened(device) as gpu:
        drv = gpu.drv
        device_free = int(check("cuMemGetInfo", drv.cuMemGetInfo())[0])
        for size in SIZES:
            if not fits(size, host_free, device_free):
                raw["skipped"].append(size)
                continue
            pinned: list[int] = []
            try:
                data = rng.integers(0, 256, size, dtype=np.uint8)
                buffers = {"pageable": (data, np.zeros(size, dtype=np.uint8))}
                views = []
                for _ in range(2):
                    ptr, view = _pinned(drv, size)
                    pinned.append(ptr)
                    views.append(view)
                views[0][:] = data
                buffers["pinned"] = (views[0], views[1])
                with gpu.buffer(size) as dev:
                    for kind in KINDS:
                        for direction, (timed, ok) in _case(gpu, dev, size, kind, *buffers[kind]).items():
                            key = f"{direction}_{kind}_{size_name(size)}"
                            raw["timed"][key], raw["intact"][key] = timed, ok
            finally:
                for ptr in pinned:
                    check("cuMemFreeHost", drv.cuMemFreeHost(ptr))
    return summarise(raw, repeats=min((len(v["ms"]) for v in raw["timed"].values()), default=0))


def _describe(size: int, direction: str, kind: str) -> str:
    """What a copy rate is: GPU time for pinned memory, a host cost for pageable."""
    call = "cuMemcpyHtoDAsync" if direction == "h2d" else "cuMemcpyDtoHAsync"
    copied = f"{size_text(size)} copied {WAYS[direction]}"
    if kind == "pinned":
        return (
            f"GPU time: {copied}, host side pinned memory from cuMemHostAlloc: bytes (10^9 per GB) over the "
            f"CUDA-event time per {call}, copies queued back to back behind a wait kernel and repeated to fill "
            "each sample (median); no host time in it"
        )
    return (
        f"host cost: {copied}, host side a pageable numpy array, which the driver stages through a pinned buffer "
        f"of its own with the CPU (host-paced): bytes (10^9 per GB) over the CUDA-event time around one {call} "
        "as the host issues it (median); the host CPU is in the provenance"
    )


def summarise(raw: dict[str, Any], repeats: int) -> Outcome:
    """Gates and results from the raw numbers run() collected (pure: the CPU test feeds it fixtures)."""
    outcome = Outcome(repeats=repeats)
    sizes = [s for s in SIZES if s not in raw["skipped"]]
    bad = [k for k, ok in raw["intact"].items() if not ok]
    outcome.gate(
        "every copy's data came back intact (CRC-32 of what returned equals what was sent)",
        bool(raw["intact"]) and not bad,
        f"{len(raw['intact'])} cases" if not bad else f"corrupted: {', '.join(bad)}",
    )
    rates: dict[str, float] = {}
    for size in sizes:
        for direction in DIRECTIONS:
            for kind in KINDS:
                key = f"{direction}_{kind}_{size_name(size)}"
                timed = raw["timed"][key]
                if kind == "pinned":
                    outcome.no_host_time(f"the pinned {direction} copies of {size_text(size)}", timed)
                gbps = [size / (ms / 1e3) / 1e9 for ms in timed["ms"]]
                rates[key] = statistics.median(gbps)
                outcome.add(median_result(key, gbps, "GB/s", _describe(size, direction, kind), 3, 3, METHOD[kind]))
    fastest = max(rates.values(), default=0.0)
    outcome.gate(
        f"no copy is faster than {FASTEST_LINK_GBPS:g} GB/s (the fastest host link an H200 has)",
        0 < fastest <= FASTEST_LINK_GBPS,
        f"fastest {fastest:.1f} GB/s",
    )
    if sizes:
        largest = sizes[-1]
        skipped = ", ".join(size_text(s) for s in raw["skipped"]) or "none"
        outcome.add(
            Result(
                "largest_size",
                largest / (1 << 20),
                "MiB",
                f"the largest size copied (sizes skipped because host or device memory was short: {skipped})",
            )
        )
        for direction in DIRECTIONS:
            pinned = rates[f"{direction}_pinned_{size_name(largest)}"]
            pageable = rates[f"{direction}_pageable_{size_name(largest)}"]
            outcome.add(
                Result(
                    f"{direction}_pinned_over_pageable",
                    round(pinned / pageable, 2) if pageable > 0 else 0.0,
                    "×",
                    f"pinned copy rate (GPU time) over pageable (host-paced), {WAYS[direction]}, at "
                    f"{size_text(largest)} (medians)",
                )
            )
    return outcome
