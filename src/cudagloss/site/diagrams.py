"""What `{{ diagram("id") }}` becomes: the term's SVG file from diagrams/, its measured labels
filled in from the measurement files, through the page sanitiser, in a figure with its text
alternative as the SVG's title and its caption under it.

The file is an author's, so it is treated as hostile: read with a size bound, its XML
declaration and comments dropped, every `{{ measured("experiment", "result") }}` in it replaced
by that value as the rest of the page words it (HTML-escaped, linked to a list of the values
under the figure, each linked to its row), and the whole
passed through escape.clean_html, whose SVG allowlist is cudagloss.text.svg's (the check stage
has already refused a file the sanitiser would change). A diagram with a dark variant is drawn
twice, and the stylesheet shows the one that matches the palette.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Callable
from pathlib import Path

from cudagloss.files.inside import first_link
from cudagloss.model.chart_spec import Diagram
from cudagloss.model.display import one_number
from cudagloss.model.measurements import CitationError, MeasurementSet, resolve
from cudagloss.model.term import Term
from cudagloss.site import escape
from cudagloss.site.charts import ChartView, row_id
from cudagloss.text.svg import MEASURED

RowHref = Callable[[str, str, str], str]
"""(experiment, node, result) -> a Markdown link's target: that result's row on its measurement page."""
SIZE_MAX = 256 * 1024
"""Bytes a diagram file may hold: a detailed hand-drawn diagram is about 10 KiB."""
_PROLOGUE = re.compile(r"<\?xml[^>]*\?>|<!--.*?-->", re.DOTALL)
_ROOT = re.compile(r"<svg\b[^>]*>")


def read_svg(root: Path, file: str) -> str:
    """A diagram file's text; CitationError when it cannot be read or is too large."""
    path = root / file
    try:
        data = (
            path.read_bytes() if first_link(path, root) is None and path.is_file() else None
        )  # never stat through a link
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
                if first_link(root / file, root) is not None:  # never read through a committed link
                    raise OSError
                out.append(hashlib.sha256((root / file).read_bytes()).hexdigest())
            except OSError:
                out.append("")
    return tuple(out)


class _Labels:
    """The measured labels of one diagram: each value as its text in the drawing, linked to its
    item in the list under the figure, which links to the value's row (a same-page anchor in the
    raw HTML, a Markdown link in the list: see site.charts.row_id)."""

    def __init__(self, term: Term, measurements: MeasurementSet | None, diagram: Diagram, row: RowHref) -> None:
        self.term, self.measurements, self.diagram, self.row = term, measurements, diagram, row
        self.items: list[str] = []
        self.seen: dict[tuple[str, str], str] = {}

    def __call__(self, match: re.Match[str]) -> str:
        experiment, name = match.group(1), match.group(2)
        record = resolve(self.term, self.measurements, experiment, name)
        values = record.values(name)
        shown = one_number([(run.gpu, result) for run, result in values])
        if (experiment, name) not in self.seen:
            anchor = row_id(f"diagram-{self.diagram.id}", str(len(self.items)))
            self.seen[(experiment, name)] = anchor
            node, result = values[shown.first]
            what = result.description if result is not None and result.description else f"{experiment}.{name}"
            link = f"[{escape.text(shown.text)}]({self.row(experiment, node.node, name)})"
            self.items.append(f'<span id="{anchor}"></span>{escape.text(what)}: {link}')
        return f'<a href="#{self.seen[(experiment, name)]}">{html.escape(shown.text)}</a>'


def _drawing(text: str, alt: str, labels: _Labels) -> str:
    text = _PROLOGUE.sub("", text)
    text = MEASURED.sub(labels, text)
    text = escape.clean_html(text).strip()
    title = f"<title>{escape.html_text(alt)}</title>"
    return _ROOT.sub(lambda m: m.group(0) + title, text, count=1)


def diagram_view(
    root: Path, term: Term, measurements: MeasurementSet | None, diagram: Diagram, row: RowHref
) -> ChartView:
    """The diagram for one page (the figure, and the list of its measured values) and for the
    exports (its caption, text alternative and values); row links a value to its row."""
    labels = _Labels(term, measurements, diagram, row)
    light = _drawing(read_svg(root, diagram.file), diagram.alt, labels)
    if diagram.dark:
        dark = _drawing(read_svg(root, diagram.dark), diagram.alt, labels)
        light = f'<div class="cg-diagram-light">{light}</div><div class="cg-diagram-dark">{dark}</div>'
    caption = f"<figcaption>{escape.html_text(diagram.caption)}</figcaption>" if diagram.caption else ""
    opening = f'<figure class="cg-diagram" id="diagram-{escape.ident(diagram.id)}" data-search-exclude>'
    page = f"{opening}{light}{caption}</figure>"
    page = page.replace("\n", " ")
    said = f"{diagram.caption} " if diagram.caption else ""
    text = f"Diagram: {escape.text(said + diagram.alt)}"
    if labels.items:
        count = len(labels.items)
        block = [f'??? note "The {count} measured value{"s" if count != 1 else ""} in this diagram"', ""]
        page = "\n".join([page, "", *block, *(f"    - {item}" for item in labels.items)])
        plain = [re.sub(r'<span id="[^"]*"></span>', "", item) for item in labels.items]
        text = "\n".join([text, "", *(f"- {item}" for item in plain)])
    return ChartView(page, text)
