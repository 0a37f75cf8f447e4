"""What `{{ worked("id") }}` becomes on a page: the example's steps as a numbered list, each with
the values substituted, the units worked out and its number in bold, computed on every node.

Nodes of one GPU model share one list: a value they agree on is written once, one they do not
as a range ('4,636–4,637 GB/s'); each GPU model has a list of its own. A measured value is a
link to its row on the measurement page, with every node's value in its hover text, as
`measured(...)` makes; a step that matches a measured result says what was measured beside it.
Every string from the term or the measurements passes cudagloss.site.escape.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

from markupsafe import Markup

from cudagloss.model import units
from cudagloss.model.claims import Expr, show
from cudagloss.model.display import format_value, short_gpu
from cudagloss.model.measurement import Result
from cudagloss.model.measurements import COMBINED
from cudagloss.model.refs import Ref
from cudagloss.model.urls import result_anchor
from cudagloss.model.work_rules import FACT, STEP, Quantity
from cudagloss.model.workings import NodeWork, Working, gap, shown
from cudagloss.site import escape

_NUMBER = re.compile(r"-?[0-9][0-9,]*(?:\.[0-9]+)?")
SYMBOLS = {"*": "×", "/": "÷", "floor": "⌊{}⌋", "ceil": "⌈{}⌉"}
"""How a step's arithmetic reads: × and ÷, and rounding down or up as ⌊x⌋ and ⌈x⌉."""
Linker = Callable[[Ref, Sequence[NodeWork]], Markup]
"""Writes a measured value of some nodes as a link to its row (cudagloss.site.directives.ValueCiter)."""


def span(pairs: Sequence[tuple[float, str]]) -> str:
    """Values as one text: the text where all read alike, else 'lowest–highest' with the unit once."""
    texts = list(dict.fromkeys(text for _, text in pairs))
    if len(texts) == 1:
        return texts[0]
    low, high = min(pairs)[1], max(pairs)[1]
    number = _NUMBER.match(low)
    unit = low[number.end() :] if number else ""
    if number and unit and high.endswith(unit) and _NUMBER.fullmatch(high[: len(high) - len(unit)]):
        return f"{number.group()}–{high}"
    return f"{low} – {high}"


def reading(q: Quantity) -> str:
    """A step's number as a reader reads it; a size per counted thing in the size's own unit
    ('228 KiB per SM', not '233,472 bytes per SM')."""
    spoken = units.spoken(str(q.unit))
    if spoken.startswith("bytes per ") or spoken.startswith("byte per "):
        return f"{format_value(Result('', q.value, 'bytes'))} per {spoken.split(' per ', 1)[1]}"
    return shown(q)


def render(working: Working, link: Linker) -> Markup:
    """The example as Markdown: its title, which cards it was worked out on, and one numbered list
    of steps per GPU model (each step's values substituted, its number in bold)."""
    example = working.static.example
    out = [Markup("**Worked example: ") + escape.text(example.title) + Markup("**")]
    if not working.nodes:
        out.append(escape.text(f"Not worked out yet: {working.unverified}. The steps:"))
        out.append(
            Markup("\n").join(
                Markup(f"{i}. ") + escape.text(step.says) + Markup(": ") + escape.code(step.value or step.given or "")
                for i, step in enumerate(example.steps, 1)
            )
        )
        return Markup("\n\n").join(out)
    models = Counter(n.gpu for n in working.nodes)
    for gpu in sorted(models, key=lambda g: (-models[g], g)):
        group = [n for n in working.nodes if n.gpu == gpu]
        names = ", ".join(n.node for n in group[:4]) + (f" and {len(group) - 4} more" if len(group) > 4 else "")
        where = f"{gpu} (card {names})" if len(group) == 1 else f"{len(group)} {short_gpu(gpu)} cards ({names})"
        if len(group) == 1 and COMBINED in group[0].node:
            cards = group[0].node.split(COMBINED)
            together = f"{len(cards)} {short_gpu(gpu)} cards taken together ({', '.join(cards)})"
            where = f"{together}: no one card measured every value"
        elif any(COMBINED in n.node for n in group):  # combinations of cards, never counted as cards
            cards = list(dict.fromkeys(c for n in group for c in n.node.split(COMBINED)))
            where = (
                f"{len(group)} combinations of {len(cards)} {short_gpu(gpu)} cards ({names}): "
                "no one card measured every value"
            )
        stale = " Some of these values are stale: the experiment changed since." if any(n.stale for n in group) else ""
        ranges = " Where the cards differ, a range." if len(group) > 1 else ""
        out.append(escape.text(f"Worked out from the values measured on {where}.{ranges}{stale}"))
        out.append(Markup("\n").join(_step(working, i, group, link) for i in range(len(example.steps))))
    return Markup("\n\n").join(out)


def _step(working: Working, i: int, group: Sequence[NodeWork], link: Linker) -> Markup:
    s = working.static
    step, tree = s.example.steps[i], s.trees[i]
    values = [(q, n) for n in group if (q := n.steps[i]) is not None]
    result = span([(q.value, reading(q)) for q, _ in values]) if values else "not worked out"
    line = Markup(f"{i + 1}. ") + escape.text(step.says) + Markup(": ")
    if tree is None:
        return line + Markup("**") + escape.text(result) + Markup("**, chosen for this example.")
    if tree.kind == "ref" and tree.text.split(".")[0] not in (STEP, FACT) and step.unit is None:
        line += _substituted(working, tree, group, link)
        per = s.pers[i]
        return line + (escape.text(f" per {per}") if per is not None else Markup()) + Markup(".")
    line += _substituted(working, tree, group, link) + Markup(" = **") + escape.text(result) + Markup("**")
    return line + _matched(working, i, values, link) + Markup(".")


def _substituted(working: Working, tree: Expr, group: Sequence[NodeWork], link: Linker) -> Markup:
    """tree with each name replaced by its value: measured ones linked, steps and facts as text.
    The arithmetic between them is escaped as plain text; the values are put in after."""
    s, leaves = working.static, list[Markup]()
    ids = {step.id: j for j, step in enumerate(s.example.steps) if step.id is not None}

    def leaf(ref: Expr) -> str:
        kind, name = ref.text.split(".")
        if kind == STEP:
            j = ids[name]
            leaves.append(escape.text(span([(q.value, reading(q)) for n in group if (q := n.steps[j]) is not None])))
        elif kind == FACT:
            leaves.append(escape.text(reading(s.facts[name])))
        else:
            leaves.append(link((kind, name), group))
        return f"\x00{len(leaves) - 1}\x00"

    text = str(escape.text(show(tree, leaf, SYMBOLS)))
    parts = text.split("\x00")
    return Markup("").join(Markup(p) if k % 2 == 0 else leaves[int(p)] for k, p in enumerate(parts))


def _matched(working: Working, i: int, values: Sequence[tuple[Quantity, NodeWork]], link: Linker) -> Markup:
    """'; measured: 17 blocks per SM, the same' beside a step that matches a measured result."""
    ref = working.static.matches[i]
    if ref is None or not values:
        return Markup()
    gaps = [gap(q, n.measured[ref]) for q, n in values]
    low, high = min(map(abs, gaps)), max(map(abs, gaps))
    if high < 0.0005:
        said = "the same"
    elif all(g > 0 for g in gaps) or all(g < 0 for g in gaps):
        apart = f"{low:.1%}" if f"{low:.1%}" == f"{high:.1%}" else f"{low:.1%}–{high:.1%}".replace("%–", "–")
        said = f"{apart} {'above' if gaps[0] > 0 else 'below'} this"
    else:
        said = f"from {abs(min(gaps)):.1%} below to {max(gaps):.1%} above this"
    within = working.static.within[i]
    allowed = f" (allowed: within {float(within * 100):g}%)" if within else ""
    return Markup("; measured: ") + link(ref, [n for _, n in values]) + escape.text(f", {said}{allowed}")


def measured_text(ref: Ref, group: Sequence[NodeWork]) -> str:
    """A measured value over some nodes, as the working shows it."""
    return span([(_number(n.measured[ref]), format_value(n.measured[ref])) for n in group])


def _number(result: Result) -> float:
    value = result.value
    return float(value) if isinstance(value, int | float) else 0.0


def anchor(ref: Ref, group: Sequence[NodeWork]) -> str:
    """The id of the first node's row of a measured value."""
    return str(escape.ident(result_anchor(group[0].source(ref), ref[1])))
