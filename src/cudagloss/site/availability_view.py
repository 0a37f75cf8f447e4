"""The instruction-availability table as a term's page shows it (templates/_availability.md.j2):
one row per feature, one column per compute capability, each cell what NVRTC compiled the
feature's kernel for on that compute capability's targets; every refusal in the compiler's own
words below, and each kernel's source. Said only from the file (cudagloss.model.availability),
and, where cards of a compute capability ran the instruction-availability experiment, how many
distinct cards ran each feature's kernel (their good runs). The strings stay plain: the template
escapes each.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup

from cudagloss.model.availability import COMPILED, TARGET, AvailabilityTable, Feature, target_key
from cudagloss.model.display import short_gpu
from cudagloss.model.measurements import ExperimentRecord
from cudagloss.site import escape

YES = "yes"
NO = "no"
HOLE = "‹target›"
"""Stands where a refusal named the target it was given, so that one sentence covers many targets."""
EXPERIMENT = "instruction-availability"
"""The experiment that runs each feature's kernel on a card (verifier/experiments/instruction_availability.py)."""
RAN = "ran"
ON_THIS_GPU = "_on_this_gpu"


@dataclass(frozen=True, slots=True)
class AvailabilityCell:
    text: str
    """'yes' (the plain target compiled), the suffixed targets that compiled ('sm_90a'), or 'no'."""
    title: str
    """The plain target's refusal, shown on hover; '' where it compiled."""
    anchor: str
    """The feature's refusals below ('' where it compiled)."""
    ran: int = 0
    """Distinct cards of this compute capability on which the feature's kernel ran."""
    ran_title: str = ""
    """Said on hover of the count ('' where no card ran it)."""


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
    """This row's anchor (anchor()): a cell links to the row of its own target's refusal."""
    feature: str
    message: str
    targets: str
    sic: bool = False
    """The message repeats a word: shown as written, marked [sic]."""


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
    ran_on: str = ""
    """The cards that ran the experiment, by compute capability ('9.0: 3 cards'), '' for none."""
    measurement: Markup | None = None
    """The experiment's measurement page, from the citing page."""
    kind: str = "availability"
    file: Markup | None = None
    """The published file, linked from the citing page."""


def capability(target: str) -> str:
    """'sm_90a' -> '9.0', 'sm_121' -> '12.1'."""
    digits = TARGET.fullmatch(target)
    number = digits[1] if digits else "0"
    return f"{number[:-1]}.{number[-1]}"


def anchor(feature: str, group: int = 0) -> str:
    """A refusal row's anchor: the feature's first as 'refused-<feature>', the next 'refused-<feature>-2'."""
    return f"refused-{feature}" if group == 0 else f"refused-{feature}-{group + 1}"


DOUBLED = re.compile(r"\b(\w+) \1\b", re.IGNORECASE)
"""A word written twice in a row ('mma with with FP6/FP4'): the compiler's slip, kept and marked [sic]."""


def _groups(table: AvailabilityTable, feature: Feature) -> dict[str, list[str]]:
    """Each distinct refusal of the feature (the target it names made a hole) -> its targets, in order."""
    grouped: dict[str, list[str]] = {}
    for target in table.targets():
        verdict = table.values[target][feature.id]
        if verdict != COMPILED:
            grouped.setdefault(
                verdict.replace(f"'{target}'", f"'{HOLE}'").replace(f" {target} ", f" {HOLE} "), []
            ).append(target)
    return grouped


def result_name(feature: str) -> str:
    """The experiment's result for a feature: 'mma-f16' -> 'mma_f16_on_this_gpu'."""
    return feature.replace("-", "_") + ON_THIS_GPU


def cards_by_capability(record: ExperimentRecord | None) -> dict[str, list[str]]:
    """The GPU model of each distinct card (one node is one card) that ran the experiment, by compute capability."""
    cards: dict[str, list[str]] = {}
    for run in record.measured if record else []:
        if run.good is not None:
            p = run.good.provenance
            cards.setdefault(str(p.get("compute_capability", "")), []).append(short_gpu(str(p.get("gpu_name", ""))))
    return cards


def ran_counts(record: ExperimentRecord | None) -> Counter[tuple[str, str]]:
    """(compute capability, feature result name) -> the distinct cards whose good run says 'ran'."""
    counts: Counter[tuple[str, str]] = Counter()
    for run in record.measured if record else []:
        if run.good is None:
            continue
        cc = str(run.good.provenance.get("compute_capability", ""))
        counts.update((cc, r.name) for r in run.good.results if r.name.endswith(ON_THIS_GPU) and r.value == RAN)
    return counts


def _cell(
    table: AvailabilityTable,
    feature: Feature,
    plain: str,
    ran: Counter[tuple[str, str]],
    groups: dict[str, list[str]],
) -> AvailabilityCell:
    """One feature on one compute capability; groups are the feature's refusals (_groups)."""
    row = table.values.get(plain, {})
    cards = ran[(capability(plain), result_name(feature.id))]
    said = (
        f"its kernel ran on {cards} card{'s' if cards != 1 else ''} of compute capability {capability(plain)} "
        f"({EXPERIMENT} experiment)"
        if cards
        else ""
    )
    if row.get(feature.id) == COMPILED:
        return AvailabilityCell(YES, "", "", cards, said)
    family = [t for t in table.targets() if t != plain and capability(t) == capability(plain)]
    suffixed = [t for t in family if table.values[t][feature.id] == COMPILED]
    # Said whole, then where it is listed: a title that ended on the message's closing quote would
    # need that quote as an HTML entity (escape.link_title), which the exported Markdown must not hold.
    also = f"; {', '.join(suffixed)} compiled it" if suffixed else ""
    title = f"{plain} refused it: {row.get(feature.id, '')}{also} (listed below the table)"
    group = next((i for i, targets in enumerate(groups.values()) if plain in targets), 0)
    return AvailabilityCell(", ".join(suffixed) if suffixed else NO, title, anchor(feature.id, group), cards, said)


def _refusals(feature: Feature, groups: dict[str, list[str]]) -> list[Refusal]:
    """Each distinct refusal of the feature with its targets, each row its own anchor."""
    return [
        Refusal(anchor(feature.id, i), feature.id, message, ", ".join(targets), bool(DOUBLED.search(message)))
        for i, (message, targets) in enumerate(groups.items())
    ]


def _sass(table: AvailabilityTable, feature: Feature) -> SassView:
    """The targets that got the same opcodes, together, in the compiler's order of targets."""
    kept = table.sass.get(feature.id, {})
    grouped: dict[str, list[str]] = {}
    for target in sorted(kept, key=target_key):
        opcodes = ", ".join(line.split(" ", 1)[0] for line in kept[target])
        grouped.setdefault(opcodes, []).append(target)
    return SassView(feature.id, feature.ptx, tuple(SassRow(", ".join(t), o) for o, t in grouped.items()))


def _ran_on(cards: dict[str, list[str]]) -> str:
    """'9.0: 3 cards (H100, H200); 12.0: 1 card (RTX 5090)', in numeric order (one that is no number last)."""
    ordered = sorted(cards.items(), key=lambda kv: tuple(int(p) if p.isdigit() else 1 << 30 for p in kv[0].split(".")))
    return "; ".join(
        f"{cc}: {len(gpus)} card{'s' if len(gpus) != 1 else ''} ({', '.join(sorted(set(gpus)))})"
        for cc, gpus in ordered
    )


def availability_view(
    table: AvailabilityTable,
    href: Callable[[str], Markup | None],
    record: ExperimentRecord | None = None,
    measurement: Markup | None = None,
) -> AvailabilityView:
    """The view; href gives a term's link from the citing page (None where there is no such term);
    record is the instruction-availability experiment's, measurement its page's link."""
    plain = [t for t in table.targets() if not t[-1].isalpha()]
    p = table.provenance
    ran = ran_counts(record)
    cards = cards_by_capability(record)
    groups = {f.id: _groups(table, f) for f in table.features}
    return AvailabilityView(
        name=table.name,
        capabilities=tuple(capability(t) for t in plain),
        rows=tuple(
            AvailabilityRow(
                f.id, f.ptx, f.label, f.term, href(f.term), tuple(_cell(table, f, t, ran, groups[f.id]) for t in plain)
            )
            for f in table.features
        ),
        refusals=tuple(r for f in table.features for r in _refusals(f, groups[f.id])),
        kernels=tuple(
            KernelView(f.id, f.label, f.ptx, escape.code_block(f.source, "cuda", indent=4)) for f in table.features
        ),
        sass=tuple(_sass(table, f) for f in table.features if f.id in table.sass),
        disassembler=p["disassembler"],
        compiler=p["compiler"],
        targets=p["targets"],
        nvrtc_version=p["nvrtc_version"],
        date=p["computed_at"][:10],
        ran_on=_ran_on(cards),
        measurement=measurement if cards else None,
    )
