"""The GPU side of peer-copy (verifier/experiments/peer_copy.py says the method): one pair's
copies, both directions, every size, peer and host-staged, run in a fresh process per pair
(verifier.spawn) so that its contexts and peer mappings end with it.

cuda-python and numpy are imported by the first use, never at import: the CPU tests import
the sizes and names from here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from verifier.cuda import CudaError, Device, check

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

SIZES = (4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20, 256 << 20)
KINDS = ("peer", "staged")
MAX_SAMPLES, MAX_MS, WARMUP = 40, 400.0, 2
"""Per case, beside gpu.py's spread rule: 24 cases a pair must fit a step's time."""


def size_name(size: int) -> str:
    return f"{size >> 20}mib" if size >= 1 << 20 else f"{size >> 10}kib"


def size_text(size: int) -> str:
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def fitting(host_free: int, device_free: int) -> list[int]:
    """The sizes with room: one buffer on each GPU, the host's source, read-back and pinned
    staging buffers, each side with a margin."""
    return [s for s in SIZES if s <= device_free // 2 and 3 * s <= host_free // 2]


def _sampled(sample: Callable[[], float]) -> list[float]:
    """Warm-ups (not kept), then samples until gpu.py's rule or this module's caps stop them."""
    from verifier.timing import sampled

    return sampled(sample, WARMUP, max_samples=MAX_SAMPLES, max_ms=MAX_MS)[0]


class _Pair:
    """Two GPUs with their primary contexts, a stream and events each (gpu.Gpu), peer access
    enabled both ways where possible, and a pinned staging buffer both contexts can use."""

    def __init__(self, a: int, b: int) -> None:
        from verifier.gpu import Gpu

        self.devices = [Device(a), Device(b)]
        self.drv = self.devices[0].driver
        drv = self.drv
        self.can = [
            bool(check("cuDeviceCanAccessPeer", drv.cuDeviceCanAccessPeer(x.dev, y.dev))) for x, y in self._ways()
        ]
        for (x, y), can in zip(self._ways(), self.can, strict=True):
            if can:
                self.use(x)
                try:
                    check("cuCtxEnablePeerAccess", drv.cuCtxEnablePeerAccess(y.ctx, 0))
                except CudaError as exc:
                    if exc.name != "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED":
                        raise
        self.gpus = []
        for device in self.devices:
            self.use(device)
            self.gpus.append(Gpu(device))

    def _ways(self) -> list[tuple[Device, Device]]:
        return [(self.devices[0], self.devices[1]), (self.devices[1], self.devices[0])]

    def use(self, device: Device) -> None:
        check("cuCtxSetCurrent", self.drv.cuCtxSetCurrent(device.ctx))

    def free_memory(self) -> int:
        free = []
        for device in self.devices:
            self.use(device)
            free.append(int(check("cuMemGetInfo", self.drv.cuMemGetInfo())[0]))
        return min(free)


def _timer(pair: _Pair, src: int, kind: str, size: int, bufs: list[int], staging: int) -> Callable[[], float]:
    """One sample of copying size bytes from the pair's GPU src (0 or 1) to the other, in ms."""
    drv, dst = pair.drv, 1 - src
    sd, dd, sg, dg = pair.devices[src], pair.devices[dst], pair.gpus[src], pair.gpus[dst]

    def peer() -> None:
        check("cuMemcpyPeerAsync", drv.cuMemcpyPeerAsync(bufs[dst], dd.ctx, bufs[src], sd.ctx, size, sg.stream))

    def d2h() -> None:
        check("cuMemcpyDtoHAsync", drv.cuMemcpyDtoHAsync(staging, bufs[src], size, sg.stream))

    def h2d() -> None:
        check("cuMemcpyHtoDAsync", drv.cuMemcpyHtoDAsync(bufs[dst], staging, size, dg.stream))

    def once() -> float:  # each copy queued behind its GPU's hold: no host time in it
        pair.use(sd)
        if kind == "peer":
            return sg.queued(peer)[0]
        first = sg.queued(d2h)[0]  # its end event synchronised: the staging buffer is full
        pair.use(dd)
        return first + dg.queued(h2d)[0]

    return once


def _direction(pair: _Pair, src: int, bufs: list[int], staging: int, data: Any, sizes: list[int]) -> dict[str, Any]:
    """Every size, both kinds, copying from the pair's GPU src (0 or 1) to the other."""
    import numpy as np

    drv, dst = pair.drv, 1 - src
    pair.use(pair.devices[src])
    check("cuMemcpyHtoD", drv.cuMemcpyHtoD(bufs[src], data.ctypes.data, data.nbytes))
    out: dict[str, Any] = {"ms": {}, "intact": {}}
    back = np.zeros(data.nbytes, dtype=np.uint8)
    for size in sizes:
        for kind in KINDS:
            pair.use(pair.devices[dst])
            check("cuMemsetD8", drv.cuMemsetD8(bufs[dst], 0, size))
            key = f"{kind}_{size_name(size)}"
            out["ms"][key] = _sampled(_timer(pair, src, kind, size, bufs, staging))
            for gpu, device in zip(pair.gpus, pair.devices, strict=True):
                pair.use(device)
                gpu.sync()
            pair.use(pair.devices[dst])
            back[:size] = 0
            check("cuMemcpyDtoH", drv.cuMemcpyDtoH(back.ctypes.data, bufs[dst], size))
            out["intact"][key] = bool(np.array_equal(back[:size], data[:size]))
    return out


def step_copies(args: dict[str, Any]) -> dict[str, Any]:
    """One pair's copies, in a fresh process (verifier.spawn): every sample, and whether each
    case's bytes arrived intact."""
    import numpy as np

    pair = _Pair(int(args["a"]), int(args["b"]))
    drv = pair.drv
    host_free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    sizes = fitting(host_free, pair.free_memory())
    result: dict[str, Any] = {"can_access_peer": pair.can, "sizes": sizes, "ways": []}
    if not sizes:
        return result
    largest = sizes[-1]
    bufs: list[int] = []
    staging = 0
    try:
        for device in pair.devices:
            pair.use(device)
            bufs.append(int(check("cuMemAlloc", drv.cuMemAlloc(largest))))
        staging = int(check("cuMemHostAlloc", drv.cuMemHostAlloc(largest, drv.CU_MEMHOSTALLOC_PORTABLE)))
        data = np.random.default_rng(19).integers(0, 256, largest, dtype=np.uint8)
        result["ways"] = [_direction(pair, src, bufs, staging, data, sizes) for src in (0, 1)]
    finally:
        if staging:
            check("cuMemFreeHost", drv.cuMemFreeHost(staging))
        for device, buf in zip(pair.devices, bufs, strict=False):
            pair.use(device)
            check("cuMemFree", drv.cuMemFree(buf))
    return result


def main(argv: list[str]) -> int:
    """`python3 -m verifier.peer_pair A B`: one pair's copies, printed, nothing recorded. A smoke
    test on one GPU: `0 0` runs every step of a pair, copying within the one card (a card is not
    its own peer, so there is no peer access to enable). Exit 1 when a byte arrived wrong."""
    import statistics

    if len(argv) != 2 or not all(x.isdigit() for x in argv):
        print("usage: python3 -m verifier.peer_pair A B (two GPU indices; 0 0 on one GPU)", file=sys.stderr)
        return 2
    try:
        result = step_copies({"a": int(argv[0]), "b": int(argv[1])})
    except (CudaError, OSError, RuntimeError) as exc:  # no driver, no such GPU: one line, as make verify says it
        print(f"verifier.peer_pair: {exc}", file=sys.stderr)
        return 3
    for src, way in enumerate(result["ways"]):
        for key, ms in way["ms"].items():
            rate = int(key.split("_")[1][:-3]) << (20 if key.endswith("mib") else 10)
            median = statistics.median(ms)
            print(f"{'ab'[src]}->{'ba'[src]} {key:<14} {len(ms):>3} samples  {median:9.4f} ms  "
                  f"{rate / median / 1e6:8.2f} GB/s  intact {way['intact'][key]}")  # fmt: skip
    print(f"peer access {result['can_access_peer']}, sizes {result['sizes']}")
    return 0 if result["ways"] and all(all(w["intact"].values()) for w in result["ways"]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
