"""What each body directive (the table cudagloss.model.directives.DIRECTIVES) becomes on a page:
one handler per row, in `handlers`.

A value on a page is never typed by an author: the body names it, and it is looked up in
the committed measurement files and shown with a link to the row of the measurement page
it came from (node, GPU and date in its hover text). A value that does not exist is a
mistake reported with the command that would produce it, not an empty string. A source is
cited as the seed page cites one: its title, linked, and the day the link checker last found
it, in parentheses. Two timings are compared by the rule of cudagloss.model.compare, node by
node: "about 48× faster than" only when the samples support a difference, "no different,
within noise, from" otherwise.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from pathlib import Path

from markupsafe import Markup

from cudagloss.model.charts import find_chart, find_diagram, resolve_chart
from cudagloss.model.compare import RULE, TIME_UNITS, compare_timings
from cudagloss.model.corpus import FactValue
from cudagloss.model.directives import Directive, Handler, find_source, find_worked
from cudagloss.model.display import format_value, one_number, short_gpu
from cudagloss.model.link_checks import LinkChecks, checked_phrase
from cudagloss.model.measurement import Result
from cudagloss.model.measurements import MeasurementSet, NodeRun, NodeValues, resolve, resolve_pair
from cudagloss.model.refs import Ref
from cudagloss.model.source_links import source_link
from cudagloss.model.term import Source, Term
from cudagloss.model.urls import measurement_src_uri, relative_href, result_anchor
from cudagloss.model.workings import NodeWork, work
from cudagloss.site import escape
from cudagloss.site.charts import ChartView, chart_view, mark
from cudagloss.site.diagrams import diagram_view
from cudagloss.site.worked import anchor, measured_text, render


class ValueCiter:
    """The `measured` function of one term's body; it remembers what the body cited."""

    def __init__(self, term: Term, measurements: MeasurementSet | None, page_uri: str) -> None:
        self.term = term
        self.measurements = measurements
        self.page_uri = page_uri
        self.used: list[tuple[str, str]] = []
        self.charts: list[ChartView] = []

    def href(self, experiment: str, anchor: str = "") -> str:
        base = relative_href(measurement_src_uri(experiment), self.page_uri)
        return f"{base}#{anchor}" if anchor else base

    def __call__(self, experiment: str, name: str) -> Markup:
        record = resolve(self.term, self.measurements, experiment, name)
        if (experiment, name) not in self.used:
            self.used.append((experiment, name))
        values = record.values(name)
        if len(values) == 1:
            return self.link(experiment, *values[0], name)
        return self.agreed(experiment, name, values)

    def agreed(self, experiment: str, name: str, values: list[tuple[NodeRun, Result | None]]) -> Markup:
        """Every node's value as one number (or range) for the GPU model most nodes share, linked
        to the first of its rows, with every node's value and provenance in the hover; where
        other GPU models measured it too, a link to the table says it varies by GPU."""
        shown_as = one_number([(run.gpu, result) for run, result in values])
        texts = {r.value for _, r in values if r is not None and r.value is not None}
        whole = all(r is not None and r.value is not None for _, r in values)
        as_code = whole and len(texts) == 1 and isinstance(next(iter(texts)), str)  # one text: code, as one node's
        shown = escape.code(shown_as.text) if as_code else escape.text(shown_as.text)
        shown += Markup(" (stale)") if any(run.stale for run, _ in values) else Markup()
        title = "; ".join(f"{format_value(result)}: {self.provenance(run, result)}" for run, result in values)
        anchor = escape.ident(result_anchor(values[shown_as.first][0].node, name))
        link = Markup(f'[{shown}]({self.href(experiment, anchor)} "{escape.link_title(title)}")')
        if shown_as.ends and not as_code:  # each end of a range links to the row of the card that measured it
            low, high, tail = shown_as.ends
            high_anchor = escape.ident(result_anchor(values[shown_as.last][0].node, name))
            low_link = f'[{escape.text(low)}]({self.href(experiment, anchor)} "{escape.link_title(title)}")'
            high_link = f'[{escape.text(high)}]({self.href(experiment, high_anchor)} "{escape.link_title(title)}")'
            stale = " (stale)" if any(run.stale for run, _ in values) else ""
            link = Markup(f"{low_link}–{high_link}{escape.text(tail)}{stale}")
        if not shown_as.varies:
            return link
        where = escape.text(f"on {short_gpu(shown_as.gpu)}; varies by GPU")
        return link + Markup(f" ([{where}]({self.href(experiment)}))")

    def provenance(self, run: NodeRun, result: Result | None) -> str:
        """Where, when and how a card's value was measured, for its hover text."""
        title = f"{run.gpu} (card {run.node}), measured {run.recorded_on}"
        if result is not None and result.samples:
            title += f", median of {len(result.samples)} samples"
        if len(run.good_runs) > 1:
            title += f", the latest of {len(run.good_runs)} runs on this card"
        if run.good is not None and run.good.drift:
            changed = ", ".join(d.name for d in run.good.drift)
            title += f", in an environment changed since the run before ({changed})"
        return title + (", stale: the experiment changed since" if run.stale else "")

    def link(self, experiment: str, run: NodeRun, result: Result | None, name: str) -> Markup:
        """One node's value as a Markdown link to its row, with where and when in its title;
        every string in it comes from measurement JSON, so each passes the escaping rule."""
        text = format_value(result)
        shown = escape.code(text) if result is not None and isinstance(result.value, str) else escape.text(text)
        title = self.provenance(run, result)
        if run.stale:
            shown += Markup(" (stale)")
        href = escape.ident(result_anchor(run.node, name))
        return Markup(f'[{shown}]({self.href(experiment, href)} "{escape.link_title(title)}")')

    def listing(self, experiment: str, name: str) -> Markup:
        """A text result as a fenced block of its own, after a line naming where it was recorded
        (the reference GPU model's first node); where nodes recorded different text, it says so."""
        record = resolve(self.term, self.measurements, experiment, name)  # not in `used`: no table row for a listing
        texts = [(run, r) for run, r in record.values(name) if r is not None and isinstance(r.value, str)]
        shown = one_number([(run.gpu, r) for run, r in texts])
        run, result = texts[shown.first]
        where = f"Recorded on {run.gpu} (card {run.node}) by make verify, {run.recorded_on}"
        if len({str(r.value) for _, r in texts}) > 1:
            where += "; other cards recorded other text"
        anchor = escape.ident(result_anchor(run.node, name))
        caption = Markup(f"[{escape.text(where)}]({self.href(experiment, anchor)}):")
        return Markup("\n\n") + caption + Markup("\n\n") + escape.code_block(str(result.value), "text") + Markup("\n\n")

    def worked_link(self, ref: Ref, nodes: Sequence[NodeWork]) -> Markup:
        """A measured value of a worked example over some nodes (a range where they differ), linked
        to the first one's row, with each node's value and provenance in its title."""
        if ref not in self.used:
            self.used.append(ref)
        record = resolve(self.term, self.measurements, *ref)
        runs = {run.node: (run, result) for run, result in record.values(ref[1])}
        title = "; ".join(
            f"{format_value(r)}: {self.provenance(run, r)}" for run, r in (runs[n.source(ref)] for n in nodes)
        )
        href = self.href(ref[0], anchor(ref, nodes))
        return Markup(f'[{escape.text(measured_text(ref, nodes))}]({href} "{escape.link_title(title)}")')

    def compare(self, first: Ref, second: Ref) -> Markup:
        """How the first timing stands to the second on each node that measured both, as a
        link to the first one's row; the medians, the test and the rule are in its title."""
        nodes = resolve_pair(self.term, self.measurements, first, second)
        for ref in (first, second):
            if ref not in self.used:
                self.used.append(ref)
        text = relation_over(nodes, first, second)
        if any(n.stale for n in nodes):
            text += " (stale)"
        title = "; ".join(_judged(n, first, second) for n in nodes) + f". Rule: {RULE}"
        anchor = escape.ident(result_anchor(nodes[0].source(first), first[1]))
        return Markup(f'[{escape.text(text)}]({self.href(first[0], anchor)} "{escape.link_title(title)}")')


# Characters a Markdown link destination would act on (a parenthesis ends it, a backtick or a
# bracket starts other syntax first); percent-encoded, the address is the same to a server.
_DESTINATION = str.maketrans({c: f"%{ord(c):02X}" for c in "()[]`"})


def source_citation(source: Source, checks: LinkChecks | None = None) -> Markup:
    """`(title, checked YYYY-MM-DD)` with the title linked to the source (at its quote, or its
    archived copy once the page is gone: model.source_links), or what the link
    check found (link_checks.checked_phrase); the title is plain text and the URL passes
    escape.url (no link where it refuses)."""
    title = escape.text(source.title)
    url = escape.url(source_link(source, checks).href) if escape.url(source.url) is not None else None
    shown = Markup(f"[{title}]({str(url).translate(_DESTINATION)})") if url is not None else title
    checked = checked_phrase(source.checked_on, source.url, checks)
    return Markup("(") + shown + Markup(", ") + escape.text(checked) + Markup(")")


def ratio_text(ratio: float) -> str:
    """48.3 -> '48', 148 -> '150', 2.34 -> '2.3': as precise as a comparison of medians is."""
    return f"{float(f'{ratio:.2g}'):g}" if ratio >= 10 else f"{ratio:.1f}"


def _runs(pairs: list[tuple[int, int]]) -> str:
    """'5 samples each', '5 and 7 samples', or '5 to 10 samples each' over several cards."""
    counts = sorted({n for pair in pairs for n in pair})
    if len(pairs) == 1 and pairs[0][0] != pairs[0][1]:
        return f"{pairs[0][0]} and {pairs[0][1]} samples"
    return f"{counts[0]} samples each" if len(counts) == 1 else f"{counts[0]} to {counts[-1]} samples each"


def judgement(first: Result, second: Result) -> tuple[str, float]:
    """The rule's word for the first value against the second ('' where the test does not show
    a difference) and the ratio of the medians (inf where too far apart for a double)."""
    c = compare_timings(second.samples, first.samples)
    if c.verdict == "SAME":
        return "", 1.0
    lower = c.verdict == "FASTER"
    word = ("faster" if lower else "slower") if first.unit in TIME_UNITS else ("lower" if lower else "higher")
    small, large = sorted((c.old_median, c.new_median))
    return word, large / small if small > 0 else math.inf


def relation(first: Result, second: Result) -> str:
    """The first value against the second on one node: relation_over for one node."""
    a, b = ("", "first"), ("", "second")
    return relation_over([NodeValues("", "", {a: first, b: second})], a, b)


def relation_over(nodes: list[NodeValues], first: Ref, second: Ref) -> str:
    """One phrase for every node, worded as strongly as the test allows: 'about 37–55× faster
    than', 'not shown to differ (5 samples each) from', or, where cards disagree, how many say what
    ('faster on 1 of 2 cards than')."""
    judged = [judgement(n.values[first], n.values[second]) for n in nodes]
    words = {word for word, _ in judged}
    if words == {""}:
        runs = [(len(n.values[first].samples), len(n.values[second].samples)) for n in nodes]
        return f"not shown to differ ({_runs(runs)}) from"
    if len(words) > 1:
        counted = [f"{word} on {sum(w == word for w, _ in judged)}" for word in sorted(words - {""})]
        rest = f", not shown to differ on {sum(not w for w, _ in judged)}" if "" in words else ""
        return f"{', '.join(counted)}{rest} of {len(nodes)} cards than"
    word = words.pop()
    shown = sorted({ratio_text(ratio) for _, ratio in judged if ratio < math.inf}, key=float)
    if not shown or any(ratio == math.inf for _, ratio in judged):
        return f"{word} than"
    return f"about {shown[0]}× {word} than" if len(shown) == 1 else f"about {shown[0]}–{shown[-1]}× {word} than"


def _judged(n: NodeValues, first: Ref, second: Ref) -> str:
    a, b = n.values[first], n.values[second]
    c = compare_timings(b.samples, a.samples)
    return (
        f"{n.gpu} (card {n.node}): medians {format_value(a)} and {format_value(b)}, Mann-Whitney p = {c.test.p:.2g} "
        f"over {len(a.samples)} and {len(b.samples)} samples"
    )


def handlers(
    term: Term,
    measurements: MeasurementSet | None,
    page_uri: str,
    checks: LinkChecks | None = None,
    facts: Sequence[FactValue] = (),
    root: Path | None = None,
) -> tuple[dict[str, Handler], ValueCiter]:
    """The page's handler of each directive, and the citer that remembers the values they cited;
    root: where diagram files are read from (the repository's root)."""
    citer = ValueCiter(term, measurements, page_uri)

    def measured(d: Directive) -> str:
        return citer(*d.values[0])

    def cite(d: Directive) -> str:
        return source_citation(find_source(term, d.sources[0]), checks)

    def compare(d: Directive) -> str:
        first, second = d.values
        return citer.compare(first, second)

    def listing(d: Directive) -> str:
        return citer.listing(*d.values[0])

    def worked(d: Directive) -> str:
        index = term.worked.index(find_worked(term, d.args[0]))
        return render(work(term, index, measurements, facts), citer.worked_link)

    def chart(d: Directive) -> str:
        data = resolve_chart(term, measurements, find_chart(term, d.args[0]))
        row = functools.partial(_row, citer, data.experiment)
        citer.charts.append(chart_view(data, row))
        return mark(len(citer.charts) - 1)

    def diagram(d: Directive) -> str:
        found = find_diagram(term, d.args[0])
        citer.charts.append(diagram_view(root or Path("."), term, measurements, found, functools.partial(_row, citer)))
        return mark(len(citer.charts) - 1)

    found = {"measured": measured, "cite": cite, "compare": compare, "listing": listing, "worked": worked}
    return {**found, "chart": chart, "diagram": diagram}, citer


def _row(citer: ValueCiter, experiment: str, node: str, name: str) -> str:
    """A result's row as a Markdown link's target (the builders rewrite it into the page's address)."""
    return citer.href(experiment, escape.ident(result_anchor(node, name)))
