"""Numbers about a GPU typed by hand into author prose: each one is wrong on the next GPU.

A number is about a GPU when a GPU unit follows it ('132 SMs', '4.8 TB/s', '64K registers';
a duration or ratio only in a sentence about GPU work) or when it says what a GPU is
('compute capability 9.0', 'an sm_90 GPU'). Code (fenced, indented, inline), the text of
directives, link targets, bare URLs and years ('since 2006') are not prose. Software
versions ('CUDA 12.4', 'driver 580') carry no GPU unit, so they pass. What remains either
becomes a cited measurement or is listed, with a reason, in the reviewed facts file
(terms/_facts.yml); cudagloss.check.typed_hints says which, in each finding's hint.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, replace

from cudagloss.check.reader_view import DROP, folded, shown_entity
from cudagloss.errors import Diagnostic, did_you_mean
from cudagloss.model.corpus import Fact, Facts
from cudagloss.text.charrefs import unescape
from cudagloss.text.markdown import CODE_SPAN, blocks, protected_spans

_UNITS: list[tuple[str, str, str]] = [
    # (pattern, unit as compared, family); word units ignore case, symbols do not.
    (r"(?i:streaming[ \t]+multiprocessors?)", "SM", "SM"),
    (r"SMs?", "SM", "SM"),
    (r"(?i:threads?)", "thread", "thread"),
    (r"(?i:(?:thread[ \t]+)?blocks?|CTAs?)", "block", "block"),
    (r"(?i:warps?)", "warp", "warp"),
    (r"(?i:registers?)", "register", "register"),
    (r"(?i:lanes?)", "lane", "lane"),
    (r"(?i:(?:CUDA[ \t]+|tensor[ \t]+)?cores?)", "core", "core"),
    (r"(?i:(?:clock[ \t]+)?cycles?|clocks?)", "cycle", "cycle"),
    (r"[KMGT]i?B/s|[KMGT]bps", "bandwidth", "bandwidth"),
    (r"[GTP]?FLOP/s|[GTP]?FLOPS|TOPS|(?i:[gtp]eraflops|[gtp]igaflops)", "FLOP/s", "throughput"),
    (r"(?i:bytes?)|B", "B", "size"),
    *((rf"{p}i?B", f"{p}B", "size") for p in "KMGT"),
    (r"kB", "KB", "size"),
    (r"[kMG]Hz", "Hz", "frequency"),
    (r"(?i:watts?)|W", "W", "power"),
    (r"ns|(?i:nanoseconds?|nsecs?)", "ns", "time"),
    (r"[µμu]s|(?i:microseconds?|[µμu]secs?)", "µs", "time"),
    (r"ms|(?i:milliseconds?|msecs?)", "ms", "time"),
    (r"s|(?i:seconds?|secs?)", "s", "time"),
    (r"×|(?i:x(?=[ \t]+(?:faster|slower))|times[ \t]+(?:faster|slower))", "×", "ratio"),
]
_UNIT = "|".join(f"(?P<x{i}>{p})" for i, (p, _, _) in enumerate(_UNITS))
_NUMBER = r"\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:[.,]\d+)?(?:[eE][+-]?\d+)?"
_SEP = r"[*_]{0,3}(?:-|[ \t\u00a0\u202f\u2009]+(?:\n[ \t]*)?|\n[ \t]*)?[*_]{0,3}"
_QUALIFIER = r"(?:(?i:resident|active|concurrent|running)[ \t]+)?"
_TYPED = re.compile(
    rf"(?<![\w.,/#\\$])(?P<number>(?:{_NUMBER})(?:[ \t]*(?:–|—|-|to)[ \t]*(?:{_NUMBER}))?)"
    rf"(?P<mult>[kKM](?![A-Za-z]))?(?P<sep>{_SEP}){_QUALIFIER}(?:{_UNIT})(?![\w/])"
)
_CAPABILITY = re.compile(
    r"(?i:compute[ \t\n]+capabilit(?:y|ies))(?:[ \t\n]+(?:of|is|was))?[ \t\n]*(?P<number>\d+\.\d+)"
    r"|(?<![\w.])CC[ \t]?(?P<cc>\d+\.\d+)(?!\w|\.\d)"
)
_ARCH_NAME = r"(?<![\w.])(?:sm_?\d{2,3}[a-z]?|SM[ _]?\d{2,3}[a-z]?|SM[ \t]\d\.\d)(?!\w|\.\d)"
_ARCH = re.compile(
    rf"\b(?:is|was|are|were)[ \t]+(?:an?[ \t]+)?(?P<a>{_ARCH_NAME})"
    rf"|(?P<b>{_ARCH_NAME})(?=[ \t\n]+(?i:GPU|device|card|chip)s?\b)"
    rf"|(?P<c>{_ARCH_NAME})(?=[ \t]+(?:is|was)[ \t]+(?:the|our|this|that)[ \t]+(?:[A-Z]|(?i:GPU|device|card|chip)\b))"
)
"""A target name that says what a GPU is ('an sm_90 GPU', 'the H200 is SM 90', 'sm_90 is the
H200'); 'compile for sm_90' names a target, and `sm_90` in code is a name too."""
_YEAR_BEFORE = re.compile(
    r"(?i:\b(?:in|since|until|till|by|before|after|from|of|during|early|late|mid|circa"
    r"|january|february|march|april|may|june|july|august|september|october|november|december))[ \t]+$"
)
_DIRECTIVE = re.compile(r"(?<!\\)\{\{[^\n]*?\}\}")
_GPU_WORK = re.compile(
    r"(?i:\b(?:GPUs?|kernels?|launch\w*|load\w*|driver|JIT|compil\w*|CUDA|NVRTC|PTX|SASS|cubins?|fatbin\w*"
    r"|modules?|contexts?|devices?|warps?|threads?|blocks?|grids?|SMs?|memory|cop(?:y|ies|ied)|transfers?"
    r"|occupancy|cache[sd]?|init\w*|start-?up|nvcc)\b)|\bcu[A-Z]"
)
SENTENCE_END = re.compile(r"[.!?;](?=\s)|\n[ \t]*\n")
_CONTEXTUAL = {"time", "ratio"}
"""Families that count only in a sentence about GPU work: '5 μs' of a stopwatch is no GPU's."""
NOUNS = {"SM", "thread", "block", "warp", "register", "lane", "core", "cycle", "compute capability"}
"""Families named by a noun that a result's name may hold ('sm_count' for '132 SMs')."""
FUNCTION_WORDS = frozenset({
    "a", "an", "the", "and", "or", "but", "nor", "of", "in", "on", "at", "to", "by", "for", "from", "with",
    "into", "onto", "per", "than", "as", "so", "if", "each", "every", "is", "are", "was", "were", "be",
    "been", "has", "have", "had", "do", "does", "did", "can", "could", "may", "might", "will", "would",
    "shall", "should", "its", "it", "this", "that", "these", "those", "which", "who", "whom",
})  # fmt: skip
"""Words that follow a count without being a noun it counts ('32 thread per warp')."""
_FOLLOWER = re.compile(r"(?:[ \t]+|[ \t]*\n[ \t]*)([A-Za-z](?:[A-Za-z-]*[A-Za-z])?)")
_SPACED_ONLY = {"s", "W"}
"""Units of one letter that stick to numbers in other senses ('1990s', 'rev 2W'): they
count only with a space between."""


@dataclass(frozen=True)
class TypedNumber:
    """One number about a GPU in a field's text: offsets, the words as quoted, what it counts."""

    start: int
    end: int
    text: str
    number: str
    unit: str
    family: str
    counts: str = ""
    """The noun the number counts where its unit only qualifies it ('schedulers' of '4 warp
    schedulers'), folded to lower case; '' where it counts its unit."""

    @property
    def names_architecture(self) -> bool:
        return self.family == "architecture"


def find(text: str) -> list[TypedNumber]:
    """Every number about a GPU in the prose of a Markdown field, in order."""
    return list(_find(text))


@functools.lru_cache(maxsize=1 << 14)
def _find(text: str) -> tuple[TypedNumber, ...]:
    """find, remembered: every build (and every rebuild under `make serve`) checks every
    field, and scanning them was half of loading 1,000 unchanged terms."""
    view, where = folded(prose(text))  # as the reader reads it; where maps back to text
    about = _about_gpu_work(text) if _TYPED.search(view) else None
    found = [f for m in _TYPED.finditer(view) if about and (f := _typed(text, view, where, about, m))]
    for m in _CAPABILITY.finditer(view):
        number = m.group("number") or m.group("cc")
        found.append(_at(text, where[m.start()], where[m.end() - 1] + 1, number, "compute capability"))
    for m in _ARCH.finditer(view):
        group = next(g for g in "abc" if m.group(g))
        found.append(_at(text, where[m.start(group)], where[m.end(group) - 1] + 1, "", "architecture"))
    found.sort(key=lambda f: (f.start, -f.end))
    kept: list[TypedNumber] = []
    for f in found:  # 'compute capability 9.0 SMs' is one finding, not two
        if not kept or f.start >= kept[-1].end:
            kept.append(f)
    return tuple(kept)


def _about_gpu_work(text: str) -> Callable[[int], bool]:
    """Whether the sentence at an offset of text is about GPU work (a sentence ends at a full
    stop and a space, or a blank line); each sentence is read once."""
    starts = [0, *(m.end() for m in SENTENCE_END.finditer(text))]
    about = [bool(_GPU_WORK.search(text, a, b)) for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    return lambda offset: about[bisect.bisect_right(starts, offset) - 1]


def _typed(
    text: str, view: str, where: Sequence[int], about_gpu_work: Callable[[int], bool], m: re.Match[str]
) -> TypedNumber | None:
    """m (in view, offsets in text by where) as a finding, or None: a one-letter unit stuck to
    its number, a duration or ratio in a sentence about no GPU work, or a year."""
    _, unit, family = _UNITS[_which(m)]
    if unit in _SPACED_ONLY and not m.group("sep").strip("*_-"):
        return None
    start, end = where[m.start()], where[m.end() - 1] + 1
    if family in _CONTEXTUAL and not about_gpu_work(start):
        return None
    number = m.group("number")
    if re.fullmatch(r"(19[89]\d|20\d\d)", number) and _YEAR_BEFORE.search(view, max(m.start() - 16, 0), m.start()):
        return None
    counted = _counted(view, m, family)
    if counted is not None:
        end = where[counted.end() - 1] + 1
    found = _at(text, start, end, number + (m.group("mult") or ""), unit, family)
    return replace(found, counts=counted.group(1).casefold()) if counted is not None else found


def _counted(view: str, m: re.Match[str], family: str) -> re.Match[str] | None:
    """The word after a count unit that the number counts instead: after a number other than
    one, a unit in the singular and a space ('4 warp schedulers'); a hyphen makes the unit an
    adjective of what follows ('a 32-thread warp' counts threads)."""
    sep = m.group("sep")
    if family not in NOUNS or m.group("number") == "1" or "-" in sep or not sep.strip("*_"):
        return None
    if m.group(0).endswith(("s", "S")):
        return None
    follows = _FOLLOWER.match(view, m.end())
    return follows if follows is not None and follows.group(1).casefold() not in FUNCTION_WORDS else None


def _at(text: str, start: int, end: int, number: str, unit: str, family: str = "") -> TypedNumber:
    quoted = " ".join(unescape(text[start:end]).replace("*", "").split())
    return TypedNumber(start, end, quoted, number, unit, family or unit)


def _which(m: re.Match[str]) -> int:
    """The index in _UNITS of the unit that m matched."""
    return next(int(k[1:]) for k, v in m.groupdict().items() if k[0] == "x" and v is not None)


def prose(text: str) -> str:
    """text with everything that is not prose blanked, offsets kept: code blocks and spans,
    directives, link targets, URLs and entities ('&nbsp;' becomes a space)."""
    out: list[str] = []
    for block in blocks(text):
        chars = list(block.text)
        for start, end, fill in _not_prose(block.text) if block.kind in ("prose", "heading") else []:
            shown = fill if len(fill) == end - start else fill * (end - start)
            chars[start:end] = [c if c == "\n" else f for c, f in zip(chars[start:end], shown, strict=True)]
        out.append("".join(chars) if block.kind in ("prose", "heading") else _BLANK.sub("\x00", block.text))
    return "".join(out)


_BLANK = re.compile(r"[^\n]")


def _not_prose(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, what to fill it with) of each inline part of a prose block that is not prose."""
    for m in (*CODE_SPAN.finditer(text), *_DIRECTIVE.finditer(text)):
        yield m.start(), m.end(), "\x00"
    for start, end in protected_spans(text):
        if text[start] in "[!":  # a link: its text is prose (read without its brackets), its target is not
            label_end = _label_end(text, start)
            yield start, text.index("[", start) + 1, DROP
            yield label_end - 1, label_end, DROP
            yield label_end, end, "\x00"
        elif text[start] == "&":  # an entity reads as what it shows ('&#49;' is 1, '&nbsp;' a space)
            shown = unescape(text[start:end])
            yield start, end, " " if shown.isspace() else (shown_entity(text[start:end]) or "\x00")
        elif text[start] != "`":
            yield start, end, "\x00"


def _label_end(text: str, start: int) -> int:
    """Where the bracketed text of the link at start ends (after its ']')."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def allowed(found: TypedNumber, slug: str, facts: list[Fact]) -> int | None:
    """The index of the fact that lets term slug type found, or None."""
    key = found.text.casefold()
    for i, fact in enumerate(facts):
        if " ".join(fact.text.split()).casefold() == key and (not fact.terms or slug in fact.terms):
            return i
    return None


def message(where: str, found: TypedNumber) -> str:
    if found.names_architecture:
        return f"{where}: '{found.text}' says what a GPU is, typed by hand"
    return f"{where}: '{found.text}' is a number about a GPU typed by hand"


def unit_of(unit: str) -> tuple[str, str] | None:
    """A result's unit as (unit as compared, family), when it is one of the units above."""
    m = re.fullmatch(_UNIT, unit)
    if not m:
        return None
    _, canonical, family = _UNITS[_which(m)]
    return canonical, family


def equal(typed: str, value: object) -> bool:
    """Whether value, rounded as typed, is the typed number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not re.fullmatch(_NUMBER, typed):
        return False
    decimals = len(typed.partition(".")[2])
    return abs(float(typed.replace(",", "")) - value) <= 0.5 * 10.0**-decimals + 1e-12


def fact_mistakes(facts: Facts, used: set[int], slugs: Collection[str]) -> Iterator[Diagnostic]:
    """What is wrong with the facts file's entries: words the check would not quote, an
    empty reason, an unknown term, an entry listed twice or allowing nothing."""
    seen: dict[str, int] = {}
    for i, fact in enumerate(facts.entries):
        where = f"facts[{i}]"

        def at(field: str, problem: str, fix: str, where: str = where) -> Diagnostic:
            return Diagnostic(facts.path, *facts.positions.at(f"{where}.{field}"), f"{where}.{field}: {problem}", fix)

        key = " ".join(fact.text.split()).casefold()
        found = find(fact.text)
        if len(found) != 1 or found[0].text.casefold() != key:
            yield at("text", f"'{fact.text}' is not a number about a GPU", "quote the words the check reports")
        elif key in seen:
            yield at("text", f"'{fact.text}' is listed twice (also facts[{seen[key]}])", "keep one entry")
        elif i not in used:
            yield at("text", f"'{fact.text}' is typed by no term it names", "remove the entry, or fix its terms")
        seen.setdefault(key, i)
        if not fact.reason.strip():
            yield at("reason", "is empty", "say why no GPU measures it, e.g. what the programming model defines")
        for j, slug in enumerate(fact.terms):
            if slug not in slugs:
                yield at(f"terms[{j}]", f"no term '{slug}'{did_you_mean(slug, slugs)}", "list term slugs")
