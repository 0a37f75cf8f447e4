"""The instruction-availability table as a term's page shows it (templates/_availability.md.j2):
one row per feature, one column per compute capability, each cell what NVRTC compiled the
feature's kernel for on that compute capability's targets; every refusal in the compiler's own
words below, and each kernel's source. Said only from the file (cudagloss.model.availability).
The strings stay plain: the template escapes each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup

from cudagloss.model.availability import COMPILED, TARGET, AvailabilityTable, Feature, target_key
from cudagloss.site import escape

YES = "yes"
NO = "no"
HOLE = "‹target›"
"""Stands where a refusal named the target it was given, so that one sentence covers many targets."""


@dataclass(frozen=True, slots=True)
class AvailabilityCell:
    text: str
    """'yes' (the plain target compiled), the suffixed targets that compiled ('sm_90a'), or 'no'."""
    title: str
    """The plain target's refusal, shown on hover; '' where it compiled."""
    anchor: str
    """The feature's refusals below ('' where it compiled)."""


@dataclass(frozen=True, slots=True)
class AvailabilityRow:
    feature: str
    ptx: str
    label: str
    term: str
    term_href: Markup | None
    cells: tuple[AvailabilityCell, ...]


@dataclass(frozen=True, slots=True)
class Refusal:
    anchor: str
    """The feature's anchor on its first refusal, '' on the rest."""
    feature: str
    message: str
    targets: str


@dataclass(frozen=True, slots=True)
class KernelView:
    feature: str
    label: str
    ptx: str
    block: Markup
    """The source as a fenced code block, indented to sit in the collapsed block."""


@dataclass(frozen=True, slots=True)
class SassRow:
    targets: str
    opcodes: str
    """The opcodes (mnemonic and modifiers, operands dropped) in order, '' for none kept."""


@dataclass(frozen=True, slots=True)
class SassView:
    feature: str
    ptx: str
    rows: tuple[SassRow, ...]


@dataclass(frozen=True, slots=True)
class AvailabilityView:
    name: str
    capabilities: tuple[str, ...]
    rows: tuple[AvailabilityRow, ...]
    refusals: tuple[Refusal, ...]
    kernels: tuple[KernelView, ...]
    sass: tuple[SassView, ...]
    disassembler: str
    compiler: str
    targets: str
    nvrtc_version: str
    date: str
    kind: str = "availability"
    file: Markup | None = None
    """The published file, linked from the citing page."""


def capability(target: str) -> str:
    """'sm_90a' -> '9.0', 'sm_121' -> '12.1'."""
    digits = TARGET.fullmatch(target)
    number = digits[1] if digits else "0"
    return f"{number[:-1]}.{number[-1]}"


def anchor(feature: str) -> str:
    return f"refused-{feature}"


def _cell(table: AvailabilityTable, feature: Feature, plain: str) -> AvailabilityCell:
    row = table.values.get(plain, {})
    if row.get(feature.id) == COMPILED:
        return AvailabilityCell(YES, "", "")
    family = [t for t in table.targets() if t != plain and capability(t) == capability(plain)]
    suffixed = [t for t in family if table.values[t][feature.id] == COMPILED]
    # Said whole, then where it is listed: a title that ended on the message's closing quote would
    # need that quote as an HTML entity (escape.link_title), which the exported Markdown must not hold.
    also = f"; {', '.join(suffixed)} compiled it" if suffixed else ""
    title = f"{plain} refused it: {row.get(feature.id, '')}{also} (listed below the table)"
    return AvailabilityCell(", ".join(suffixed) if suffixed else NO, title, anchor(feature.id))


def _refusals(table: AvailabilityTable, feature: Feature) -> list[Refusal]:
    """Each distinct refusal of the feature (the target it names made a hole), with its targets."""
    grouped: dict[str, list[str]] = {}
    for target in table.targets():
        verdict = table.values[target][feature.id]
        if verdict != COMPILED:
            grouped.setdefault(
                verdict.replace(f"'{target}'", f"'{HOLE}'").replace(f" {target} ", f" {HOLE} "), []
            ).append(target)
    return [
        Refusal(anchor(feature.id) if i == 0 else "", feature.id, message, ", ".join(targets))
        for i, (message, targets) in enumerate(grouped.items())
    ]


def _sass(table: AvailabilityTable, feature: Feature) -> SassView:
    """The targets that got the same opcodes, together, in the compiler's order of targets."""
    kept = table.sass.get(feature.id, {})
    grouped: dict[str, list[str]] = {}
    for target in sorted(kept, key=target_key):
        opcodes = ", ".join(line.split(" ", 1)[0] for line in kept[target])
        grouped.setdefault(opcodes, []).append(target)
    return SassView(feature.id, feature.ptx, tuple(SassRow(", ".join(t), o) for o, t in grouped.items()))


def availability_view(table: AvailabilityTable, href: Callable[[str], Markup | None]) -> AvailabilityView:
    """The view; href gives a term's link from the citing page (None where there is no such term)."""
    plain = [t for t in table.targets() if not t[-1].isalpha()]
    p = table.provenance
    return AvailabilityView(
        name=table.name,
        capabilities=tuple(capability(t) for t in plain),
        rows=tuple(
            AvailabilityRow(f.id, f.ptx, f.label, f.term, href(f.term), tuple(_cell(table, f, t) for t in plain))
            for f in table.features
        ),
        refusals=tuple(r for f in table.features for r in _refusals(table, f)),
        kernels=tuple(
            KernelView(f.id, f.label, f.ptx, escape.code_block(f.source, "cuda", indent=4)) for f in table.features
        ),
        sass=tuple(_sass(table, f) for f in table.features if f.id in table.sass),
        disassembler=p["disassembler"],
        compiler=p["compiler"],
        targets=p["targets"],
        nvrtc_version=p["nvrtc_version"],
        date=p["computed_at"][:10],
    )
