"""Peer access between GPUs, and unified virtual addressing on each: what the driver and NVML say.

For each ordered pair of visible GPUs: cuDeviceCanAccessPeer and cuDeviceGetP2PAttribute
(performance rank, access, native atomics, CUDA array access); for each pair, the link joining
the two cards as NVML reports it (verifier/peers.py: NVLinks direct or through NVSwitch, the
PCIe path's common ancestor; unknown where NVML cannot say). For each GPU, the unified
addressing attribute. On the first GPU, unified addressing at work: the driver tells device
from host memory by the address alone (cuPointerGetAttribute), pinned host memory has the same
address on the device, and cuMemcpy, which infers the direction from the addresses, moves bytes
host to device and back intact. These are answers, not timings: one run says it all. With one
GPU there is no pair (the results say it needs two); unified addressing is still measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check
from verifier.experiment import Outcome

ID = "peer-access"
PURPOSE = "peer access and P2P attributes between each pair of GPUs, the link joining them, unified addressing"
USES = ("peers.py",)
HOST_WIDE = True
"""Measures the host's GPUs together: under `make verify DEVICES=all` each run sees one card and
records that it needs two GPUs; run it without DEVICES to measure the pairs."""

P2P = {
    "performance_rank": "CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK",
    "access_supported": "CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED",
    "native_atomics": "CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED",
    "cuda_array_access": "CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED",
}
"""Result suffix -> cuDeviceGetP2PAttribute attribute."""
DESCRIBE = {
    "can_access_peer": "cuDeviceCanAccessPeer: GPU {a} can map and access GPU {b}'s memory",
    "performance_rank": "cuDeviceGetP2PAttribute PERFORMANCE_RANK, GPU {a} to GPU {b}: the driver's relative rank of "
    "the link (0 is the best; compare ranks within one host only)",
    "access_supported": "cuDeviceGetP2PAttribute ACCESS_SUPPORTED, GPU {a} to GPU {b}: peer access is possible",
    "native_atomics": "cuDeviceGetP2PAttribute NATIVE_ATOMIC_SUPPORTED, GPU {a} to GPU {b}: atomics on the peer's "
    "memory run over the link natively",
    "cuda_array_access": "cuDeviceGetP2PAttribute CUDA_ARRAY_ACCESS_SUPPORTED, GPU {a} to GPU {b}: the peer's CUDA "
    "arrays (textures) can be read over the link",
}
PROBE = 1 << 16
"""Bytes of the unified-addressing probe's buffers."""


def _uva_probe(device: Device) -> dict[str, Any]:
    """Unified addressing at work on this device, in its context (made current by the runner)."""
    import ctypes

    import numpy as np

    drv = device.driver
    kind = drv.CUpointer_attribute
    out: dict[str, Any] = {}
    dev = check("cuMemAlloc", drv.cuMemAlloc(PROBE))
    hosts = [int(check("cuMemHostAlloc", drv.cuMemHostAlloc(PROBE, 0))) for _ in range(2)]
    try:
        memory_type = [
            int(check("cuPointerGetAttribute", drv.cuPointerGetAttribute(kind.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p)))
            for p in (int(dev), hosts[0])
        ]
        out["device_is_device"] = memory_type[0] == int(drv.CUmemorytype.CU_MEMORYTYPE_DEVICE)
        out["host_is_host"] = memory_type[1] == int(drv.CUmemorytype.CU_MEMORYTYPE_HOST)
        ordinal = check(
            "cuPointerGetAttribute", drv.cuPointerGetAttribute(kind.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dev)
        )
        out["ordinal"] = int(ordinal)
        seen = check(
            "cuPointerGetAttribute", drv.cuPointerGetAttribute(kind.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, hosts[0])
        )
        out["same_address"] = int(seen) == hosts[0]
        sent, back = (np.ctypeslib.as_array((ctypes.c_uint8 * PROBE).from_address(p)) for p in hosts)
        sent[:] = np.random.default_rng(19).integers(0, 256, PROBE, dtype=np.uint8)
        back[:] = 0
        check("cuMemcpy", drv.cuMemcpy(dev, hosts[0], PROBE))
        check("cuMemcpy", drv.cuMemcpy(hosts[1], dev, PROBE))
        out["cumemcpy_intact"] = bool(np.array_equal(back, sent))
    finally:
        for ptr in hosts:
            check("cuMemFreeHost", drv.cuMemFreeHost(ptr))
        check("cuMemFree", drv.cuMemFree(dev))
    return out


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    from verifier.peers import ordered_pairs, read_links, visible

    drv = device.driver
    count = int(check("cuDeviceGetCount", drv.cuDeviceGetCount()))
    devs = [check("cuDeviceGet", drv.cuDeviceGet(i)) for i in range(count)]
    attr = drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING
    raw: dict[str, Any] = {"count": count, "visible": visible(), "pairs": {}, "buses": []}
    raw["unified"] = [bool(check("cuDeviceGetAttribute", drv.cuDeviceGetAttribute(attr, d))) for d in devs]
    for d in devs:
        bus = check("cuDeviceGetPCIBusId", drv.cuDeviceGetPCIBusId(64, d))
        raw["buses"].append(bus.split(b"\0", 1)[0].decode("ascii", "replace") if isinstance(bus, bytes) else str(bus))
    for a, b in ordered_pairs(count):
        pair = {"can_access_peer": int(check("cuDeviceCanAccessPeer", drv.cuDeviceCanAccessPeer(devs[a], devs[b])))}
        for key, name in P2P.items():
            which = getattr(drv.CUdevice_P2PAttribute, name)
            pair[key] = int(check("cuDeviceGetP2PAttribute", drv.cuDeviceGetP2PAttribute(which, devs[a], devs[b])))
        raw["pairs"][f"{a}-{b}"] = pair
    links, why = read_links(raw["buses"]) if count >= 2 else ({}, "")
    raw["links"] = {f"{a}-{b}": [j.direct, j.switched, j.ancestor] for (a, b), j in links.items()}
    raw["links_unknown"] = why
    raw["uva"] = _uva_probe(device) if raw["unified"] and raw["unified"][0] else {}
    return summarise(raw)


def summarise(raw: dict[str, Any]) -> Outcome:
    """Gates and results from what run() read (pure: the CPU test feeds it fixtures)."""
    from verifier.peers import Joined, link_text, needs_two, ordered_pairs, pair_key

    count: int = raw["count"]
    outcome = Outcome(repeats=1)
    outcome.add(
        Result("gpus_visible", count, "", f"GPUs visible to CUDA (CUDA_VISIBLE_DEVICES {raw['visible']})"),
        Result(
            "ordered_pairs",
            len(raw["pairs"]),
            "",
            "ordered pairs of GPUs asked about peer access (none with fewer than two GPUs: it needs two)",
        ),
    )
    missing = [f"{a}-{b}" for a, b in ordered_pairs(count) if f"{a}-{b}" not in raw["pairs"]]
    outcome.gate(
        "every ordered pair of visible GPUs was asked about peer access",
        not missing,
        needs_two(count, raw["visible"])
        or (f"missing: {', '.join(missing)}" if missing else f"{len(raw['pairs'])} ordered pairs"),
    )
    disagree = [k for k, p in raw["pairs"].items() if bool(p["can_access_peer"]) != bool(p["access_supported"])]
    outcome.gate(
        "cuDeviceCanAccessPeer agrees with the ACCESS_SUPPORTED attribute for every pair",
        not disagree,
        f"disagree: {', '.join(disagree)}" if disagree else needs_two(count, raw["visible"]),
    )
    capable = 0
    shown = ordered_pairs(max(count, 2))  # with one GPU, GPU 0 and GPU 1's names, without values
    for a, b in shown:
        pair = raw["pairs"].get(f"{a}-{b}")
        if pair is None and count >= 2:
            continue
        capable += bool(pair and pair["can_access_peer"])
        for key, describe in DESCRIBE.items():
            value = None if pair is None else pair[key] if key == "performance_rank" else bool(pair[key])
            outcome.add(Result(f"{pair_key(a, b)}_{key}", value, "", describe.format(a=a, b=b)))
    outcome.add(
        Result(
            "peer_capable_pairs",
            capable if count >= 2 else None,
            "",
            "ordered pairs where cuDeviceCanAccessPeer says yes (needs two GPUs)",
        )
    )
    where = "NVML: nvmlDeviceGetNvLinkState, RemoteDeviceType and RemotePciInfo per link"
    for a, b in ((a, b) for a, b in shown if a < b):
        joined = Joined(*raw["links"].get(f"{a}-{b}", (None, None, None)))
        text = link_text(joined, raw["links_unknown"]) if count >= 2 else None
        describe = f"how GPU {a} and GPU {b} are joined, as {where}, and nvmlDeviceGetTopologyCommonAncestor"
        outcome.add(Result(f"{pair_key(a, b)}_link", text, "", describe))
        describe = f"active NVLinks of GPU {a} that reach GPU {b}, directly or through NVSwitch (0: none; {where})"
        outcome.add(Result(f"{pair_key(a, b)}_nvlinks", joined.nvlinks, "", describe))
    for i, unified in enumerate(raw["unified"]):
        outcome.add(
            Result(f"gpu{i}_unified_addressing", unified, "", f"CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING of GPU {i}")
        )
    outcome.add(
        Result(
            "unified_addressing",
            bool(raw["unified"]) and all(raw["unified"]),
            "",
            "every visible GPU shares one virtual address space with the host (UNIFIED_ADDRESSING on each)",
        )
    )
    uva = raw["uva"]
    if uva:
        outcome.add(
            Result(
                "pointer_kind_from_address",
                bool(uva["device_is_device"] and uva["host_is_host"] and uva["ordinal"] == 0),
                "",
                "cuPointerGetAttribute tells cuMemAlloc memory (device, GPU 0) from cuMemHostAlloc memory (host) "
                "by the address alone",
            ),
            Result(
                "pinned_same_address_on_device",
                bool(uva["same_address"]),
                "",
                "cuMemHostAlloc memory has the same address on GPU 0 as on the host (DEVICE_POINTER attribute)",
            ),
            Result(
                "cumemcpy_infers_direction",
                bool(uva["cumemcpy_intact"]),
                "",
                "cuMemcpy, given only two addresses, copied host to device and back with every byte intact",
            ),
        )
    outcome.gate(
        "with unified addressing, cuMemcpy moved the probe's bytes host to device and back intact",
        not uva or bool(uva["cumemcpy_intact"]),
        "not probed: GPU 0 has no unified addressing" if not uva else f"{PROBE} bytes each way",
    )
    return outcome
