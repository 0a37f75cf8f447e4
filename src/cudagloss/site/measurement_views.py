"""The views of measured values: a term page's cited experiments, the measurement pages,
and the raw JSON files the site publishes beside them. Built from the measurement records;
what needs the whole corpus (the terms that cite an experiment) comes from the Renderer."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from urllib.parse import quote

from markupsafe import Markup

from cudagloss.model.cards import run_stamp
from cudagloss.model.claims import ClaimError
from cudagloss.model.display import SAME_ON_EVERY_CARD, format_value, spread, verify_command
from cudagloss.model.measurement import Measurement
from cudagloss.model.measurement_rules import METHOD_LABELS
from cudagloss.model.measurements import CitationError, ExperimentRecord, MeasurementSet, NodeRun
from cudagloss.model.term import Claim, MeasurementCitation, Term
from cudagloss.model.urls import (
    measurement_file_name,
    measurement_src_uri,
    measurements_index_uri,
    raw_json_src_uri,
    relative_href,
    result_anchor,
)
from cudagloss.model.verdicts import judge
from cudagloss.site import escape
from cudagloss.site.body import Cited
from cudagloss.site.directives import ValueCiter
from cudagloss.site.environment import author_markdown, href
from cudagloss.site.experiment_views import (
    ExperimentRow,
    KernelView,
    MeasurementPage,
    MeasurementsIndex,
    ProvenanceRow,
    ResultView,
    RunFile,
    RunView,
)
from cudagloss.site.fleet import NodeView, node_groups
from cudagloss.site.output import GeneratedFile
from cudagloss.site.provenance_view import PROVENANCE_LABELS, clocks_held, shown_value
from cudagloss.site.views import CitedExperiment, ClaimNode, ClaimView, ResultRow, TermEntry

LANGUAGES = {"cuda": "CUDA C++", "ptx": "PTX"}
LEXERS = {"cuda": "cuda", "ptx": "text"}
"""Pygments has a CUDA lexer and none for PTX."""


def _node(run: NodeRun) -> tuple[str, str, str, bool, bool, str, str, int, int]:
    """A node's fields of a NodeView; what the measurement JSON says is untrusted text."""
    provenance = run.good.provenance if run.good else {}
    gates = run.good.gates if run.good else []
    driver, cuda = (str(provenance.get(k) or "") for k in ("driver_version", "cuda_driver_version"))
    passed = sum(1 for g in gates if g.passed)
    return run.node, run.gpu, run.recorded_on, run.stale, run.failed is not None, driver, cuda, passed, len(gates)


def _drift(run: NodeRun) -> tuple[tuple[str, str, str], ...]:
    """(label, old, new) of each environment key the good run changed; values are untrusted text."""
    drift = run.good.drift if run.good else []
    return tuple((PROVENANCE_LABELS.get(d.name, d.name), shown_value(d.old), shown_value(d.new)) for d in drift)


def node_view(run: NodeRun) -> NodeView:
    return NodeView(*_node(run), drift=_drift(run), days=tuple(m.recorded_on for m in run.good_runs))


def run_view(record: ExperimentRecord, run: NodeRun) -> RunView:
    """One card's section of a measurement page: its last good run, the earlier good runs kept
    beside it (newest first) and a failed one after them."""
    good = _run_file(record, run, run.good, failed=False)
    earlier = tuple(
        _run_file(record, run, m, failed=False, stamp=run_stamp(m.provenance.get("recorded_at")))
        for m in reversed(run.earlier)
    )
    return RunView(
        *_node(run),
        drift=_drift(run),
        days=tuple(m.recorded_on for m in run.good_runs),
        good=good,
        failed=_run_file(record, run, run.failed, failed=True),
        earlier=tuple(e for e in earlier if e is not None),
        summarised_by=_summarised_by(run),
    )


def _summarised_by(run: NodeRun) -> str:
    """The commit an older summary ran at, for a run kept as it summarised it ('' for any other)."""
    if not run.summarised_before or run.good is None:
        return ""
    return str(run.good.provenance.get("git_commit") or "an older commit")[:12]


def _run_file(
    record: ExperimentRecord, run: NodeRun, m: Measurement | None, *, failed: bool, stamp: str = ""
) -> RunFile | None:
    if m is None:
        return None
    raw = raw_json_src_uri(record.id, run.node, failed=failed, run=stamp)
    # An earlier run's rows have ids of their own: 'h200-a--20261204t175826z-copy_ms'. '--' is in
    # no node's ids (a node name has one '.', '-' or '_' between letters and digits), so no node,
    # not even one named 'h200-a-20261204T175826Z', has them.
    row_of = f"{run.node}--{stamp}" if stamp else run.node
    return RunFile(
        raw=href(relative_href(raw, measurement_src_uri(record.id))),
        raw_name=measurement_file_name(run.node, failed=failed, run=stamp),
        recorded_at=str(m.provenance.get("recorded_at", "")),
        provenance=tuple(ProvenanceRow(PROVENANCE_LABELS.get(k, k), str(v)) for k, v in m.provenance.items()),
        gates=tuple(m.gates),
        error=m.error,
        clocks_held=clocks_held(m.provenance),
        results=tuple(
            ResultView(
                anchor=escape.ident(result_anchor(row_of, r.name)),
                name=r.name,
                value=format_value(r, exact=True),
                description=r.description,
                how=METHOD_LABELS.get(r.method, ""),
                samples=", ".join(f"{x:.4g}" for x in r.samples),
                first_measured=r.first_measured or m.recorded_on,  # a version 1 file knows only its own day
                last_confirmed=m.recorded_on,
            )
            for r in m.results
        ),
    )


def cited_experiment_view(
    term: Term, page_uri: str, citation: MeasurementCitation, measurements: MeasurementSet | None, cited: Cited
) -> CitedExperiment:
    """One cited experiment for a term page's Measured section: its nodes side by side, one
    row per result shown (those named in the citation, then those the body cites: every value
    the prose shows is in the table). A GPU model
    whose nodes measured every row alike, or that has many nodes, is one column (site.fleet)."""
    experiment = citation.experiment
    citer = ValueCiter(term, measurements, page_uri)
    record = measurements.get(experiment) if measurements else None
    rows = []
    count = Counter(run.gpu for run in record.measured) if record else Counter()
    rank = {gpu: i for i, gpu in enumerate(sorted(count, key=lambda gpu: (-count[gpu], gpu)))}
    first = {gpu: rank[gpu] for gpu in count}  # by GPU model, the one most nodes share (the prose's) first
    measured = sorted(record.measured, key=lambda run: first[run.gpu]) if record else []
    models = {
        gpu: n for gpu in dict.fromkeys(run.gpu for run in measured) if (n := sum(r.gpu == gpu for r in measured)) > 1
    }
    names = list(dict.fromkeys([*citation.results, *(n for e, n in cited if e == experiment)]))
    values_of = {name: sorted(record.values(name), key=lambda v: first[v[0].gpu]) if record else [] for name in names}
    alike = {
        gpu
        for gpu in models
        if all(spread([r for run, r in values_of[name] if run.gpu == gpu]) == SAME_ON_EVERY_CARD for name in names)
    }
    models = {gpu: n for gpu, n in models.items() if gpu not in alike}  # a spread column says nothing there
    nodes = tuple(node_view(run) for run in measured)
    groups = node_groups(nodes, alike)
    shown_apart = {n.node for g in groups if not g.together for n in g.nodes}
    repeated = [run for run in measured if run.node in shown_apart and len(run.good_runs) > 1]
    for name in names:
        values = values_of[name]
        found = next((r for _, r in values if r is not None), None)
        cells = []
        for g in groups:  # a node's own value, or a model's nodes as one number (each one in the hover)
            if g.together:
                cells.append(citer.agreed(experiment, name, [(run, r) for run, r in values if run.gpu == g.gpu]))
            else:
                cells += [citer.link(experiment, run, r, name) for run, r in values if run.node == g.nodes[0].node]
        spreads = tuple(spread([r for run, r in values if run.gpu == gpu]) for gpu in models)
        spreads += tuple(spread([m.result(name) for m in run.good_runs], over="run") for run in repeated)
        what = found.description if found else name
        if found is not None and found.method == "host":
            said = what.removeprefix("host cost: ")  # a description that already says so
            what = f"Host cost (the host's CPU and driver, not the GPU): {said}"
        shown = citer.agreed(experiment, name, values) if values else Markup()
        rows.append(ResultRow(what, tuple(cells), spreads, shown))
    return CitedExperiment(
        experiment=experiment,
        href=href(citer.href(experiment)) if record else None,
        purpose=record.purpose if record else "",
        note=author_markdown(citation.note),
        command=verify_command(experiment),
        nodes=nodes,
        failed_only=tuple(run.node for run in (record.runs if record else []) if run.good is None),
        rows=tuple(rows),
        models=tuple(f"Spread on {gpu}, {n} cards" for gpu, n in models.items())
        + tuple(f"Spread over the {len(run.good_runs)} runs of card {run.node}" for run in repeated),
        groups=groups,
    )


def measurement_view(
    record: ExperimentRecord, cited_by: tuple[TermEntry, ...], repo_url: str | None
) -> MeasurementPage:
    """One experiment's page: what it measures, its code, who cites it, each node's runs."""
    uri = measurement_src_uri(record.id)
    source = record.info.source if record.info else ""
    return MeasurementPage(
        experiment=record.id,
        purpose=record.purpose,
        source=source,
        source_href=escape.url(f"{repo_url}/blob/main/{quote(source)}") if repo_url and source else None,
        command=verify_command(record.id),
        cited_by=cited_by,
        runs=tuple(run_view(record, run) for run in record.runs),
        index=href(relative_href(measurements_index_uri(), uri)),
        kernels=tuple(
            KernelView(k.where, LANGUAGES[k.language], escape.code_block(k.source, LEXERS[k.language], indent=4))
            for k in (record.info.kernels if record.info else ())
        ),
        api_calls=record.info.api_calls if record.info else (),
    )


def measurements_index_view(records: Sequence[tuple[ExperimentRecord, tuple[TermEntry, ...]]]) -> MeasurementsIndex:
    """Every experiment, with the terms that cite it."""
    uri = measurements_index_uri()
    return MeasurementsIndex(
        tuple(
            ExperimentRow(
                id=record.id,
                href=href(relative_href(measurement_src_uri(record.id), uri)),
                purpose=record.purpose,
                nodes=tuple(node_view(run) for run in record.measured),
                cited_by=cited_by,
            )
            for record, cited_by in records
        )
    )


def raw_files(measurements: MeasurementSet | None) -> list[GeneratedFile]:
    """Every measurement file, published at the same path as in the repository."""
    out = []
    for record in measurements or []:
        for run in record.runs:
            files = [(run.good, False, ""), (run.failed, True, "")]
            files += [(m, False, run_stamp(m.provenance.get("recorded_at"))) for m in run.earlier]
            for m, failed, stamp in files:
                if m is not None:
                    # '<', '>' and '&' only occur inside JSON strings: escaped there, a browser
                    # that sniffs the file as HTML still finds no markup.
                    raw = m.to_json().replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
                    out.append(GeneratedFile(raw_json_src_uri(record.id, run.node, failed=failed, run=stamp), raw))
    return out


def claim_view(term: Term, claim: Claim, measurements: MeasurementSet | None) -> ClaimView:
    """A claim as its term page shows it (cudagloss.model.verdicts judges it); a condition the
    check stage refused is shown as unverified, with the reason."""
    says = claim.says.rstrip().rstrip(".")  # the page ends the sentence
    try:
        verdict = judge(term, claim, measurements)
    except (ClaimError, CitationError) as exc:
        return ClaimView(says, claim.holds, (), (), str(exc))
    nodes = {n: ClaimNode(n.gpu, n.node, n.explanation) for n in verdict.nodes}
    return ClaimView(
        says,
        claim.holds,
        tuple(v for n, v in nodes.items() if n.holds),
        tuple(v for n, v in nodes.items() if not n.holds),
        verdict.unverified,
        verdict.skipped if verdict.nodes else (),
        len(verdict.silent) if verdict.nodes else 0,
    )
