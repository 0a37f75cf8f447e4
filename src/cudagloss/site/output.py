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
    json_ld: str = ""
    """The page's schema.org JSON-LD, already safe inside a <script> element (escape.json_ld):
    it travels in the page's front matter and overrides/main.html puts it into <head>, out of
    the sanitised body, whichever builder builds the page."""


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
    """Files published at the site's root as they are (llms.txt, llms-full.txt, glossary.json)."""
