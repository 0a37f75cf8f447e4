"""What the measurement pages' templates read (an experiment's page and the index of them all),
as frozen dataclasses of plain values, like the term pages' views in cudagloss.site.views."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from cudagloss.model.compare import ALPHA, MIN_CHANGE
from cudagloss.model.measurement import Gate
from cudagloss.site.fleet import NodeView
from cudagloss.site.views import TermEntry


@dataclass(frozen=True, slots=True)
class ProvenanceRow:
    label: str
    value: str


@dataclass(frozen=True, slots=True)
class ResultView:
    """One row of a run's results table; the anchor is what values cited elsewhere link to."""

    anchor: Markup
    name: str
    value: str
    description: str
    samples: str
    first_measured: str
    last_confirmed: str
    """Days (YYYY-MM-DD): first measured as it is now, and the run that last confirmed it."""
    how: str = ""
    """How it was measured, in words ('GPU time', 'host cost'), where the file says."""


@dataclass(frozen=True, slots=True)
class RunFile:
    """One measurement file of a node (its good run or its failed one) and its raw JSON."""

    raw: Markup
    raw_name: str
    recorded_at: str
    provenance: tuple[ProvenanceRow, ...]
    gates: tuple[Gate, ...]
    error: str | None
    results: tuple[ResultView, ...]
    clocks_held: str = ""
    """Why NVML said the clocks were held back (power, heat), at the start or the end; '' if not."""


@dataclass(frozen=True, slots=True)
class RunView(NodeView):
    """A card's section of a measurement page: its latest good run, its earlier good runs
    (newest first) and a failed run after them."""

    good: RunFile | None = None
    failed: RunFile | None = None
    earlier: tuple[RunFile, ...] = ()
    summarised_by: str = ""
    """Where the run was summarised by older code and kept no raw samples to derive again
    (NodeRun.summarised_before): the commit its run's verifier was at ('' otherwise)."""


@dataclass(frozen=True, slots=True)
class MeasurementPage:
    experiment: str
    purpose: str
    source: str
    source_href: Markup | None
    command: str
    cited_by: tuple[TermEntry, ...]
    runs: tuple[RunView, ...]
    index: Markup
    kernels: tuple[KernelView, ...] = ()
    api_calls: tuple[str, ...] = ()
    """The driver and NVRTC functions behind its values (verifier/anatomy.py)."""


@dataclass(frozen=True, slots=True)
class KernelView:
    """A kernel an experiment compiles: where it is written, its language, and the fenced block."""

    where: str
    language: str
    block: Markup


@dataclass(frozen=True, slots=True)
class ExperimentRow:
    id: str
    href: Markup
    purpose: str
    nodes: tuple[NodeView, ...]
    cited_by: tuple[TermEntry, ...]


@dataclass(frozen=True, slots=True)
class MeasurementsIndex:
    experiments: tuple[ExperimentRow, ...]
    alpha: str = f"{ALPHA:g}"
    min_change: str = f"{MIN_CHANGE:.0%}"
    """compare()'s rule (cudagloss.model.compare), stated where the statistics are explained."""
