"""Copies between two GPUs: direct peer copies against copies staged through pinned host memory.

For GPU 0 and each other visible GPU (verifier/peers.py), in a fresh process per pair (its own
contexts, peer access enabled both ways where cuDeviceCanAccessPeer allows; without it the
driver stages a peer copy itself, and the results say which it was): both directions, at sizes
from 4 KiB to 256 MiB (a size is skipped when host or device memory is short). A peer sample is
CUDA events around one cuMemcpyPeerAsync on the source GPU's stream; a staged sample is the
source GPU's event time of cuMemcpyDtoHAsync into portable pinned memory plus the destination
GPU's event time of cuMemcpyHtoDAsync from it (one after the other, as a program without peer
access would). Warm-ups first, then samples until their spread is small (gpu.py's rule, capped
per case as host-transfer is); every sample kept. After each case the destination is read back
and compared with the source. With fewer than two GPUs nothing is copied: the results say it
needs two.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check
from verifier.experiment import Outcome, failure
from verifier.peer_pair import KINDS, SIZES, size_name, size_text

ID = "peer-copy"
PURPOSE = "GPU-to-GPU copy bandwidth and latency, both directions, peer against host-staged, 4 KiB to 256 MiB"
USES = ("gpu.py", "timing.py", "peers.py", "peer_pair.py")
HOST_WIDE = True
"""Measures the host's GPUs together: under `make verify DEVICES=all` each run sees one card and
records that it needs two GPUs; run it without DEVICES to measure the pairs."""

FASTEST_PEER_GBPS = 1000.0
"""NVLink 5 moves 900 GB/s each way (1.8 TB/s both ways together): a faster copy was not timed right."""
FASTEST_HOST_GBPS = 900.0
"""NVLink-C2C (GH200), the fastest host link an H200 has: a staged copy crosses it twice."""


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    from verifier.peers import copy_pairs, visible
    from verifier.spawn import spawn

    count = int(check("cuDeviceGetCount", device.driver.cuDeviceGetCount()))
    raw: dict[str, Any] = {"count": count, "visible": visible(), "pairs": {}}
    for a, b in copy_pairs(count):
        raw["pairs"][f"{a}-{b}"] = spawn("peer_pair", "copies", {"a": a, "b": b}, {}, timeout=600)
    return summarise(raw)


def _way(src: int, dst: int, sizes: list[int], way: dict[str, Any] | None, can: bool | None) -> list[Result]:
    """One direction's results: rate per size and kind, latency, peer over staged. way None: the
    names a two-GPU host records, each without a value (this host cannot measure them); can None:
    whether peer access was enabled is not known."""
    from verifier.peers import way_key

    prefix, out = way_key(src, dst), []
    how = {
        "peer": f"cuMemcpyPeerAsync on GPU {src}'s stream, "
        + (
            "peer access enabled where the driver allows it (needs two GPUs)"
            if can is None
            else "peer access enabled"
            if can
            else "without peer access (the driver stages it)"
        ),
        "staged": f"cuMemcpyDtoHAsync on GPU {src} into pinned memory, then cuMemcpyHtoDAsync on GPU {dst}",
    }
    rates: dict[str, float] = {}
    for size in sizes:
        for kind in KINDS:
            gbps = [size / (m / 1e3) / 1e9 for m in way["ms"][f"{kind}_{size_name(size)}"]] if way else []
            rates[f"{kind}_{size}"] = statistics.median(gbps) if gbps else 0.0
            what = f"{size_text(size)} from GPU {src} to GPU {dst}, {how[kind]}: bytes (10^9 per GB) over"
            what += " the CUDA-event time"
            value = round(rates[f"{kind}_{size}"], 3) if way else None
            out.append(
                Result(
                    f"{prefix}_{kind}_{size_name(size)}", value, "GB/s", f"{what} (median)", [round(x, 3) for x in gbps]
                )
            )
    for kind in KINDS:
        us = [m * 1000 for m in way["ms"][f"{kind}_{size_name(sizes[0])}"]] if way else []
        what = f"time of one {size_text(sizes[0])} copy from GPU {src} to GPU {dst}, {how[kind]}"
        value = round(statistics.median(us), 3) if us else None
        out.append(
            Result(
                f"{prefix}_{kind}_latency",
                value,
                "µs",
                f"{what} (median of CUDA-event times)",
                [round(x, 3) for x in us],
            )
        )
    staged = rates[f"staged_{sizes[-1]}"]
    ratio = round(rates[f"peer_{sizes[-1]}"] / staged, 2) if way and staged > 0 else None
    what = f"peer over host-staged copy rate from GPU {src} to GPU {dst} at {size_text(sizes[-1])} (medians)"
    out.append(Result(f"{prefix}_peer_over_staged", ratio, "×", what))
    return out


def summarise(raw: dict[str, Any]) -> Outcome:
    """Gates and results from the pairs' raw numbers (pure: the CPU test feeds it fixtures). With
    fewer than two GPUs, GPU 0 and GPU 1's results are named without values, so that terms can
    cite them and pages say 'not measured' until a host with two GPUs runs it."""
    from verifier.peers import copy_pairs, needs_two, pair_key

    count: int = raw["count"]
    found = {k: p for k, p in raw["pairs"].items() if p.get("ok") and p["sizes"]}
    counts = [len(ms) for p in found.values() for w in p["ways"] for ms in w["ms"].values()]
    outcome = Outcome(repeats=min(counts, default=0))
    outcome.add(
        Result("gpus_visible", count, "", f"GPUs visible to CUDA (CUDA_VISIBLE_DEVICES {raw['visible']})"),
        Result(
            "pairs_measured",
            len(found),
            "",
            "pairs timed: GPU 0 with each other visible GPU (none with fewer than two GPUs: it needs two)",
        ),
    )
    wrong = [
        f"{k}: {failure(p) if not p.get('ok') else 'no size fitted in memory'}"
        for k, p in raw["pairs"].items()
        if k not in found
    ]
    wrong += [f"{a}-{b}: not run" for a, b in copy_pairs(count) if f"{a}-{b}" not in raw["pairs"]]
    outcome.gate(
        "every pair of GPU 0 with another visible GPU was timed",
        not wrong,
        needs_two(count, raw["visible"]) or "; ".join(wrong) or f"{len(found)} pairs, both directions",
    )
    bad: list[str] = []
    for key, pair in sorted(found.items()):
        a, b = (int(x) for x in key.split("-"))
        sizes: list[int] = pair["sizes"]
        for (src, dst), way, can in zip(((a, b), (b, a)), pair["ways"], pair["can_access_peer"], strict=True):
            bad += [f"gpu{src}_to_gpu{dst}_{k}" for k, ok in way["intact"].items() if not ok]
            outcome.add(*_way(src, dst, sizes, way, can))
        enabled = f"enabled both ways between GPU {a} and GPU {b} (cuDeviceCanAccessPeer, cuCtxEnablePeerAccess)"
        outcome.add(
            Result(f"{pair_key(a, b)}_peer_access", all(pair["can_access_peer"]), "", f"peer access was {enabled}")
        )
        outcome.add(
            Result(
                f"{pair_key(a, b)}_largest_size",
                sizes[-1] / (1 << 20),
                "MiB",
                "the largest size copied (larger ones skipped because host or device memory was short)",
            )
        )
    if count < 2:
        for src, dst in ((0, 1), (1, 0)):
            outcome.add(*_way(src, dst, list(SIZES), None, None))
        outcome.add(Result("gpu0_gpu1_peer_access", None, "", "peer access was enabled both ways (needs two GPUs)"))
    fastest = {
        k: max(
            (
                r.value
                for r in outcome.results
                if r.unit == "GB/s" and f"_{k}_" in r.name and isinstance(r.value, float)
            ),
            default=0.0,
        )
        for k in KINDS
    }
    outcome.gate(
        "every copy's bytes arrived intact (the destination read back equals the source)",
        not bad,
        f"corrupted: {', '.join(bad)}" if bad else needs_two(count, raw["visible"]) or "every case checked",
    )
    outcome.gate(
        f"no peer copy is faster than {FASTEST_PEER_GBPS:g} GB/s and no staged one than {FASTEST_HOST_GBPS:g} GB/s",
        fastest["peer"] <= FASTEST_PEER_GBPS and fastest["staged"] <= FASTEST_HOST_GBPS,
        needs_two(count, raw["visible"])
        or f"fastest peer {fastest['peer']:.1f} GB/s, staged {fastest['staged']:.1f} GB/s",
    )
    return outcome
