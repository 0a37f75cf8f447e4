"""Citing measured values: what `{{ measured('experiment', 'result') }}` in a body becomes.

A value on a page is never typed by an author: the body names it, and it is looked up in
the committed measurement files and shown with a link to the row of the measurement page
it came from (node, GPU and date in its hover text). A value that does not exist is a
mistake reported with the command that would produce it, not an empty string.
"""

from __future__ import annotations

import re

from markupsafe import Markup

from . import escape
from .diagnostics import did_you_mean
from .hrefs import relative_href
from .measured import MeasurementSet, NodeRun, format_value, verify_command
from .measurement import Result
from .model import Term

MEASUREMENTS_DIR = "measurements"


class CitationError(LookupError):
    """A value a body asks for that cannot be shown; the hint says how to fix it."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


def measurement_src_uri(experiment: str) -> str:
    return f"{MEASUREMENTS_DIR}/{experiment}.md"


def raw_json_src_uri(experiment: str, node: str, *, failed: bool = False) -> str:
    return f"{MEASUREMENTS_DIR}/{experiment}/{node}{'.failed' if failed else ''}.json"


def result_anchor(node: str, name: str) -> str:
    """The id of a result's row on its measurement page."""
    return re.sub(r"[^a-z0-9_-]+", "-", f"{node}-{name}".lower())


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
        cited = [c.experiment for c in self.term.measurements]
        call = f"measured('{experiment}', '{name}')"
        if experiment not in cited:
            raise CitationError(
                f"{call}: the term does not cite experiment '{experiment}'{did_you_mean(experiment, cited)}",
                f"add '- experiment: {experiment}' under measurements:",
            )
        record = self.measurements.get(experiment) if self.measurements else None
        if record is None or not record.measured:
            raise CitationError(
                f"{call}: experiment '{experiment}' has not been measured on any node",
                f"run `{verify_command(experiment)}` on a GPU node and commit "
                f"{MEASUREMENTS_DIR}/{experiment}/<node>.json",
            )
        names = record.result_names()
        if name not in names:
            raise CitationError(
                f"{call}: experiment '{experiment}' has no result '{name}'{did_you_mean(name, names)}",
                f"its results are listed on its measurement page; if the experiment now makes '{name}', "
                f"run `{verify_command(experiment)}` on a GPU node",
            )
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
