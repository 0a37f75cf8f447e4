"""What the live preview shows while the glossary cannot be built: the diagnostics, in the browser.

Under `make serve` a broken term used to leave the old page in the browser, the error only in
the terminal. Instead the preview builds this: every page it served last time (so the
reader's tab reloads where it was) says the glossary cannot be built and lists each
diagnostic as the terminal does; the next good build replaces them all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cudagloss.errors import Diagnostic
from cudagloss.model.urls import INDEX
from cudagloss.site.output import GeneratedPage, SiteContent

TITLE = "The glossary cannot be built"


def _indented(text: str, by: int) -> str:
    """Text as lines of an indented code block: shown exactly, nothing in it can end the block."""
    pad = " " * by
    return "\n".join(pad + line if line.strip() else "" for line in text.replace("\r", "").split("\n"))


def failed_page(diagnostics: Sequence[Diagnostic]) -> str:
    """The page's Markdown: a failure box with every diagnostic (errors and warnings) as typed in the terminal."""
    errors = sum(1 for d in diagnostics if not d.warning)
    plural = "s" if errors != 1 else ""
    report = "\n\n".join(d.format() for d in diagnostics)
    return (
        f"# {TITLE}\n\n"
        f'!!! failure "{errors} error{plural} in term or measurement files"\n\n'
        "    Fix what is listed and save: this page reloads with the glossary when it builds again.\n\n"
        f"{_indented(report, 8)}\n"
    )


def failed_content(diagnostics: Sequence[Diagnostic], last_pages: Iterable[tuple[str, bool]]) -> SiteContent:
    """Every page of the last good build (src_uri, in_nav), each showing the diagnostics."""
    markdown = failed_page(diagnostics)
    pages = {INDEX: True, **dict(last_pages)}
    return SiteContent(
        pages=[GeneratedPage(uri, markdown, in_nav=in_nav) for uri, in_nav in pages.items()],
        nav=[{"Home": INDEX}],
    )
