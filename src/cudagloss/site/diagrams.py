"""What `{{ diagram("id") }}` becomes: the term's SVG file from diagrams/, its measured labels
filled in from the measurement files, through the page sanitiser, in a figure with its text
alternative as the SVG's title and its caption under it.

The file is an author's, so it is treated as hostile: read with a size bound, its XML
declaration and comments dropped, every `{{ measured("experiment", "result") }}` in it replaced
by that value as the rest of the page words it (HTML-escaped, linked to its row), and the whole
passed through escape.clean_html, whose SVG allowlist is cudagloss.text.svg's (the check stage
has already refused a file the sanitiser would change). A diagram with a dark variant is drawn
twice, and the stylesheet shows the one that matches the palette.
"""

from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path

from cudagloss.model.chart_spec import Diagram
from cudagloss.model.display import one_number
from cudagloss.model.measurements import CitationError, MeasurementSet, resolve
from cudagloss.model.term import Term
from cudagloss.site import escape
from cudagloss.site.charts import ChartView, published_href
from cudagloss.text.svg import MEASURED

SIZE_MAX = 256 * 1024
"""Bytes a diagram file may hold: a detailed hand-drawn diagram is about 10 KiB."""
_PROLOGUE = re.compile(r"<\?xml[^>]*\?>|<!--.*?-->", re.DOTALL)
_ROOT = re.compile(r"<svg\b[^>]*>")


def read_svg(root: Path, file: str) -> str:
    """A diagram file's text; CitationError when it cannot be read or is too large."""
    path = root / file
    try:
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        data = None
    if data is None:
        raise CitationError(f"diagram file '{file}' cannot be read", "add it under diagrams/ (a plain file)")
    if len(data) > SIZE_MAX:
        raise CitationError(f"'{file}' is {len(data):,} bytes; at most {SIZE_MAX:,}", "simplify the drawing")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CitationError(f"'{file}' is not UTF-8 text", "save it as UTF-8") from None


def files_key(root: Path, term: Term) -> tuple[str, ...]:
    """A digest of every diagram file the term names, so a page is drawn again when one changes."""
    out = []
    for d in term.diagrams:
        for file in filter(None, (d.file, d.dark)):
            try:
                out.append(hashlib.sha256((root / file).read_bytes()).hexdigest())
            except OSError:
                out.append("")
    return tuple(out)


def _label(term: Term, measurements: MeasurementSet | None, page_uri: str, match: re.Match[str]) -> str:
    experiment, name = match.group(1), match.group(2)
    record = resolve(term, measurements, experiment, name)
    values = record.values(name)
    shown = one_number([(run.gpu, result) for run, result in values])
    href = published_href(page_uri, experiment, values[shown.first][0].node, name)
    return f'<a href="{html.escape(href)}">{html.escape(shown.text)}</a>'


def _drawing(text: str, alt: str, term: Term, measurements: MeasurementSet | None, page_uri: str) -> str:
    text = _PROLOGUE.sub("", text)
    text = MEASURED.sub(lambda m: _label(term, measurements, page_uri, m), text)
    text = escape.clean_html(text).strip()
    title = f"<title>{escape.html_text(alt)}</title>"
    return _ROOT.sub(lambda m: m.group(0) + title, text, count=1)


def diagram_view(
    root: Path, term: Term, measurements: MeasurementSet | None, page_uri: str, diagram: Diagram
) -> ChartView:
    """The diagram for one page (the figure) and for the exports (its caption and text alternative)."""
    light = _drawing(read_svg(root, diagram.file), diagram.alt, term, measurements, page_uri)
    if diagram.dark:
        dark = _drawing(read_svg(root, diagram.dark), diagram.alt, term, measurements, page_uri)
        light = f'<div class="cg-diagram-light">{light}</div><div class="cg-diagram-dark">{dark}</div>'
    caption = f"<figcaption>{escape.html_text(diagram.caption)}</figcaption>" if diagram.caption else ""
    page = f'<figure class="cg-diagram" id="diagram-{escape.ident(diagram.id)}">{light}{caption}</figure>'
    said = f"{diagram.caption} " if diagram.caption else ""
    return ChartView(page.replace("\n", " "), f"Diagram: {escape.text(said + diagram.alt)}")
