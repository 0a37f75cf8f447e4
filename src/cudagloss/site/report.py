"""Report a problem with the evidence: a term page's link to a new issue in the repository,
prefilled with what a maintainer needs to answer with data (issue 30, part 6).

The issue names the page, the term's file, the commit the site was built from, and every value
the page shows with its node, GPU, driver and day, so the maintainer can re-run the same
experiment on the same kind of node and compare. Everything in it is percent-encoded into the
URL's query (GitHub's `issues/new?title=&body=`); text from term YAML and measurement JSON is
data there, never markup. The body is bounded so the address stays one a browser sends whole.
"""

from __future__ import annotations

from urllib.parse import urlencode

from markupsafe import Markup

from cudagloss.model.corpus import LoadedTerm
from cudagloss.model.display import format_value, one_number
from cudagloss.model.measurements import MeasurementSet
from cudagloss.model.urls import MAX_URL_LENGTH
from cudagloss.site import escape


def evidence(
    t: LoadedTerm, measurements: MeasurementSet | None, cited: tuple[tuple[str, str], ...]
) -> tuple[list[str], list[str]]:
    """The nodes behind the page (name, GPU, driver, day), and one line per value it shows, as
    its prose shows it (one number per GPU model): what a maintainer re-runs and compares."""
    nodes: dict[str, str] = {}
    values = []
    for citation in t.term.measurements:
        record = measurements.get(citation.experiment) if measurements else None
        names = dict.fromkeys([*citation.results, *(n for e, n in cited if e == citation.experiment)])
        for name in names:
            found = record.values(name) if record else []
            for run, _ in found:
                driver = run.good.provenance.get("driver_version", "not recorded") if run.good else "not recorded"
                nodes[run.node] = f"- {run.node}: {run.gpu}, driver {driver}, measured {run.recorded_on}"
            shown = one_number([(run.gpu, r) for run, r in found]).text if found else format_value(None)
            values.append(f"- {citation.experiment}.{name}: {shown}")
    return list(nodes.values()), values


def report_url(
    repo_url: str | None,
    page_url: str | None,
    t: LoadedTerm,
    file: str | None,
    commit: str | None,
    evidence: tuple[list[str], list[str]],
) -> Markup | None:
    """The new-issue address for t's page, or None without a repository to report to. Values
    that would make the address longer than a URL may be (urls.MAX_URL_LENGTH) are counted."""
    if not repo_url:
        return None
    nodes, values = evidence
    for keep in range(len(values), -1, -1):
        more = [f"- and {len(values) - keep} more, on the page"] if keep < len(values) else []
        body = "\n".join(
            [
                f"Page: {page_url or t.slug}",
                f"Term file: {file or t.slug + '.yaml'}",
                f"Site built from commit: {commit or 'not recorded'}",
                *(["", "Measured on:", *nodes] if nodes else []),
                *(["", "Values the page shows:", *values[:keep], *more] if values else []),
                "",
                "What is wrong, and what you expected (a source or a measurement that shows it helps):",
                "",
            ]
        )
        query = urlencode({"title": f"Problem on the page \u201c{t.term.name}\u201d", "body": body})
        address = f"{repo_url.rstrip('/')}/issues/new?{query}"
        if len(address) <= MAX_URL_LENGTH:
            return escape.url(address)
    return None
