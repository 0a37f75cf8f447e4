"""The hint for a number about a GPU typed by hand: the `measured(...)` call that replaces it,
or, where no cited value is that number, where such a number goes.

A cited result is offered only when it is the number the author typed, about the same thing,
since a wrong offer is worse than none ('4 warp schedulers' is not the warp size):

- its value, rounded as typed, is the typed number;
- its unit counts what the number counts: the same unit ('threads', or the head of
  'threads/warp'), and each thing a per-unit names ('warp' in threads/warp) is a word of
  the sentence;
- its name is about the sentence: a word of the name (max, min, median and the like aside)
  is a word of the sentence ('warp_size' in 'a warp is 32 threads');
- where the number counts a noun its unit only qualifies ('schedulers' in '4 warp
  schedulers': TypedNumber.counts), that noun is a word of its name or unit.

Where several are offered, the one whose name shares most words with the sentence comes first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from cudagloss.check.typed_numbers import SENTENCE_END, TypedNumber, equal, prose, unit_of
from cudagloss.model.display import format_value
from cudagloss.model.measurement import Result
from cudagloss.model.measurements import MeasurementSet
from cudagloss.model.term import Term

_GENERIC = {"max", "min", "median", "mean", "avg", "average", "count", "per", "total", "num", "number", "value"}
"""Words of a result's name that say how it was reduced, not what it is about."""
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def facts_hint(facts_path: str) -> str:
    """Where a number about a GPU goes when no value the term cites is that number."""
    return (
        "no value this term cites is that number: cite the experiment that measures it (`cudagloss values`) "
        "or add one under verifier/experiments/; if no GPU measures it (the programming model, a naming rule "
        f"or NVIDIA's documentation defines it), list it in {facts_path} with the reason "
        "(AUTHORING.md: Numbers about a GPU)"
    )


def hint(found: TypedNumber, text: str, term: Term, measurements: MeasurementSet | None, facts_path: str) -> str:
    """The measured(...) call that would replace found (a number in the field text), by the
    rules above; else where such a number goes."""
    if found.names_architecture:
        return (
            f"cite a measurement or add it to {facts_path} with a reason; "
            f"a target name that is only a name is written as code (`{found.text}`)"
        )
    words = _sentence_words(text, found)
    follower = _stem(found.counts) if found.counts else ""
    offered: list[tuple[int, str]] = []
    for experiment, name, result, node in _cited(term, measurements):
        score = _relation(found, words, follower, name, result)
        if score is not None:
            call = f'{{{{ measured("{experiment}", "{name}") }}}}'
            offered.append((-score, f"{call} ({format_value(result)} on {node})"))
    if not offered:
        return facts_hint(facts_path)
    offered.sort(key=lambda pair: pair[0])
    more = f", or one of {len(offered) - 1} more of that value (`cudagloss values`)" if len(offered) > 1 else ""
    return f"write {offered[0][1]} instead{more}"


def _relation(found: TypedNumber, words: set[str], follower: str, name: str, result: Result) -> int | None:
    """How many words of the result's name the sentence holds, when the result may replace
    found; None when it may not."""
    head, per = _unit_parts(result.unit)
    if head is None or head[0] != found.unit or not equal(found.number, result.value):
        return None
    if any(not _holds(words, _stem(p)) for p in per):
        return None
    name_words = {_stem(w) for w in re.split(r"[_\W\d]+", name) if len(w) > 1} - _GENERIC
    if follower and not _holds(name_words | {_stem(p) for p in per}, follower):
        return None
    shared = sum(_holds(words, w) for w in name_words)
    return shared or None


def _unit_parts(unit: str) -> tuple[tuple[str, str] | None, list[str]]:
    """A result's unit as (its head, as typed_numbers compares units; the things it is per):
    'threads/warp' is threads per warp, 'GB/s' a bandwidth of its own."""
    whole = unit_of(unit)
    if whole is not None:
        return whole, []
    head, _, rest = unit.partition("/")
    return unit_of(head), [p for p in rest.split("/") if p]


def _sentence_words(text: str, found: TypedNumber) -> set[str]:
    """The words of the sentence around found, as prose reads (no code, no directive)."""
    view = prose(text)
    starts = [0, *(m.end() for m in SENTENCE_END.finditer(view))]
    start = max(s for s in starts if s <= found.start)
    end = min((s for s in starts if s > found.start), default=len(view))
    return {_stem(w) for w in _WORD.findall(view[start:end])}


def _stem(word: str) -> str:
    """A word folded to compare with others: 'Schedulers' and 'scheduler', 'SMs' and 'sm'."""
    w = word.casefold()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    return w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 2 else w


def _holds(words: set[str], word: str) -> bool:
    """Whether words hold word, or a word that one of the two begins with ('load', 'loaded')."""
    return word in words or (
        len(word) >= 4 and any(len(w) >= 4 and (w.startswith(word) or word.startswith(w)) for w in words)
    )


def _cited(term: Term, measurements: MeasurementSet | None) -> Iterator[tuple[str, str, Result, str]]:
    """(experiment, result name, its value on the first node that has it, that node) of each
    value the term may cite."""
    for citation in term.measurements:
        record = measurements.get(citation.experiment) if measurements else None
        for name in record.result_names() if record else []:
            assert record is not None
            run, result = next(((r, v) for r, v in record.values(name) if v is not None), (None, None))
            if run is not None and result is not None:
                yield citation.experiment, name, result, run.node
