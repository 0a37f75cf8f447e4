"""What the site stage hands to MkDocs: generated pages, files copied as they are, and the
navigation. Plain values with no Jinja or MkDocs in them, so the adapter and the serve
caches read them without importing the renderer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class GeneratedPage:
    """One page of the site, as Markdown, with the repository file its content comes from."""

    src_uri: str
    markdown: str
    edit_uri: str | None = None
    in_nav: bool = True
    """False for term pages: the sidebar lists sections, never every term."""
    head: str = ""
    """Ready HTML for the page's <head> (its JSON-LD), kept out of the sanitised body."""


@dataclass(frozen=True)
class GeneratedFile:
    """A file copied into the site as it is (the raw measurement JSON)."""

    src_uri: str
    content: str


@dataclass
class SiteContent:
    """Everything the hooks give MkDocs: the pages and the navigation (sections, not terms)."""

    pages: list[GeneratedPage] = field(default_factory=list)
    nav: list[dict[str, Any]] = field(default_factory=list)
    files: list[GeneratedFile] = field(default_factory=list)
    exports: list[GeneratedFile] = field(default_factory=list)
    """Files written into the built site as they are, outside MkDocs' pages (glossary.md, llms.txt)."""
