"""A computed table as a term's page shows it (templates/term.md.j2, "Computed by NVIDIA's
tools"): one row per compute capability in numeric order, one column per function in the
order of the file's provenance, and a sentence of where the values come from, said only from
the file's provenance. The strings stay plain: the template escapes each (`| cell`, `| code`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup

from cudagloss.model.availability import AvailabilityTable
from cudagloss.model.computed import ComputedTable, Value
from cudagloss.model.computed_set import ComputedSet
from cudagloss.model.measurements import MeasurementSet
from cudagloss.site.availability_view import EXPERIMENT, AvailabilityView, availability_view
from cudagloss.site.escape import inert_json

LABELS = {
    "cudaOccSMemAllocationGranularity": "shared memory allocation granularity",
    "cudaOccRegAllocationMaxPerThread": "register allocation maximum per thread",
    "cudaOccRegAllocationGranularity": "register allocation granularity",
    "cudaOccSubPartitionsPerMultiprocessor": "sub-partitions per multiprocessor",
    "cudaOccMaxBlocksPerMultiprocessor": "maximum blocks per multiprocessor",
    "cudaOccMaxVirtualResourceCountPerSM": "maximum virtual resource count per SM",
    "cudaOccMaxBlocksPerSMBlockBarrierLimit": "maximum blocks per SM under the block barrier limit",
    "cudaOccPartitionedGlobalCachingModeSupport": "partitioned global caching mode support",
    "cudaOccAlignUpShmemSizeVoltaPlus": "the shared memory sizes it aligns up to, in bytes",
}
"""Each function's name said in words, nothing added to it; the bytes are verifier/generations.py's
("the distinct sizes it gives, bytes ascending")."""


def label(function: str) -> str:
    """A short plain label for a header function: LABELS', else its name's words in lower case."""
    if function in LABELS:
        return LABELS[function]
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", function.removeprefix("cudaOcc"))
    return " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in words) or function


@dataclass(frozen=True, slots=True)
class ComputedColumn:
    function: str
    label: str


@dataclass(frozen=True, slots=True)
class ComputedRow:
    capability: str
    cells: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ComputedView:
    name: str
    columns: tuple[ComputedColumn, ...]
    rows: tuple[ComputedRow, ...]
    header: str
    """The header's file name (the last part of the path the file states)."""
    cuda_version: str
    sha256: str
    """The first 12 hex digits of the header's sha256."""
    compiler: str
    nvrtc_version: str
    date: str
    kind: str = "occupancy"
    file: Markup | None = None
    """The published file, linked from the citing page."""


def _cell(value: Value | None) -> str:
    if value is None:
        return ""
    return ", ".join(str(v) for v in value) if isinstance(value, tuple) else str(value)


def computed_view(table: ComputedTable) -> ComputedView:
    p = table.provenance
    return ComputedView(
        name=table.name,
        columns=tuple(ComputedColumn(f, label(f)) for f in table.functions),
        rows=tuple(
            ComputedRow(cc, tuple(_cell(table.values[cc].get(f)) for f in table.functions))
            for cc in table.capabilities()
        ),
        header=str(p["header"]).rsplit("/", 1)[-1],
        cuda_version=str(p["cuda_version"]),
        sha256=str(p["header_sha256"])[:12],
        compiler=str(p["compiler"]),
        nvrtc_version=str(p["nvrtc_version"]),
        date=str(p["computed_at"])[:10],
    )


def computed_views(
    names: list[str],
    computed: ComputedSet | None,
    href: Callable[[str], Markup | None] = lambda _: None,
    file_href: Callable[[str], Markup | None] = lambda _: None,
    measurements: MeasurementSet | None = None,
    measurement_href: Callable[[str], Markup | None] = lambda _: None,
) -> tuple[ComputedView | AvailabilityView, ...]:
    """The views of the tables a term cites, in its order (the check refused any that cannot be
    read); href gives a term's link from the citing page (for the tables that name terms),
    file_href the published file's, and measurement_href an experiment's page (the availability
    table says which cards ran its features, from the measurements)."""
    tables = [computed.get(n)[0] for n in names] if computed is not None else []
    record = measurements.get(EXPERIMENT) if measurements is not None else None
    views = (
        availability_view(t, href, record, measurement_href(EXPERIMENT))
        if isinstance(t, AvailabilityTable)
        else computed_view(t)
        for t in tables
        if t is not None
    )
    return tuple(dataclasses.replace(v, file=file_href(computed_src_uri(v.name))) for v in views)


def computed_src_uri(name: str) -> str:
    """Where a computed table is published on the site, as in the repository."""
    return f"computed/{name}.json"


def computed_files(names: list[str], computed: ComputedSet | None) -> list[tuple[str, str]]:
    """(site path, JSON) of each table the terms cite, written again from what was read and
    checked (never the file's own bytes), inert to a browser that sniffs it as HTML (escape.inert_json)."""
    out = []
    for name in sorted(set(names)):
        table = computed.get(name)[0] if computed is not None else None
        if table is None:
            continue
        if isinstance(table, ComputedTable):
            data = {"provenance": table.provenance, "values": table.values}
        else:
            data = {k: v for k, v in dataclasses.asdict(table).items() if k != "name"}
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        out.append((computed_src_uri(name), inert_json(text)))
    return out
