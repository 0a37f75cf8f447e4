"""Wording that speaks of one GPU on a page whose values more than one node measured.

A page shows what every node that ran its experiments measured; where that is more than
one node, "our H200" tells the reader that one card was measured. These phrases are
warnings (case-insensitive; in the body, the definition, notes and claims; outside code)
while the experiments the term cites were measured on more than one node:

- `our` or `this` before a GPU noun in the singular: "our H200", "this GPU", "our GPU node",
  "this node's CPU" (not "our H200s"; not "that GPU", which points back at a GPU the prose
  has just named, often any GPU);
- `the` + a GPU noun + "(that) we measured / tested / used / ran / timed", and "the GPU
  named (listed, shown) under Measured";
- `on the` + a GPU noun in a sentence where a `measured(...)` or `compare(...)` follows:
  "On the H200, a launch took {{ measured(...) }}".

A GPU noun is GPU, card, device, node or chip, or the model of a GPU that measured the
experiments ('H200' of 'NVIDIA H200'). Prose about GPUs in general ("the GPU schedules
warps", "rebuild for the GPU you have") matches none of these and passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from cudagloss.check.markdown_fields import field_position, prose_fields
from cudagloss.check.typed_numbers import SENTENCE_END
from cudagloss.errors import Diagnostic
from cudagloss.model.corpus import LoadedTerm
from cudagloss.model.directives import scan
from cudagloss.model.display import short_gpu
from cudagloss.model.measurements import MeasurementSet
from cudagloss.model.term import Term
from cudagloss.text.spans import code_ranges, position

_NOUNS = ("GPU", "card", "device", "node", "chip")
_HEAD = r"(?:\s+(?:node|card|device|chip)(?![\w-]))?(?![\w-])(?!\s+(?:nodes|cards|devices|chips)\b)"
"""After a GPU noun: the noun it qualifies, if any ('our GPU node'), which must be singular too
('our GPU nodes' is plural)."""
_DEICTIC = r"\b(?:our|this)\s+(?:own\s+)?(?:{noun})" + _HEAD
_WE_MEASURED = (
    r"\bthe\s+(?:{noun})\s+(?:(?:that|which)\s+)?we\s+(?:measured|tested|used|ran|timed|benchmarked)\b"
    r"|\bthe\s+(?:{noun})\s+(?:named|listed|shown)\s+(?:under|in)\s+(?:the\s+)?measured\b"
)
_ON_THE = r"\bon\s+the\s+(?:{noun})" + _HEAD
_CITES_VALUES = {"measured", "compare"}


def nodes_cited(term: Term, measurements: MeasurementSet | None) -> dict[str, str]:
    """Each node that measured an experiment the term cites, with its GPU's model."""
    nodes: dict[str, str] = {}
    for citation in term.measurements:
        record = measurements.get(citation.experiment) if measurements else None
        for run in record.measured if record else []:
            nodes.setdefault(run.node, short_gpu(run.gpu))
    return nodes


def singular_gpu(t: LoadedTerm, measurements: MeasurementSet | None) -> Iterator[Diagnostic]:
    """A warning at each phrase of t's prose that speaks of one GPU (the rules above), when
    more than one node measured what t cites."""
    nodes = nodes_cited(t.term, measurements)
    if len(nodes) < 2:
        return
    models = sorted(set(nodes.values()))
    noun = "|".join(re.escape(n) for n in sorted({*_NOUNS, *models}, key=len, reverse=True))
    patterns = [re.compile(p.format(noun=noun), re.IGNORECASE) for p in (_DEICTIC, _WE_MEASURED, _ON_THE)]
    gpus = f"{models[0]}s" if len(models) == 1 else "GPUs"
    hint = (
        f"{len(nodes)} cards measured the values this page cites; write 'on the {gpus} we measured' or "
        f"'on each {gpus[:-1]}', or name no GPU (the Measured section names each card)"
    )
    for where, text, _ in prose_fields(t):
        for start, phrase in _phrases(text, patterns):
            at = field_position(t, where, *position(text, start))
            message = f"{where}: '{phrase}' speaks of one GPU, but {len(nodes)} cards measured this page's values"
            yield Diagnostic(t.path, *at, message, hint, warning=True)


def _phrases(text: str, patterns: list[re.Pattern[str]]) -> Iterator[tuple[int, str]]:
    """(offset, words) of each phrase of text that speaks of one GPU, outside code."""
    code = code_ranges(text)
    values = [d.start for d in scan(text)[0] if d.name in _CITES_VALUES]
    ends = [m.start() for m in SENTENCE_END.finditer(text)]
    spans: list[tuple[int, int]] = []
    for i, pattern in enumerate(patterns):
        for m in pattern.finditer(text):
            if any(a <= m.start() < b for a, b in code):
                continue
            if i == 2:  # on the H200: only where a cited value follows in the sentence
                end = next((e for e in ends if e >= m.end()), len(text))
                if not any(m.end() <= v < end for v in values):
                    continue
            spans.append(m.span())
    merged: list[list[int]] = []
    for start, end in sorted(spans):  # 'On the GPU named under Measured' is one phrase, not two
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in merged:
        yield start, " ".join(text[start:end].split())
