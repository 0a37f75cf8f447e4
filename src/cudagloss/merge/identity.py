"""A node name names one card (model.cards), held where runs come in: `make verify` writes no
run under a name that is committed for another card, nor a card committed under another name;
`cudagloss collect` refuses folders that would break it, or that bring one host's cards in two
folders (provenance host_id, where recorded).

A committed file's say is its file name's node (<node>.json, <node>.failed.json and earlier
runs <node>~<stamp>.json) and its provenance gpu_uuid. A run that measured several cards
together (a host-wide experiment such as peer-access, gpus_visible > 1, under the host's own
name in `make verify DEVICES=all`) names the host, not a card: it is held to neither rule.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudagloss.errors import Diagnostic, UsageError, display_path
from cudagloss.merge.runs import file_node
from cudagloss.model.cards import UNKNOWN, Seen, card_of, conflicts, host_of
from cudagloss.model.measurement import Measurement, MeasurementError, read_measurement_text

SEVERAL = "gpus_visible"
"""The result a host-wide experiment records: how many cards it measured together."""


def _several(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 1


def measured_several(m: Measurement) -> bool:
    """Whether the run measured several cards together (it then names a host, not a card)."""
    result = m.result(SEVERAL)
    return result is not None and _several(result.value)


def _raw_several(data: Mapping[str, Any]) -> bool:
    results = data.get("results")
    return isinstance(results, list) and any(
        isinstance(r, dict) and r.get("name") == SEVERAL and _several(r.get("value")) for r in results
    )


def committed_cards(folder: Path, root: Path | None = None) -> list[Seen]:
    """Each committed file's say on which card its node name stands for, in path order. A file
    that cannot be read, or names no card, says nothing (make check names what is wrong with it)."""
    seen = []
    for path in sorted(folder.glob("*/*.json")):
        named = file_node(path.name)
        if named is None or path.is_symlink() or path.parent.is_symlink():
            continue
        try:  # bounded, a regular file only: a committed FIFO is never waited on
            data = json.loads(read_measurement_text(path, path.as_posix()))
        except (MeasurementError, ValueError, RecursionError):
            continue
        provenance = data.get("provenance") if isinstance(data, dict) else None
        if not isinstance(provenance, dict) or _raw_several(data):
            continue
        if (card := card_of(provenance)) != UNKNOWN:
            seen.append(Seen(named[0], card, display_path(path, root)))
    return seen


def refuse_another_card(new: Measurement, folder: Path) -> None:
    """`make verify`: a UsageError (one line; the run stops, nothing written) when the node's
    name is committed in folder for another card, or this card under another name."""
    card = card_of(new.provenance)
    if card == UNKNOWN or measured_several(new):
        return
    committed = committed_cards(folder)
    named = next((s for s in committed if s.node == new.node and s.card != card), None)
    if named is not None:
        raise UsageError(
            f"node '{new.node}' is card {named.card} ({named.shown}); this is card {card}: "
            "name this card's node apart with VERIFY_NODE=<new name>"
        )
    other = next((s for s in committed if s.card == card and s.node != new.node), None)
    if other is not None:
        raise UsageError(
            f"this card, {card}, is node '{other.node}' ({other.shown}), not '{new.node}': "
            f"a card keeps its name; run with VERIFY_NODE={other.node}"
        )


@dataclass(frozen=True)
class Arriving:
    """One incoming run, as collect checks it: the node it will be merged as, the name its
    folder gave it (before --rename), the file, its folder and its provenance."""

    node: str
    named: str
    shown: str
    folder: str
    provenance: Mapping[str, Any]
    several: bool = False


def card_problems(committed: list[Seen], arriving: Iterable[Arriving]) -> list[Diagnostic]:
    """collect: every breach of 'one name, one card; one card, one name' that an incoming run
    makes with the committed files or the other incoming runs (cards.conflicts), at the incoming
    file, with a hint that fits: a committed card under a new name is a re-run (--rename), a
    committed name from another card needs a name of its own."""
    runs = {a.shown: a for a in arriving if not a.several and card_of(a.provenance) != UNKNOWN}
    owner: dict[str, str] = {}
    for s in committed:
        owner.setdefault(s.card, s.node)
    found = []
    incoming = [Seen(a.node, card_of(a.provenance), a.shown) for a in runs.values()]
    for conflict in conflicts([*committed, *incoming]):
        a = runs.get(conflict.shown)
        if a is None:  # the committed files disagree among themselves: make check's to report
            continue
        card = card_of(a.provenance)
        if conflict.message.startswith("node "):  # this name is another card's
            hint = f"name this card's node apart: --rename {a.named}=<new name> here, or VERIFY_NODE=<new name> on it"
        elif card in owner and owner[card] != a.node:  # a committed card under a new name
            hint = (
                f"if these are re-runs of node '{owner[card]}', collect them as its: --rename {a.named}={owner[card]}"
            )
        else:  # two new names for one card
            hint = "one card is one node: collect its runs under one name (--rename NEW=NAME)"
        found.append(Diagnostic(conflict.shown, 1, 1, conflict.message, hint))
    return found


def host_problems(arriving: Iterable[Arriving]) -> list[Diagnostic]:
    """collect: one host's runs (one host_id) in two folders, reported once per later folder."""
    first: dict[str, Arriving] = {}
    said: set[tuple[str, str]] = set()
    found = []
    for a in arriving:
        host = host_of(a.provenance)
        if not host:
            continue
        seen = first.setdefault(host, a)
        if seen.folder == a.folder or (host, a.folder) in said:
            continue
        said.add((host, a.folder))
        found.append(
            Diagnostic(
                a.shown,
                1,
                1,
                f"was measured on the same host as {seen.shown} (host_id {host}), which came in another folder: "
                "one host's cards arrive in one folder",
                "measure a host's cards one after another in one run (make verify DEVICES=all), so that they do "
                "not time each other; two hosts with one host_id share a machine id (a cloned image): give each "
                "its own (systemd-machine-id-setup)",
            )
        )
    return found
