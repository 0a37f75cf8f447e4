"""Link the first mention of each other term in a body to that term's page.

Names, aliases and plurals match regardless of case; all-capital forms ('PTX', 'SASS',
'JIT') match case-sensitively so that ordinary words are not linked by accident. Code, headings, link
text and URLs are left alone. The link's title is the target's definition, which Material
shows as a tooltip.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from cudagloss.model.urls import relative_href, term_src_uri
from cudagloss.site import escape
from cudagloss.text.markdown import blocks, plain_text, protected_spans


@dataclass(frozen=True)
class LinkTarget:
    slug: str
    src_uri: str
    definition: str
    forms: tuple[str, ...]
    """Case-insensitive surface forms."""
    exact_forms: tuple[str, ...]
    """Case-sensitive surface forms (acronyms)."""


def _is_acronym(form: str) -> bool:
    """'PTX', 'SASS', 'JIT': matched case-sensitively so that ordinary words are not linked."""
    return form.isupper() and " " not in form.strip()


def link_target(slug: str, definition: str, surface_forms: Iterable[str]) -> LinkTarget:
    """A term as the linker sees it: its page, its definition (the tooltip) and its forms,
    acronyms apart."""
    forms = tuple(surface_forms)
    return LinkTarget(
        slug=slug,
        src_uri=term_src_uri(slug),
        definition=definition,
        forms=tuple(f for f in forms if f.strip() and not _is_acronym(f)),
        exact_forms=tuple(f for f in forms if _is_acronym(f)),
    )


_LEAD = re.compile(r"\w+|[^\w\s]")
_STARTS = re.compile(r"(?<!\w)(?:\w+|[^\w\s])")
_WORD_CHAR = re.compile(r"\w")


class AutoLinker:
    """Built once per corpus; `link(markdown, page_slug, page_src_uri)` per body.

    One pass over the word starts of the text, with a few set lookups at each (one per
    distinct length of the forms that start with that word), costs nearly the same for 10
    terms or 10,000. (An alternation regex of every form, which this replaced, grew
    with the corpus: it was a fifth of a 1,000-term build.) The result is the same: at each
    word start the longest form that ends at a word boundary wins, scanning left to right.
    """

    def __init__(self, targets: Iterable[LinkTarget]) -> None:
        self._targets = {t.slug: t for t in targets}
        self._by_form: dict[str, str] = {}
        self._by_exact: dict[str, str] = {}
        self._titles: dict[str, str] = {}
        # The forms by the word (or symbol) they start with: lower-cased for the
        # case-insensitive ones. Only the lengths are needed to find where a match ends,
        # as the matched text itself picks the target (_slug_for).
        self._folded: dict[str, set[str]] = {}
        self._exact: dict[str, set[str]] = {}
        self._lengths: dict[str, tuple[int, ...]] = {}
        for t in self._targets.values():
            for form in t.forms:
                lead = _LEAD.match(form)
                if lead:
                    self._by_form[form.casefold()] = t.slug
                    self._folded.setdefault(lead.group(0).lower(), set()).add(form.lower())
            for form in t.exact_forms:
                lead = _LEAD.match(form)
                if lead:
                    self._by_exact[form] = t.slug
                    self._exact.setdefault(lead.group(0), set()).add(form)

    @property
    def targets(self) -> tuple[LinkTarget, ...]:
        return tuple(self._targets.values())

    def _slug_for(self, text: str) -> str | None:
        return self._by_exact.get(text) or self._by_form.get(text.casefold())

    def _title(self, slug: str) -> str:
        title = self._titles.get(slug)
        if title is None:
            title = self._titles[slug] = escape.link_title(plain_text(self._targets[slug].definition))
        return title

    def _lengths_for(self, lead: str) -> tuple[int, ...]:
        """Lengths of the forms that can start with this word, longest first (memoised)."""
        lengths = self._lengths.get(lead)
        if lengths is None:
            forms = self._folded.get(lead.lower(), set()) | self._exact.get(lead, set())
            lengths = self._lengths[lead] = tuple(sorted({len(f) for f in forms}, reverse=True))
        return lengths

    def _match_end(self, text: str, pos: int, lead: str) -> int:
        """End of the longest form starting at pos and ending at a word boundary, or -1."""
        folded = self._folded.get(lead.lower(), ())
        exact = self._exact.get(lead, ())
        for length in self._lengths_for(lead):
            end = pos + length
            if end > len(text) or (end < len(text) and _WORD_CHAR.match(text, end)):
                continue
            segment = text[pos:end]
            if segment in exact or segment.lower() in folded:
                return end
        return -1

    def _link_prose(self, text: str, done: set[str], linked: set[str], page_src_uri: str) -> str:
        out: list[str] = []
        pos = 0
        for m in _STARTS.finditer(text):
            start = m.start()
            lead = m.group(0)
            if start < pos or (lead not in self._exact and lead.lower() not in self._folded):
                continue
            end = self._match_end(text, start, lead)
            if end < 0:
                continue
            found = text[start:end]
            slug = self._slug_for(found)
            if slug is not None and slug not in done:
                done.add(slug)
                linked.add(slug)
                href = relative_href(self._targets[slug].src_uri, page_src_uri)
                out.append(text[pos:start])
                out.append(f'[{found}]({href} "{self._title(slug)}")')
            else:
                out.append(text[pos:end])
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def link(
        self, markdown: str, page_slug: str, page_src_uri: str, already: Iterable[str] = ()
    ) -> tuple[str, set[str]]:
        """Return the linked Markdown and the slugs it now links to (auto links only)."""
        if not self._folded and not self._exact:
            return markdown, set()
        done = set(already) | {page_slug}
        linked: set[str] = set()
        out: list[str] = []
        for block in blocks(markdown):
            if block.kind != "prose":
                out.append(block.text)
                continue
            spans = protected_spans(block.text)
            out.append(_outside(block.text, spans, lambda s: self._link_prose(s, done, linked, page_src_uri)))
        return "".join(out), linked


def _outside(text: str, spans: list[tuple[int, int]], fn: Callable[[str], str]) -> str:
    """Apply fn to the parts of text outside spans, in order."""
    out, pos = [], 0
    for start, end in spans:
        out.append(fn(text[pos:start]))
        out.append(text[start:end])
        pos = end
    out.append(fn(text[pos:]))
    return "".join(out)
