"""Citing in a body: what `{{ measured('experiment', 'result') }}` and `{{ cite('source-id') }}` become.

A value on a page is never typed by an author: the body names it, and it is looked up in
the committed measurement files and shown with a link to the row of the measurement page
it came from (node, GPU and date in its hover text). A value that does not exist is a
mistake reported with the command that would produce it, not an empty string. A source is
cited as the seed page cites one: its title, linked, and the day the link checker last found
it, in parentheses.
"""

from __future__ import annotations

from markupsafe import Markup

from cudagloss.model.measurement import Result
from cudagloss.model.measurements import MeasurementSet, NodeRun, format_value, resolve
from cudagloss.model.term import PENDING, Source, Term
from cudagloss.model.urls import measurement_src_uri, relative_href, result_anchor
from cudagloss.site import escape


class ValueCiter:
    """The `measured` function of one term's body; it remembers what the body cited."""

    def __init__(self, term: Term, measurements: MeasurementSet | None, page_uri: str) -> None:
        self.term = term
        self.measurements = measurements
        self.page_uri = page_uri
        self.used: list[tuple[str, str]] = []

    def href(self, experiment: str, anchor: str = "") -> str:
        base = relative_href(measurement_src_uri(experiment), self.page_uri)
        return f"{base}#{anchor}" if anchor else base

    def __call__(self, experiment: str, name: str) -> Markup:
        record = resolve(self.term, self.measurements, experiment, name)
        if (experiment, name) not in self.used:
            self.used.append((experiment, name))
        values = record.values(name)
        parts = [self.link(experiment, run, result, name) for run, result in values]
        if len(values) > 1:
            parts = [
                part + Markup(" (") + escape.text(run.gpu) + Markup(")")
                for part, (run, _) in zip(parts, values, strict=True)
            ]
        return Markup(" / ").join(parts)

    def link(self, experiment: str, run: NodeRun, result: Result | None, name: str) -> Markup:
        """One node's value as a Markdown link to its row, with where and when in its title;
        every string in it comes from measurement JSON, so each passes the escaping rule."""
        text = format_value(result)
        shown = escape.code(text) if result is not None and isinstance(result.value, str) else escape.text(text)
        title = f"{run.gpu} ({run.node}), measured {run.recorded_on}"
        if result is not None and result.samples:
            title += f", median of {len(result.samples)} runs"
        if run.stale:
            title += ", stale: the experiment changed since"
        href = escape.ident(result_anchor(run.node, name))
        return Markup(f'[{shown}]({self.href(experiment, href)} "{escape.link_title(title)}")')


# Characters a Markdown link destination would act on (a parenthesis ends it, a backtick or a
# bracket starts other syntax first); percent-encoded, the address is the same to a server.
_DESTINATION = str.maketrans({c: f"%{ord(c):02X}" for c in "()[]`"})


def source_citation(source: Source) -> Markup:
    """`(title, checked YYYY-MM-DD)` with the title linked to the source, or 'not yet
    checked'; the title is plain text and the URL passes escape.url (no link where it refuses)."""
    title = escape.text(source.title)
    url = escape.url(source.url)
    shown = Markup(f"[{title}]({str(url).translate(_DESTINATION)})") if url is not None else title
    checked = "not yet checked" if source.checked_on == PENDING else f"checked {source.checked_on}"
    return Markup("(") + shown + Markup(", ") + escape.text(checked) + Markup(")")
