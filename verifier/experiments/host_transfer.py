"""Host<->device copies: pageable (a numpy array) against pinned (cuMemHostAlloc) memory, both ways.

The GPU's copy engines read and write host memory by DMA, which needs page-locked memory: from
a pageable buffer the driver first copies through a pinned staging buffer of its own. Each
sample is CUDA events around one cuMemcpyHtoDAsync or cuMemcpyDtoHAsync on the stream, at
sizes from 64 KiB to 256 MiB (a size is skipped when host or device memory is short). After
each direction's samples, the data is copied back and compared with what was sent.
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
from verifier.experiment import Outcome

ID = "host-transfer"
PURPOSE = "host-to-device and device-to-host copy rates, pageable against pinned memory, 64 KiB to 256 MiB"
USES = ("gpu.py",)

SIZES = (64 << 10, 1 << 20, 16 << 20, 256 << 20)
KINDS = ("pageable", "pinned")
DIRECTIONS = ("h2d", "d2h")
MAX_SAMPLES, MAX_MS = 40, 400.0
"""Per case, beside gpu.py's spread rule: 16 cases must fit the experiment's budget."""
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


def _sampled(gpu: Any, work: Callable[[], None]) -> list[float]:
    from verifier.gpu import stop_reason

    for _ in range(2):
        work()
    gpu.sync()
    samples: list[float] = []
    while stop_reason(samples) is None and len(samples) < MAX_SAMPLES and sum(samples) < MAX_MS:
        samples.append(gpu.once(work))
    return samples


def _case(gpu: Any, dev: int, size: int, src: Any, dst: Any) -> dict[str, tuple[list[float], bool]]:
    """Both directions for one host buffer pair: samples, and whether the data came back intact."""
    drv = gpu.drv
    sent = zlib.crc32(src)

    def h2d() -> None:
        check("cuMemcpyHtoDAsync", drv.cuMemcpyHtoDAsync(dev, src.ctypes.data, size, gpu.stream))

    def d2h() -> None:
        check("cuMemcpyDtoHAsync", drv.cuMemcpyDtoHAsync(dst.ctypes.data, dev, size, gpu.stream))

    check("cuMemsetD8", drv.cuMemsetD8(dev, 0, size))
    dst[:] = 0
    up = _sampled(gpu, h2d)
    d2h()
    gpu.sync()
    up_ok = zlib.crc32(dst) == sent
    dst[:] = 0
    down = _sampled(gpu, d2h)
    gpu.sync()
    return {"h2d": (up, up_ok), "d2h": (down, zlib.crc32(dst) == sent)}


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    host_free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    raw: dict[str, Any] = {"ms": {}, "intact": {}, "skipped": []}
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
                        for direction, (ms, ok) in _case(gpu, dev, size, *buffers[kind]).items():
                            key = f"{direction}_{kind}_{size_name(size)}"
                            raw["ms"][key], raw["intact"][key] = ms, ok
            finally:
                for ptr in pinned:
                    check("cuMemFreeHost", drv.cuMemFreeHost(ptr))
    return summarise(raw, repeats=min((len(v) for v in raw["ms"].values()), default=0))


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
                gbps = [size / (ms / 1e3) / 1e9 for ms in raw["ms"][key]]
                rates[key] = statistics.median(gbps)
                way = "host to device" if direction == "h2d" else "device to host"
                memory = "a pageable numpy array" if kind == "pageable" else "pinned memory from cuMemHostAlloc"
                call = "cuMemcpyHtoDAsync" if direction == "h2d" else "cuMemcpyDtoHAsync"
                outcome.add(
                    Result(
                        key,
                        round(rates[key], 3),
                        "GB/s",
                        f"{size_text(size)} copied {way}, host side {memory}: bytes (10^9 per GB) over the CUDA-event "
                        f"time around one {call} (median)",
                        [round(x, 3) for x in gbps],
                    )
                )
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
                    f"pinned over pageable copy rate, {'host to device' if direction == 'h2d' else 'device to host'}"
                    f", at {size_text(largest)} (medians)",
                )
            )
    return outcome
