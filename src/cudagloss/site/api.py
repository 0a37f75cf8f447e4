"""The JSON API: `glossary.json` at the site's root, every term as data for other tools.

Built from the same Renderer as the pages (the same corpus, backlinks and cited values), so
the site and `cudagloss export` write the same bytes for the same site URL. Its model and
schema are cudagloss.model.api; addresses are the site's (as Exporter.site_href: absolute when
the site's URL is known, else relative to the site's root, where the file is published).
Strings are data here, JSON-escaped, never HTML; '<', '>', '&' and the Unicode line
separators are written as \\u escapes, so a browser that sniffs the file as HTML finds no
markup and a script that embeds it as a literal is not cut short.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json

import cudagloss
from cudagloss.model.api import (
    API_FORMAT,
    ApiCitation,
    ApiDefinition,
    ApiExperiment,
    ApiGenerator,
    ApiNode,
    ApiSection,
    ApiSectionRef,
    ApiShown,
    ApiSite,
    ApiSource,
    ApiTerm,
    ApiValue,
    GlossaryApi,
)
from cudagloss.model.cards import run_stamp
from cudagloss.model.corpus import LoadedTerm, sort_key
from cudagloss.model.display import format_value, one_number, verify_command
from cudagloss.model.measurement import Result
from cudagloss.model.measurements import ExperimentRecord, NodeRun
from cudagloss.model.source_links import citable_copy
from cudagloss.model.term import MeasurementCitation
from cudagloss.model.urls import (
    measurement_src_uri,
    raw_json_src_uri,
    result_anchor,
    section_src_uri,
    site_address,
    term_src_uri,
    url_problem,
)
from cudagloss.site.escape import inert_json
from cudagloss.site.renderer import Renderer
from cudagloss.text.markdown import plain_text

GLOSSARY_JSON = "glossary.json"
"""Where the site and the export publish the file, relative to the site's root."""


def _day(value: object) -> dt.date | None:
    """A day written YYYY-MM-DD (measurement JSON is untrusted: anything else is null)."""
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


class _Builder:
    """The API's dataclasses for one Renderer."""

    def __init__(self, renderer: Renderer) -> None:
        self.r = renderer
        self.corpus = renderer.corpus
        self.base = renderer.site_url or ""

    def url(self, src_uri: str) -> str:
        """A page's address, as the exports print it."""
        return site_address(self.base, src_uri)

    def api(self, *, with_terms: bool = True) -> GlossaryApi:
        sections = [
            ApiSection(s.slug, s.title, s.description, self.url(section_src_uri(s.slug))) for s in self.corpus.sections
        ]
        return GlossaryApi(
            format=API_FORMAT,
            generator=ApiGenerator("cudagloss", cudagloss.__version__),
            site=ApiSite(self.r.site_name, self.r.site_url),
            count=len(self.corpus),
            sections=sections,
            terms=[self.term(t) for t in self.corpus.alphabetical()] if with_terms else [],
            experiments=[self.experiment(record) for record in self.corpus.measurements or []],
        )

    def term(self, t: LoadedTerm) -> ApiTerm:
        term = t.term
        section = self.corpus.section(term.section)
        cited = self.r.cited(t.slug)
        return ApiTerm(
            slug=t.slug,
            url=self.url(term_src_uri(t.slug)),
            name=term.name,
            title=term.title,
            aliases=list(term.aliases),
            abbreviations=list(term.abbreviations),
            plurals=list(term.plurals),
            error_strings=list(term.error_strings),
            definition=ApiDefinition(plain_text(term.definition), term.definition),
            section=ApiSectionRef(term.section, section.title if section else term.section),
            related=[s for s in term.related if s in self.corpus],
            linked_from=sorted(self.r.backlinks(t.slug)),
            sources=[
                ApiSource(
                    s.title,
                    s.url if url_problem(s.url) is None else None,
                    s.id,
                    _day(s.checked_on),
                    s.quote,
                    _day(s.quote_checked_on),
                    citable_copy(s.archived_url),
                    _day(s.archived_on),
                )
                for s in term.sources
            ],
            byline=term.byline,
            measurements=[self.citation(c, cited) for c in term.measurements],
        )

    def citation(self, citation: MeasurementCitation, cited: tuple[tuple[str, str], ...]) -> ApiCitation:
        """The values a page shows of one experiment: its Measured table's and its body's."""
        experiment = citation.experiment
        record = self.corpus.measurements.get(experiment) if self.corpus.measurements else None
        names = dict.fromkeys([*citation.results, *(n for e, n in cited if e == experiment)])
        values, shown = [], []
        for name in names:
            found = record.values(name) if record else []
            described = next((r.description for _, r in found if r is not None), "")
            values += [self.value(experiment, name, described, run) for run, _ in found]
            shown.append(
                _shown(name, [(run.gpu, result) for run, result in found], sum(len(r.good_runs) for r, _ in found))
            )
        return ApiCitation(
            experiment=experiment,
            note=citation.note,
            url=self.url(measurement_src_uri(experiment)) if record else None,
            command=verify_command(experiment),
            values=values,
            shown=shown,
        )

    def value(self, experiment: str, name: str, description: str, run: NodeRun) -> ApiValue:
        """One node's value; where the node lacks it, null and `measured: false`, never a guess."""
        result = run.good.result(name) if run.good else None
        anchor = result_anchor(run.node, name)
        measured = result is not None and result.value is not None
        return ApiValue(
            experiment=experiment,
            result=name,
            description=description,
            node=run.node,
            gpu=run.gpu,
            measured_on=_day(run.recorded_on),
            stale=run.stale,
            measured=measured,
            value=result.value if result is not None and measured else None,
            unit=result.unit if result is not None and measured else "",
            text=format_value(result),
            url=self.url(f"{measurement_src_uri(experiment)}#{anchor}"),
            anchor=anchor,
        )

    def experiment(self, record: ExperimentRecord) -> ApiExperiment:
        citing = sorted(
            (t for t in self.corpus if any(c.experiment == record.id for c in t.term.measurements)), key=sort_key
        )
        return ApiExperiment(
            id=record.id,
            purpose=record.purpose,
            url=self.url(measurement_src_uri(record.id)),
            nodes=[self.node(record.id, run) for run in record.runs],
            cited_by=[t.slug for t in citing],
        )

    def node(self, experiment: str, run: NodeRun) -> ApiNode:
        def raw(failed: bool, stamp: str = "") -> str:
            return self.url(raw_json_src_uri(experiment, run.node, failed=failed, run=stamp))

        return ApiNode(
            node=run.node,
            gpu=run.gpu,
            measured_on=_day(run.recorded_on),
            stale=run.stale,
            failed_since=run.failed is not None,
            json_url=raw(False) if run.good else None,
            failed_json_url=raw(True) if run.failed else None,
            card=run.card or None,
            runs=len(run.good_runs),
            earlier_json_urls=[raw(False, run_stamp(m.provenance.get("recorded_at"))) for m in reversed(run.earlier)],
        )


def _shown(name: str, found: list[tuple[str, Result | None]], runs: int = 0) -> ApiShown:
    if not found:
        return ApiShown(name, format_value(None), None, varies_by_gpu=False, nodes=0)
    one = one_number(found)
    return ApiShown(name, one.text, one.gpu, varies_by_gpu=one.varies, nodes=len(found), runs=runs)


def _plain(value: object) -> object:
    """What json.dumps cannot write itself: the API's dataclasses (field by field, without the
    deep copies dataclasses.asdict makes) and days (YYYY-MM-DD)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"not JSON: {type(value).__name__}")


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False, default=_plain)


def api_json(api: GlossaryApi) -> str:
    """The file's text: compact, keys sorted, lists in their meaningful order, UTF-8, a final
    newline. (Compact, Python's JSON encoder runs in C: 1,000 terms take a tenth of the time.)"""
    return inert_json(_dumps(api)) + "\n"


def glossary_api(renderer: Renderer) -> GlossaryApi:
    return _Builder(renderer).api()


def _term_text(builder: _Builder, t: LoadedTerm) -> str:
    return inert_json(_dumps(builder.term(t)))


def glossary_json(renderer: Renderer) -> str:
    """glossary.json for the corpus the renderer holds; the same bytes for the same inputs
    as api_json. Each term's text is kept between the builds of `mkdocs serve` (by the
    identity of its loaded term, see site.state) and joined into the rest."""
    builder = _Builder(renderer)
    corpus = renderer.corpus
    measured = corpus.measurements.fingerprint if corpus.measurements is not None else None
    texts = []
    for t in corpus.alphabetical():
        section = corpus.section(t.term.section)
        rest = (
            section.title if section else None,
            tuple(sorted(renderer.backlinks(t.slug))),
            tuple(s in corpus for s in t.term.related),
            renderer.cited(t.slug),
            measured,
            builder.base,
        )
        texts.append(renderer.state.api_terms.get((t,), rest, functools.partial(_term_text, builder, t)))
    top = inert_json(_dumps(builder.api(with_terms=False)))
    head, _, tail = top.rpartition('"terms":[]')
    if tail != "}":  # terms is no longer the last key: the whole file at once
        return api_json(builder.api())
    joined = ",".join(texts)
    return f'{head}"terms":[{joined}]}}\n'
