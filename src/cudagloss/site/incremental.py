"""Which generated pages changed since the last completed build in this process.

`mkdocs serve --dirty` rebuilds only the pages whose file says it is modified, but a
generated file always says so, so by itself every page is rebuilt after every edit. The
MkDocs adapter asks this module instead: a page is modified when its Markdown, JSON-LD or edit link
differs from the last completed build, or when anything every page shows has changed (the
navigation, the set of pages, the site configuration). Nothing here imports MkDocs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from cudagloss.site.output import SiteContent

PageInputs = tuple[bool, str | None, str, str]


def page_fingerprints(content: SiteContent) -> dict[str, PageInputs]:
    """What each generated page's HTML is made from, by its source URI (the strings
    themselves, not copies: comparing equal strings is as cheap as comparing digests)."""
    return {p.src_uri: (p.in_nav, p.edit_uri, p.markdown, p.json_ld) for p in content.pages}


def shared_fingerprint(content: SiteContent, config_text: str) -> str:
    """What every page shows: the navigation, which pages and files exist, the configuration."""
    pages = sorted(p.src_uri for p in content.pages)
    files = sorted(f.src_uri for f in content.files)
    return hashlib.sha256(repr((content.nav, pages, files, config_text)).encode()).hexdigest()


@dataclass
class BuildMemory:
    shared: str | None = None
    pages: dict[str, PageInputs] = field(default_factory=dict)
    _pending: tuple[str, dict[str, PageInputs]] | None = None

    def changed(self, shared: str, pages: dict[str, PageInputs]) -> set[str]:
        """Source URIs whose output may differ from the last completed build (all of them
        when there was none, or when what every page shows has changed)."""
        self._pending = (shared, pages)
        if shared != self.shared:
            return set(pages)
        return {uri for uri, fingerprint in pages.items() if self.pages.get(uri) != fingerprint}

    def completed(self) -> None:
        """The build that asked last has written its pages: compare the next one with it."""
        if self._pending is not None:
            self.shared, self.pages = self._pending
            self._pending = None

    def forget(self) -> None:
        """A build failed part way: the next one rebuilds every page."""
        self.shared, self.pages, self._pending = None, {}, None
