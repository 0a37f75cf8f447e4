"""The "Measure your GPU" page (templates/measure.md.j2): how a reader runs every experiment on
their own card and contributes it, and how long a run took on the cards already measured, said
only from the committed measurements (each run's own duration_s)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup

from cudagloss.model.measurements import MeasurementSet
from cudagloss.site import escape

MEASURE_URI = "measure-your-gpu.md"
"""Beside the home page and the GPU at a glance page."""


@dataclass(frozen=True, slots=True)
class CardTime:
    node: str
    gpu: str
    experiments: int
    minutes: str
    """The sum of the time each experiment's latest good run of the card took, in minutes."""
    days: str


@dataclass(frozen=True, slots=True)
class MeasurePage:
    experiments: int
    """Experiments in the measurement set."""
    cards: tuple[CardTime, ...]
    """Cards with a good run of every experiment, in node order."""
    least: str
    most: str
    repo_url: str | None
    commands: Markup
    """The commands that clone the glossary and measure, as a fenced code block."""
    capabilities_href: Markup | None = None
    """The compute capability term's page, where the glossary has one."""
    availability_href: Markup | None = None
    """The instruction availability term's page, where the glossary has one."""


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


def measure_page(
    measurements: MeasurementSet, repo_url: str | None, href: Callable[[str], Markup | None] = lambda _: None
) -> MeasurePage:
    """Per card, the latest good runs' durations summed, for the cards that ran every experiment;
    href gives a term's link from the page (None where the glossary has no such term)."""
    total = len(list(measurements))
    per_node: dict[str, tuple[str, list[float], list[str]]] = {}
    for record in measurements:
        for run in record.measured:
            if run.good is None:
                continue
            seconds = run.good.provenance.get("duration_s")
            if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
                continue
            _, durations, days = per_node.setdefault(run.node, (run.gpu, [], []))
            durations.append(float(seconds))
            days.append(run.recorded_on)
    cards = tuple(
        CardTime(node, gpu, len(durations), _minutes(sum(durations)), " to ".join(sorted({min(days), max(days)})))
        for node, (gpu, durations, days) in sorted(per_node.items())
        if len(durations) == total
    )
    sums = sorted(float(c.minutes) for c in cards)
    return MeasurePage(
        experiments=total,
        cards=cards,
        least=f"{sums[0]:.1f}" if sums else "",
        most=f"{sums[-1]:.1f}" if sums else "",
        repo_url=repo_url,
        commands=escape.code_block(
            "\n".join(
                (
                    f"git clone {repo_url or 'REPOSITORY_URL'} cuda-glossary",
                    "cd cuda-glossary",
                    "python3 -m pip install cuda-bindings numpy   # if your python3 lacks them",
                    "make measure",
                )
            ),
            "sh",
        ),
        capabilities_href=href("compute-capability"),
        availability_href=href("instruction-availability"),
    )
