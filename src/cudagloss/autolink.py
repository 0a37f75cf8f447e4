"""Link the first mention of each other term in a body to that term's page.

Names, aliases and plurals match regardless of case; all-capital forms ('PTX', 'SASS',
'JIT') match case-sensitively so that ordinary words are not linked by accident. Code, headings, link
text and URLs are left alone. The link's title is the target's definition, which Material
shows as a tooltip.
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .markdown_text import blocks, plain_text, protected_spans


@dataclass(frozen=True)
class LinkTarget:
    slug: str
    src_uri: str
    definition: str
    forms: tuple[str, ...]
    """Case-insensitive surface forms."""
    exact_forms: tuple[str, ...]
    """Case-sensitive surface forms (acronyms)."""


class AutoLinker:
    """Built once per corpus; `link(markdown, page_slug, page_src_uri)` per body."""

    def __init__(self, targets: Iterable[LinkTarget]) -> None:
        self._targets = {t.slug: t for t in targets}
        self._by_form: dict[str, str] = {}
        self._by_exact: dict[str, str] = {}
        alternatives: list[tuple[str, str]] = []
        for t in self._targets.values():
            for form in t.forms:
                self._by_form[form.casefold()] = t.slug
                alternatives.append((form, f"(?i:{re.escape(form)})"))
            for form in t.exact_forms:
                self._by_exact[form] = t.slug
                alternatives.append((form, re.escape(form)))
        alternatives.sort(key=lambda a: -len(a[0]))  # longest first: 'JIT cache' before 'JIT'
        self._pattern = (
            re.compile(r"(?<!\w)(?:" + "|".join(a for _, a in alternatives) + r")(?!\w)") if alternatives else None
        )

    def _slug_for(self, text: str) -> str | None:
        return self._by_exact.get(text) or self._by_form.get(text.casefold())

    def link(
        self, markdown: str, page_slug: str, page_src_uri: str, already: Iterable[str] = ()
    ) -> tuple[str, set[str]]:
        """Return the linked Markdown and the slugs it now links to (auto links only)."""
        if self._pattern is None:
            return markdown, set()
        done = set(already) | {page_slug}
        linked: set[str] = set()
        here = posixpath.dirname(page_src_uri)

        def replace(m: re.Match[str]) -> str:
            slug = self._slug_for(m.group(0))
            if slug is None or slug in done:
                return m.group(0)
            done.add(slug)
            linked.add(slug)
            target = self._targets[slug]
            href = posixpath.relpath(target.src_uri, here or ".")
            title = html.escape(plain_text(target.definition), quote=True)
            return f'[{m.group(0)}]({href} "{title}")'

        out: list[str] = []
        for block in blocks(markdown):
            if block.kind != "prose":
                out.append(block.text)
                continue
            out.append(_outside(block.text, protected_spans(block.text), lambda s: self._pattern.sub(replace, s)))  # type: ignore[union-attr]
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
