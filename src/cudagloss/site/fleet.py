"""How a term page names the cards behind its numbers, so it reads the same with one card or fifty.

A node is one card (cudagloss.model.cards): everything here counts cards, and says runs where
a card ran an experiment more than once. A GPU model measured on a few cards keeps a column and
a line per card (their names are worth reading); one measured on more (NAMED_NODES), or whose
cards measured every value alike, becomes one column with its one number (every card's value
in the hover, the spread beside it where they differ) and one line with its dates, drivers and
gates. The byline names the cards the same way. Per-run detail stays on the measurement page.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

NAMED_NODES = 3
"""Up to this many nodes of one GPU model are named one by one; more are counted."""


@dataclass(frozen=True, slots=True)
class NodeView:
    """One node that measured an experiment."""

    node: str
    gpu: str
    date: str
    stale: bool
    failed_since: bool
    """Its latest run failed; what is shown comes from the last good one."""
    driver: str
    cuda: str
    """The driver's version and the CUDA version it supports ('' where not recorded)."""
    gates_passed: int
    gates: int
    """Of its good run's gates, how many passed and how many it has."""
    drift: tuple[tuple[str, str, str], ...]
    """(label, old, new) of each environment key its good run changed since the one before."""
    days: tuple[str, ...] = ()
    """The day of each of its good runs of the experiment (the earlier ones kept beside the
    latest, then the latest), oldest first."""

    @property
    def runs(self) -> int:
        """Its good runs of the experiment."""
        return len(self.days)

    @property
    def first_run(self) -> str:
        """The day of its earliest good run kept ('' where it has one run)."""
        return self.days[0] if len(self.days) > 1 else ""


@dataclass(frozen=True, slots=True)
class MeasuredBy:
    """The cards of one GPU model whose numbers a page shows, for the byline's one line."""

    gpu: str
    count: int
    """Distinct cards (a card that ran on several days counts once)."""
    nodes: tuple[str, ...]
    """Their names, where there are few enough to read in a line (NAMED_NODES); else empty."""
    first: str
    last: str
    """The days of the oldest and the newest run shown."""
    runs: int = 0
    """The good runs behind the numbers (a card's re-runs of an experiment count here)."""


@dataclass(frozen=True, slots=True)
class NodeGroup:
    """The nodes of one GPU model in a Measured section: named one by one, or counted together."""

    gpu: str
    nodes: tuple[NodeView, ...]
    together: bool
    """More than NAMED_NODES, or alike on every value: one column, one line."""
    first: str
    last: str
    drivers: tuple[str, ...]
    cudas: tuple[str, ...]
    all_passed: int
    """How many of the cards passed every gate."""

    @property
    def runs(self) -> int:
        """The good runs of its cards together."""
        return sum(n.runs for n in self.nodes)

    @property
    def names(self) -> tuple[str, ...]:
        """The nodes' names where there are few enough to read in a line."""
        return tuple(n.node for n in self.nodes) if len(self.nodes) <= NAMED_NODES else ()

    @property
    def column(self) -> str:
        """The table's header for the group (or for its one node)."""
        if self.together:
            return f"{self.gpu}, {len(self.nodes)} cards"
        node = self.nodes[0]
        return f"{node.gpu} (card {node.node}, {node.date})"


def _days(days: list[str]) -> tuple[str, str]:
    ordered = sorted(days)
    return ordered[0], ordered[-1]


def measured_by(runs: Iterable[tuple[str, str, str]]) -> tuple[MeasuredBy, ...]:
    """(node, gpu, day), one per good run, grouped by GPU model, the model most cards share
    first; a node (a card) counts once however many runs and days it has, and its runs are
    counted as runs."""
    by_gpu: dict[str, dict[str, list[str]]] = {}
    for node, gpu, day in sorted(runs):
        by_gpu.setdefault(gpu, {}).setdefault(node, []).append(day)
    groups = []
    for gpu, cards in sorted(by_gpu.items(), key=lambda g: (-len(g[1]), g[0])):
        names = tuple(cards) if len(cards) <= NAMED_NODES else ()
        days = [day for days in cards.values() for day in days]
        groups.append(MeasuredBy(gpu, len(cards), names, *_days(days), runs=len(days)))
    return tuple(groups)


def node_groups(nodes: tuple[NodeView, ...], alike: Collection[str] = ()) -> tuple[NodeGroup, ...]:
    """The Measured section's nodes, in their order, by GPU model: one group for the model
    where it has more than NAMED_NODES or is in alike (its nodes measured every value alike),
    else a group of one per node."""
    by_gpu: dict[str, list[NodeView]] = {}
    for n in nodes:
        by_gpu.setdefault(n.gpu, []).append(n)
    groups = []
    for gpu, members in by_gpu.items():
        together = len(members) > NAMED_NODES or (gpu in alike and len(members) > 1)
        for part in [members] if together else [[n] for n in members]:
            groups.append(
                NodeGroup(
                    gpu,
                    tuple(part),
                    together,
                    *_days([n.date for n in part]),
                    drivers=tuple(dict.fromkeys(n.driver for n in part if n.driver)),
                    cudas=tuple(dict.fromkeys(n.cuda for n in part if n.cuda)),
                    all_passed=sum(n.gates_passed == n.gates for n in part),
                )
            )
    return tuple(groups)
