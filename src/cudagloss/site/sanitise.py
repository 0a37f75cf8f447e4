"""The page sanitiser as a Python-Markdown extension, so that every builder runs it.

MkDocs and Zensical both convert pages with Python-Markdown and load the extensions that
`markdown_extensions:` names; listing `cudagloss.site.sanitise` there puts every page's
HTML through `escape.clean_html` (the allowlist) as the last step of its conversion, after
the raw-HTML and code-block placeholders are restored. The live preview's MkDocs hooks and
the plain tree of `cudagloss render` therefore sanitise in one place, the same way.
"""

from __future__ import annotations

from typing import Any

from markdown import Extension, Markdown
from markdown.postprocessors import Postprocessor

from cudagloss.site.escape import clean_html

NAME = "cudagloss.site.sanitise"
"""How a configuration names this extension."""
_PRIORITY = 1
"""Postprocessors run from the highest priority down; raw HTML is restored at 30, so 1 is after it."""


class _Sanitise(Postprocessor):
    def run(self, text: str) -> str:
        return clean_html(text)


class SanitiseExtension(Extension):
    """Registers the sanitiser as the last postprocessor of the document."""

    def extendMarkdown(self, md: Markdown) -> None:
        md.postprocessors.register(_Sanitise(md), "cudagloss_sanitise", _PRIORITY)


def makeExtension(**kwargs: Any) -> SanitiseExtension:
    return SanitiseExtension(**kwargs)
