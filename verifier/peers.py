"""Pairs of GPUs: which pairs the peer experiments measure, how results name them, and the link
joining two cards as far as NVML (nvidia-ml-py) says.

The peer experiments see the GPUs CUDA sees (CUDA_VISIBLE_DEVICES counts): with fewer than two
they measure no pair and say so in their results and gate details, which is not a failure. Under
`make verify DEVICES=all` each run sees one card, so run them without DEVICES on a host with
several. nvidia-ml-py is imported inside read_links() only, and anything it cannot say (the
package absent, NVML unloadable, a function this driver lacks) is recorded as unknown, never
guessed. Experiments that use this module name it in USES.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

NEEDED = 2
"""GPUs a peer experiment needs to measure anything about a pair."""

ANCESTOR = {
    0: "the same board",
    10: "one PCIe switch",
    20: "several PCIe switches",
    30: "one PCIe host bridge",
    40: "several host bridges of one NUMA node",
    50: "the link between CPU sockets",
}
"""NVML's topology levels (nvmlGpuTopologyLevel_t): the nearest point the two cards' PCIe paths share."""
NVLINK_GPU, NVLINK_SWITCH = 0, 2
"""nvmlDeviceGetNvLinkRemoteDeviceType: what is at the far end of a link (1 is an IBM NPU)."""


def ordered_pairs(count: int) -> list[tuple[int, int]]:
    """Every ordered pair of the visible GPUs: peer access is asked both ways."""
    return [(a, b) for a in range(count) for b in range(count) if a != b]


def copy_pairs(count: int) -> list[tuple[int, int]]:
    """The pairs whose copies are timed: GPU 0 with each other GPU (each both ways), so that a host
    of eight measures seven pairs, not twenty-eight, within the experiment's time."""
    return [(0, b) for b in range(1, count)]


def pair_key(a: int, b: int) -> str:
    """'gpu0_gpu1': the prefix of a pair's results, as result names allow."""
    return f"gpu{a}_gpu{b}"


def way_key(a: int, b: int) -> str:
    """'gpu0_to_gpu1': the prefix of a copy's results, from a to b."""
    return f"gpu{a}_to_gpu{b}"


def visible() -> str:
    """CUDA_VISIBLE_DEVICES as set ('unset': every GPU visible), as a measurement file may hold it:
    indices and UUIDs pass, any other character becomes '?' (an odd value must not cost the run)."""
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return "unset"
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in ",.:_-") else "?" for ch in value[:100]) or "''"


def needs_two(count: int, shown: str) -> str:
    """Why no pair was measured, or '' when there are enough GPUs; shown is CUDA_VISIBLE_DEVICES
    as the run recorded it (visible())."""
    if count >= NEEDED:
        return ""
    return f"needs two GPUs: {count} visible to CUDA (CUDA_VISIBLE_DEVICES {shown}); no pair to measure"


def bus_key(bus: str | bytes) -> str:
    """A PCI bus id in one spelling: CUDA writes '0000:19:00.0', NVML '00000000:19:00.0'."""
    text = bus.decode("ascii", "replace") if isinstance(bus, bytes) else bus
    text = text.split("\0", 1)[0].strip().lower()
    domain, sep, rest = text.partition(":")
    if not sep:
        return text
    try:
        return f"{int(domain, 16):x}:{rest}"
    except ValueError:
        return text


@dataclass(frozen=True)
class LinkEnd:
    """One active NVLink of a card: what is at its far end ('gpu', 'switch' or 'other') and the
    far end's PCI bus id (bus_key form; '' where NVML gave none)."""

    remote: str
    bus: str


@dataclass(frozen=True)
class Joined:
    """How two cards are joined: NVLinks between them (direct or through NVSwitch), and the
    PCIe path; None where NVML could not say."""

    direct: int | None
    switched: int | None
    ancestor: int | None

    @property
    def nvlinks(self) -> int | None:
        """Links from the first card that carry traffic to the second."""
        if self.direct is None:
            return None
        return self.direct or (self.switched or 0)


def join(
    ends_a: Sequence[LinkEnd] | None, ends_b: Sequence[LinkEnd] | None, bus_b: str, ancestor: int | None
) -> Joined:
    """The pair's link from each card's active NVLinks: links of a whose far end is b, else (when
    both cards have links into NVSwitches) a's links into the switches. None: NVML did not say."""
    if ends_a is None or ends_b is None:
        return Joined(None, None, ancestor)
    direct = sum(1 for e in ends_a if e.remote == "gpu" and e.bus == bus_key(bus_b))
    switched = sum(1 for e in ends_a if e.remote == "switch")
    both = switched and any(e.remote == "switch" for e in ends_b)
    return Joined(direct, switched if both else 0, ancestor)


def link_text(joined: Joined, unknown: str = "") -> str:
    """The link as a page shows it: 'NVLink, 18 links', 'NVLink through NVSwitch, 18 links',
    'PCIe, through one PCIe switch', or 'unknown (why)'."""
    if joined.direct:
        return f"NVLink, {joined.direct} link{'s' * (joined.direct != 1)}"
    if joined.switched:
        return f"NVLink through NVSwitch, {joined.switched} link{'s' * (joined.switched != 1)}"
    if joined.direct is not None and joined.ancestor in ANCESTOR:
        return f"PCIe, through {ANCESTOR[joined.ancestor]}"
    if joined.direct is not None:
        return "PCIe (no NVLink between them)"
    if joined.ancestor in ANCESTOR:
        return f"PCIe path through {ANCESTOR[joined.ancestor]}; NVLink {unknown or 'unknown'}"
    return f"unknown ({unknown or 'NVML said nothing'})"


def _ends(nvml: Any, handle: Any) -> list[LinkEnd] | None:
    """A card's active NVLinks, walked from link 0 until NVML refuses one; None when it cannot tell."""
    stop = tuple(getattr(nvml, n) for n in ("NVMLError_NotSupported", "NVMLError_InvalidArgument") if hasattr(nvml, n))
    kinds = {NVLINK_GPU: "gpu", NVLINK_SWITCH: "switch"}
    ends: list[LinkEnd] = []
    for link in range(int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18))):
        try:
            if not nvml.nvmlDeviceGetNvLinkState(handle, link):
                continue
            remote_type = getattr(nvml, "nvmlDeviceGetNvLinkRemoteDeviceType", None)
            remote = kinds.get(int(remote_type(handle, link)), "other") if remote_type else "gpu"
            bus = bus_key(getattr(nvml.nvmlDeviceGetNvLinkRemotePciInfo(handle, link), "busId", b""))
        except stop:
            break  # links are numbered from 0: the first refused one is past the card's last
        except Exception:  # NVML's other errors (no permission, unknown): the card's links are unknown
            return None
        ends.append(LinkEnd(remote, bus))
    return ends


def read_links(buses: Sequence[str]) -> tuple[dict[tuple[int, int], Joined], str]:
    """How each pair (a < b) of the cards with these PCI bus ids is joined, and why it is unknown
    ('' when NVML answered). Never raises: a reading is never worth a crash."""
    try:
        import pynvml
    except ImportError:
        return {}, "nvidia-ml-py is not installed"
    try:
        pynvml.nvmlInit()
        handles = [pynvml.nvmlDeviceGetHandleByPciBusId(bus.encode()) for bus in buses]
    except Exception as exc:  # NVML raises its own error types: no library, no such card
        return {}, f"NVML cannot open the cards ({type(exc).__name__})"
    ends = [_ends(pynvml, h) for h in handles]
    out: dict[tuple[int, int], Joined] = {}
    for a in range(len(buses)):
        for b in range(a + 1, len(buses)):
            try:
                ancestor: int | None = int(pynvml.nvmlDeviceGetTopologyCommonAncestor(handles[a], handles[b]))
            except Exception:  # absent in old bindings, or not supported: unknown
                ancestor = None
            out[a, b] = join(ends[a], ends[b], buses[b], ancestor)
    return out, "" if all(e is not None for e in ends) else "NVML did not list every card's NVLinks"
