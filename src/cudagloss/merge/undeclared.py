"""Issue 40: a GPU time that moved while the experiment's recipe did not.

The recipe key (verifier/recipe.py) changes when what reaches the GPU or how it is timed
changes, and an experiment's METHOD or a procedure module's VERSION is how a change in
measuring is declared. So on one card, under the same recipe, a GPU-timed result that comes
out FASTER or SLOWER means the card or its environment changed, or the code changed how it
measures without declaring it. The re-run report (make verify, cudagloss collect) says which,
per experiment: where the environment drifted (driver, CUDA, ...) it is named as the likely
cause, otherwise the method is suspected. A report, never a failure: the verdict is already
noise-tested, but the cause needs a person.

Host costs (method 'host') are left out: timed on the host, they move 15-35% between two runs
on one card. So are values without a method (counted, read, derived) and information.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from cudagloss.model.measurement import Measurement

GPU_TIMED = frozenset({"gpu-queued", "graph-replay", "in-kernel"})
"""The methods (measurement_rules.METHODS) that time on the GPU: whatever the host does is not in them."""
MOVED = ("FASTER", "SLOWER")
METHOD_MARK = "undeclared method change?"
ENVIRONMENT_MARK = "environment changed?"
"""How each kind of line starts (fleet/collect_nodes.py counts them in collect's text report)."""
SHOWN = 5
"""Results a text line names; the JSON report names them all."""
ADVICE = (
    "if the code changed how it measures, bump METHOD or the procedure module's VERSION; "
    "if not, the card or its environment changed (see drift)"
)


class Row(Protocol):
    """What is read of a re-run's row (merge.rerun.Row, which imports this module)."""

    @property
    def name(self) -> str: ...
    @property
    def verdict(self) -> str: ...
    @property
    def test(self) -> dict[str, Any] | None: ...


@dataclass(frozen=True)
class Moved:
    """One GPU-timed result that moved: its verdict and relative change of the median."""

    name: str
    verdict: str
    change: float | None
    method: str


@dataclass(frozen=True)
class Undeclared:
    """GPU-timed results that moved under an unchanged recipe; environment names what drifted."""

    recipe: str
    moved: list[Moved] = field(default_factory=list)
    environment: list[str] = field(default_factory=list)

    @property
    def cause(self) -> Literal["method", "environment"]:
        return "environment" if self.environment else "method"

    def line(self) -> str:
        """One line that says what moved and what to do about it."""
        shown = [f"{m.name} {m.verdict}{'' if m.change is None else f' {m.change:+.1%}'}" for m in self.moved]
        if len(shown) > SHOWN:
            shown = [*shown[:SHOWN], f"and {len(shown) - SHOWN} more"]
        moved = f"{len(self.moved)} GPU-timed result{'s' if len(self.moved) != 1 else ''} moved ({', '.join(shown)})"
        if self.cause == "environment":
            return (
                f"{ENVIRONMENT_MARK} recipe unchanged, yet {moved}, and the environment changed "
                f"({', '.join(self.environment)}): the likely cause, not the method (see drift)"
            )
        return f"{METHOD_MARK} recipe unchanged, yet {moved}: {ADVICE}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "cause": self.cause,
            "says": self.line(),
            "recipe": self.recipe,
            "moved": [vars(m) for m in self.moved],
            "environment": self.environment,
        }


def undeclared(old: Measurement, new: Measurement, rows: Iterable[Row], drifted: Iterable[str]) -> Undeclared | None:
    """The GPU-timed results that moved though both files carry the same recipe; None where
    none did or either file has no recipe key (older than format 4: nothing to say it is the
    same). drifted: the environment keys that changed between the two files; the new file's
    own drift (a node's run against its local folder) counts too."""
    if not old.recipe or old.recipe != new.recipe:
        return None
    moved = []
    for row in rows:
        result = new.result(row.name)
        if row.verdict in MOVED and result is not None and result.method in GPU_TIMED:
            change = row.test.get("change") if row.test else None
            moved.append(Moved(row.name, row.verdict, change, result.method))
    if not moved:
        return None
    environment = list(dict.fromkeys([*drifted, *(d.name for d in new.drift)]))
    return Undeclared(new.recipe, moved, environment)


def counts(reports: Iterable[Undeclared | None]) -> dict[str, int]:
    """How many experiments (each one's report, None where it had none) each cause was
    suspected in: the JSON reports' totals."""
    found = [u.cause for u in reports if u is not None]
    return {"method": found.count("method"), "environment": found.count("environment")}


def summary(reports: Iterable[Undeclared | None]) -> str | None:
    """The report's closing line on them, or None where no experiment had one."""
    n = counts(reports)
    if not any(n.values()):
        return None
    return (
        f"GPU-timed results moved under an unchanged recipe in {n['method'] + n['environment']} experiment(s): "
        f"{n['method']} an undeclared method change?, {n['environment']} with the environment changed"
    )
