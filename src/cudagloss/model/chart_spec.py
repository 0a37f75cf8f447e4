"""What an author writes to chart an experiment's results (a term's `charts:`), and how a
series names its points.

A series is one pattern, such as `cycles_{size}`: every result of the experiment whose name
it fits is a point, and the point's x is read from the part of the name that `{size}` or
`{count}` stands for (`cycles_8kib` is at 8 KiB, `stride_32` at 32), parsed strictly; `{name}`
makes each fitting name a category of a bar chart (`{name}_tflops`: mma_sync, wgmma). So the
points, their x and their y all come from the measurement files: the author types no number.
Standard library and model.limits only, like cudagloss.model.term, which holds these in its Term.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from cudagloss.model.limits import LINE_MAX, NAME_MAX, NOTE_MAX
from cudagloss.model.limits import doc as _doc

_SLUG = r"^[a-z0-9]+(-[a-z0-9]+)*$"
PATTERN = r"^[a-z0-9_]*\{(size|count|name)\}[a-z0-9_]*$"
"""A series' `results`: result-name characters around one `{size}`, `{count}` or `{name}`."""

SIZE_UNITS = {"b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
_TOKENS = {
    "size": r"([1-9][0-9]{0,5})(b|kib|mib|gib|tib)",  # '8kib', '1gib': no leading zero, no fraction
    "count": r"(0|[1-9][0-9]{0,8})",  # '32', '1024'
    "name": r"([a-z][a-z0-9]*(?:_[a-z0-9]+)*)",  # 'mma_sync', 'wgmma': a category, not a number
}
XKind = Literal["size", "count", "name"]


@dataclass(frozen=True)
class ChartSeries:
    """One line of a chart: the results that are its points, named by a pattern."""

    results: str = field(
        metadata=_doc(
            "A result name with {size} or {count} where the x value is, e.g. 'cycles_{size}' "
            "(cycles_8kib, cycles_16kib, ...) or 'stride_{count}' (stride_1, stride_2, ...): every "
            "result it fits is a point, at the x its name says; {name} draws bars, one per name it fits.",
            pattern=PATTERN,
            max_length=NAME_MAX,
        )
    )
    label: str = field(
        default="",
        metadata=_doc("What the series is, for the legend, e.g. 'pinned, host to device'.", max_length=60),
    )


@dataclass(frozen=True)
class ChartLine:
    """A reference line drawn across the chart at a measured value (a peak, a cache size)."""

    result: str = field(metadata=_doc("The result, of the chart's experiment, that places it.", max_length=NAME_MAX))
    label: str = field(metadata=_doc("What it marks, e.g. 'theoretical peak' or 'L2 size'.", max_length=60))


@dataclass(frozen=True)
class Chart:
    """A chart of one experiment's results, shown where the body writes {{ chart('id') }}."""

    id: str = field(metadata=_doc("The name the body's chart(...) uses.", pattern=_SLUG, max_length=NAME_MAX))
    experiment: str = field(
        metadata=_doc(
            "The experiment whose results it draws (the term must cite it).", pattern=_SLUG, max_length=NAME_MAX
        )
    )
    title: str = field(metadata=_doc("The chart's caption: what it shows, in words.", max_length=LINE_MAX))
    x: str = field(metadata=_doc("What the x axis is, in words: 'footprint', 'stride (floats)'.", max_length=60))
    y: str = field(metadata=_doc("What the y axis is, in words; the unit comes from the results.", max_length=60))
    series: list[ChartSeries] = field(
        metadata=_doc("The lines; each GPU model that measured them gets its own.", max_items=8)
    )
    lines: list[ChartLine] = field(
        default_factory=list,
        metadata=_doc(
            "Reference lines: a result in the y axis's unit is drawn across, a size on a size axis up.",
            max_items=4,
        ),
    )
    per: Literal["model", "node"] = field(
        default="model",
        metadata=_doc(
            "One series per GPU model ('model': its nodes' median, their spread as a bar) or per node ('node')."
        ),
    )


@dataclass(frozen=True)
class Matched:
    """A result a series' pattern fits: its name, and the x its name says."""

    name: str
    x: int
    token: str


def x_kind(pattern: str) -> XKind | None:
    """'size', 'count' or 'name' for a well-formed pattern, None otherwise."""
    match = re.fullmatch(PATTERN.strip("^$"), pattern)
    return match.group(1) if match else None  # type: ignore[return-value]


def match_results(pattern: str, names: list[str]) -> list[Matched]:
    """The names pattern fits, with their x, in x order; for {name}, x is the order of names given."""
    kind = x_kind(pattern)
    if kind is None:
        return []
    before, _, after = pattern.partition("{" + kind + "}")
    regex = re.compile(re.escape(before) + _TOKENS[kind] + re.escape(after))
    found: list[Matched] = []
    for name in names:
        m = regex.fullmatch(name)
        if m is None:
            continue
        x = len(found) if kind == "name" else int(m.group(1)) * (SIZE_UNITS[m.group(2)] if kind == "size" else 1)
        found.append(Matched(name, x, m.group(0)[len(before) : len(m.group(0)) - len(after)]))
    return sorted(found, key=lambda m: m.x)


DIAGRAMS_DIR = "diagrams"
"""Where diagram files live, inside the terms folder (terms/diagrams/): a copy of the folder
carries its drawings, and a term names one as diagrams/<name>.svg."""
_DIAGRAM_FILE = r"^diagrams/[a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+)?\.svg$"


@dataclass(frozen=True)
class Diagram:
    """An SVG drawing from terms/diagrams/, shown where the body writes
    {{ diagram('id') }}, after the page sanitiser's allowlist; its text may cite measured values."""

    id: str = field(metadata=_doc("The name the body's diagram(...) uses.", pattern=_SLUG, max_length=NAME_MAX))
    file: str = field(
        metadata=_doc(
            "The SVG file, e.g. 'diagrams/memory-hierarchy.svg'. Colour it with the classes AUTHORING.md "
            "lists, so it follows the reader's palette; text may hold {{ measured('experiment', 'result') }}.",
            pattern=_DIAGRAM_FILE,
            max_length=200,
        )
    )
    alt: str = field(
        metadata=_doc("What the diagram shows, in words, for readers who cannot see it.", max_length=NOTE_MAX)
    )
    caption: str = field(default="", metadata=_doc("Optional: a caption shown under it.", max_length=LINE_MAX))
    dark: str = field(
        default="",
        metadata=_doc(
            "Optional: another file drawn for the dark palette ('diagrams/x.dark.svg'); without it the one file "
            "follows the palette through its classes.",
            max_length=200,
        ),
    )
