"""A card is what measured: a measurement's machine is its GPU's UUID (provenance `gpu_uuid`),
never the name someone gave the node. A node name names one card of one host, for good: every
file under that name, in every experiment, carries the same UUID, and no other name carries it.
Two runs on one card are two runs, never two nodes; a count of what measured counts cards.

The loader, `make verify` and `cudagloss collect` all hold names to this through `conflicts`.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from cudagloss.model.urls import RUN_STAMP

UNKNOWN = ""
"""A run whose provenance names no card (files from before gpu_uuid was recorded)."""


def card_of(provenance: Mapping[str, Any]) -> str:
    """The UUID of the card that ran it ('GPU-3f1ceb1e-…'), or UNKNOWN."""
    uuid = provenance.get("gpu_uuid")
    return uuid if isinstance(uuid, str) and uuid.strip() else UNKNOWN


def host_of(provenance: Mapping[str, Any]) -> str:
    """The opaque host identity (a salted hash of the machine id), or '' where not recorded."""
    host = provenance.get("host_id")
    return host if isinstance(host, str) else ""


def short_card(uuid: str) -> str:
    """A UUID as a reader can compare two of them: 'GPU-3f1ceb1e' (its first group)."""
    return uuid.split("-", 2)[0] + "-" + uuid.split("-", 2)[1] if uuid.count("-") >= 2 else uuid or "unknown card"


def short_cards(uuids: Iterable[str]) -> dict[str, str]:
    """Each UUID as short_card shows it, but long enough to tell it from every other one:
    two cards whose first groups are the same are shown with as many groups as tell them
    apart (the whole UUID at most), never as one card. Linear in the cards times their groups."""
    distinct = sorted({u for u in uuids if u})
    out = {u: short_card(u) for u in distinct}
    shared = Counter(out.values())
    pending = [u for u in distinct if shared[out[u]] > 1]
    groups = 3
    while pending:
        prefixes = {u: "-".join(u.split("-")[:groups]) for u in pending}
        counts = Counter(prefixes.values())
        for u in pending:
            out[u] = prefixes[u]
        pending = [u for u in pending if counts[prefixes[u]] > 1 and prefixes[u] != u]
        groups += 1
    return {"": short_card(""), **out}


def run_stamp(recorded_at: object) -> str:
    """A run's recorded_at as its earlier-run file names it (20261204T175826Z, UTC); '' when it has none."""
    if not isinstance(recorded_at, str):
        return ""
    try:
        when = dt.datetime.fromisoformat(recorded_at)
    except ValueError:
        return ""
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    stamp = when.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return stamp if RUN_STAMP.fullmatch(stamp) else ""


@dataclass(frozen=True, slots=True)
class Seen:
    """One file's say on which card a node name stands for."""

    node: str
    card: str
    shown: str
    """The file, as a diagnostic names it."""


@dataclass(frozen=True, slots=True)
class Conflict:
    """A name that stands for two cards, or a card under two names, with the files that say so."""

    shown: str
    message: str
    hint: str


def conflicts(seen: Iterable[Seen]) -> list[Conflict]:
    """Every breach of 'one name, one card; one card, one name', reported at the first file
    that breaks it (the others named in the message)."""
    by_node: dict[str, dict[str, list[str]]] = {}
    by_card: dict[str, dict[str, list[str]]] = {}
    for s in seen:
        if s.card == UNKNOWN:
            continue
        by_node.setdefault(s.node, {}).setdefault(s.card, []).append(s.shown)
        by_card.setdefault(s.card, {}).setdefault(s.node, []).append(s.shown)
    found = []
    for node, (first, first_file), card, file in _second_keys(by_node):
        found.append(
            Conflict(
                file,
                f"node '{node}' was measured on card {card} here, but on card {first} in {first_file}: "
                "a node name names one card",
                f"name the runs of card {card} apart (VERIFY_NODE=<name>), one name per card",
            )
        )
    for card, (first, first_file), node, file in _second_keys(by_card):
        found.append(
            Conflict(
                file,
                f"card {card} is named '{node}' here, but '{first}' in {first_file}: two names for one card",
                f"its runs are runs of one node: name them '{first}'",
            )
        )
    return found


def _second_keys(
    groups: dict[str, dict[str, list[str]]],
) -> Iterator[tuple[str, tuple[str, str], str, str]]:
    """(outer key, (its first inner key, that key's first file), another inner key, its first
    file) for each inner key after the first: a name's second card, or a card's second name."""
    for outer, inner in groups.items():
        (first, files), *others = inner.items()
        for key, more in others:
            yield outer, (first, files[0]), key, more[0]
