"""The JSON API (glossary.json): the real glossary validates against the committed schema, the
bytes are deterministic, every cited value is the measured one (never invented), and hostile
strings round-trip exactly without leaving markup in the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from conftest import ROOT
from cudagloss.load.glossary import load_glossary
from cudagloss.model.corpus import Corpus, LoadedTerm
from cudagloss.model.measurement import Measurement, Result
from cudagloss.model.measurements import ExperimentRecord, MeasurementSet, NodeRun
from cudagloss.model.positions import Positions
from cudagloss.model.project import Project
from cudagloss.model.term import Byline, MeasurementCitation, Section, Source, Term
from cudagloss.model.urls import measurement_src_uri, term_src_uri
from cudagloss.site.api import glossary_json
from cudagloss.site.export import Exporter
from cudagloss.site.renderer import Renderer

SITE = "https://glossary.example.org/cuda/"
SCHEMA = json.loads((ROOT / "schema" / "glossary.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


@pytest.fixture(scope="module")
def real() -> Corpus:
    """The repository's own glossary, terms and measurements, as `make build` loads them."""
    return load_glossary(Project(root=ROOT, terms_dir=ROOT / "terms", measurements_dir=ROOT / "measurements"))


def _api(corpus: Corpus, site_url: str | None = SITE) -> tuple[str, dict[str, Any], Renderer]:
    renderer = Renderer(corpus, Project(root=ROOT, templates_dir=ROOT / "templates", site_url=site_url))
    text = glossary_json(renderer)
    return text, json.loads(text), renderer


def test_the_real_glossary_validates_against_its_schema(real: Corpus) -> None:
    for site_url in (SITE, None):
        text, data, _ = _api(real, site_url)
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(data)]
        assert not errors, errors[:5]
        assert data["count"] == len(real) == len(data["terms"]) > 30
        assert [t["slug"] for t in data["terms"]] == [t.slug for t in real.alphabetical()]
        assert text.endswith("}\n") and "\n" not in text[:-1]
        assert list(data) == sorted(data) and list(data["terms"][0]) == sorted(data["terms"][0])


@pytest.mark.parametrize(
    "breakage",
    [
        lambda d: d.pop("terms"),
        lambda d: d["terms"][0].update(extra=1),
        lambda d: d["terms"][0]["measurements"][0]["values"][0].update(value=[1]),
        lambda d: d["terms"][0]["sources"][0].update(checked_on="last week"),
        lambda d: d["terms"][0]["byline"].update(written_on="soon"),
        lambda d: d.update(format=2),
    ],
)
def test_the_schema_refuses_what_the_file_never_holds(real: Corpus, breakage: Any) -> None:
    """The schema is not vacuous: each mutation of the real file is one it rejects."""
    data = json.loads(_api(real)[0])
    # a term with measured values and sources comes first (one citing an experiment no node has run yet has no values)
    data["terms"].sort(key=lambda t: not t["measurements"] or not t["measurements"][0]["values"] or not t["sources"])
    breakage(data)
    assert not VALIDATOR.is_valid(data)


def test_the_same_inputs_give_the_same_bytes(real: Corpus) -> None:
    first, _, _ = _api(real)
    again, _, _ = _api(
        load_glossary(Project(root=ROOT, terms_dir=ROOT / "terms", measurements_dir=ROOT / "measurements"))
    )
    assert first == again
    relative, data, _ = _api(real, None)
    assert relative != first and SITE not in relative
    ptx = next(t for t in data["terms"] if t["slug"] == "ptx")
    assert ptx["url"] == "terms/ptx/" and data["site"] == {"name": "CUDA Glossary", "url": None}
    for site_url, text in ((SITE, first), (None, relative)):  # the addresses llms.txt gives, too
        exporter = Exporter(Renderer(real, Project(root=ROOT, templates_dir=ROOT / "templates", site_url=site_url)))
        assert f'"url":"{exporter.site_href(term_src_uri("ptx"))}"' in text
        assert f'"url":"{exporter.site_href(measurement_src_uri("ptx-jit"))}"' in text


def test_each_cited_value_is_the_measured_one_with_its_row(real: Corpus) -> None:
    _, data, renderer = _api(real)
    seen = 0
    for term in data["terms"]:
        loaded = real[term["slug"]]
        assert term["url"] == f"{SITE}terms/{term['slug']}/"
        assert term["related"] == [s for s in loaded.term.related if s in real]
        assert term["linked_from"] == sorted(renderer.backlinks(term["slug"]))
        for citation in term["measurements"]:
            record = real.measurements.get(citation["experiment"]) if real.measurements else None
            assert record is not None
            page = renderer.measurement_page(record).markdown
            for v in citation["values"]:
                run = next(r for r in record.measured if r.node == v["node"])
                assert run.good is not None
                result = run.good.result(v["result"])
                assert result is not None
                if result.value is None:  # recorded without a value (a pair result on one GPU)
                    assert not v["measured"] and v["value"] is None
                    continue
                assert v["measured"] and v["value"] == result.value and v["unit"] == result.unit
                assert (v["gpu"], v["measured_on"], v["stale"]) == (run.gpu, run.recorded_on, run.stale)
                assert v["url"] == f"{SITE}{measurement_src_uri(v['experiment'])[:-3]}/#{v['anchor']}"
                assert v["anchor"] in page  # the row the value links to is on that page
                seen += 1
    assert seen > 100
    experiments = {e["id"]: e for e in data["experiments"]}
    assert set(experiments) == {r.id for r in real.measurements or []}
    assert "ptx" in experiments["ptx-jit"]["cited_by"]


def _term(slug: str, name: str, **fields: Any) -> LoadedTerm:
    term = Term(
        name=name, title=f"What is {name}?", definition=f"{name} means {name}.", section="s", body="B.", **fields
    )
    return LoadedTerm(slug, f"terms/{slug}.yaml", Path(f"terms/{slug}.yaml"), term, Positions())


def _run(node: str, results: list[Result]) -> NodeRun:
    m = Measurement(
        "exp",
        "Measures.",
        "sha256:0",
        "ok",
        {"node": node, "gpu_name": f"GPU {node}", "recorded_at": "2026-11-02T10:00:00+00:00"},
        results=results,
    )
    return NodeRun(node, m)


def test_an_unmeasured_value_is_null_and_says_so(tmp_path: Path) -> None:
    """One node lacks the result, and an experiment nobody ran has no values: nothing is filled in."""
    measured = MeasurementSet(tmp_path)
    record = ExperimentRecord("exp", None, [_run("a", [Result("x", 1.5, "ms", "X.")]), _run("b", [])])
    measured.experiments["exp"] = record
    cites = [MeasurementCitation("exp", results=["x"]), MeasurementCitation("never-run", results=["y"])]
    corpus = Corpus(tmp_path, [_term("t", "T", measurements=cites)], [Section("s", "S")], measurements=measured)
    _, data, _ = _api(corpus)
    assert VALIDATOR.is_valid(data)
    exp, never = data["terms"][0]["measurements"]
    a, b = exp["values"]
    assert (a["node"], a["value"], a["unit"], a["text"], a["measured"]) == ("a", 1.5, "ms", "1.5 ms", True)
    assert (b["node"], b["value"], b["unit"], b["text"], b["measured"]) == ("b", None, "", "not measured", False)
    assert b["description"] == "X." and b["gpu"] == "GPU b" and b["measured_on"] == "2026-11-02"
    assert never == {
        "experiment": "never-run",
        "note": "",
        "url": None,
        "command": "make verify EXPERIMENT=never-run",
        "values": [],
        "shown": [{"result": "y", "text": "not measured", "gpu": None, "varies_by_gpu": False, "nodes": 0, "runs": 0}],
    }
    assert exp["shown"] == [  # two models (GPU a, GPU b), one node each: the first by name speaks, and it varies
        {"result": "x", "text": "1.5 ms", "gpu": "GPU a", "varies_by_gpu": True, "nodes": 2, "runs": 2}
    ]


def _on(node: str, gpu: str, *results: Result) -> NodeRun:
    run = _run(node, list(results))
    assert run.good is not None
    run.good.provenance["gpu_name"] = gpu
    return run


def test_shown_is_one_number_per_gpu_model_as_the_prose_says_it(tmp_path: Path) -> None:
    """Three nodes of one model and one of another: the file's `shown` is the page's one number
    for the model most nodes share, a range where they differ, and says it varies by GPU; every
    node's own value stays in `values`."""
    measured = MeasurementSet(tmp_path)
    runs = [
        _on("a", "NVIDIA H200", Result("t", 10.0, "ms"), Result("n", 132, "SMs")),
        _on("b", "NVIDIA H200", Result("t", 12.0, "ms"), Result("n", 132, "SMs")),
        _on("c", "NVIDIA H200", Result("t", 11.0, "ms"), Result("n", 132, "SMs")),
        _on("d", "NVIDIA H100", Result("t", 30.0, "ms"), Result("n", 132, "SMs")),
    ]
    measured.experiments["exp"] = ExperimentRecord("exp", None, runs)
    corpus = Corpus(
        tmp_path,
        [_term("t", "T", measurements=[MeasurementCitation("exp", results=["t", "n"])])],
        [Section("s", "S")],
        measurements=measured,
    )
    _, data, _ = _api(corpus)
    assert VALIDATOR.is_valid(data)
    (citation,) = data["terms"][0]["measurements"]
    t, n = citation["shown"]
    assert (t["text"], t["gpu"], t["varies_by_gpu"], t["nodes"]) == ("10–12 ms on 3 H200s", "NVIDIA H200", True, 4)
    assert (n["text"], n["varies_by_gpu"]) == ("132 SMs", False)  # equal on every node, whatever the model
    assert [v["text"] for v in citation["values"] if v["result"] == "t"] == ["10 ms", "12 ms", "11 ms", "30 ms"]


HOSTILE = [
    "Say \"hi\" 'there'",
    "</script><script>alert(1)</script>",
    "line\u2028separator\u2029paragraph",
    "amp & lt < gt > \\ back \\u003c",
    "emoji 🧪 and RTL \u202e and NUL-free \x7f",
]


def test_hostile_strings_round_trip_exactly_and_leave_no_markup(tmp_path: Path) -> None:
    terms = [
        _term(
            f"h{i}",
            text,
            aliases=[text],
            error_strings=[text],
            sources=[Source(text, "https://example.com/a?b=<c>"), Source("bad", "javascript:alert(1)")],
            byline=Byline(written_by=text),
        )
        for i, text in enumerate(HOSTILE)
    ]
    corpus = Corpus(tmp_path, terms, [Section("s", HOSTILE[1], HOSTILE[2])])
    text, data, _ = _api(corpus)
    for raw in ("<", ">", "&", "\u2028", "\u2029"):
        assert raw not in text  # written as \u escapes: no markup, no line break a script would see
    assert VALIDATOR.is_valid(data)
    by_slug = {t["slug"]: t for t in data["terms"]}
    for i, hostile in enumerate(HOSTILE):
        t = by_slug[f"h{i}"]
        assert t["name"] == t["aliases"][0] == t["error_strings"][0] == t["byline"]["written_by"] == hostile
        assert t["sources"][0] == {
            "title": hostile,
            "url": "https://example.com/a?b=<c>",
            "id": None,
            "checked_on": None,
            "quote": None,
            "quote_checked_on": None,
            "archived_url": None,
            "archived_on": None,
        }
        assert t["sources"][1]["url"] is None  # an address no reader may be sent to is not published
    assert data["sections"][0]["title"] == HOSTILE[1] and data["sections"][0]["description"] == HOSTILE[2]


def test_the_file_joined_from_kept_terms_is_the_file_written_whole(real: Corpus) -> None:
    """glossary_json keeps each term's text between builds and joins them; the bytes are
    those of the whole file encoded at once, before and after a term's definition changes."""
    from dataclasses import replace

    from cudagloss.site.api import api_json, glossary_api

    for site_url in (SITE, None):
        renderer = Renderer(real, Project(root=ROOT, templates_dir=ROOT / "templates", site_url=site_url))
        assert glossary_json(renderer) == api_json(glossary_api(renderer))
    first = real.terms[0]
    edited = replace(first, term=replace(first.term, definition="An edited definition, for this test."))
    again = Corpus(real.root, [edited, *real.terms[1:]], real.sections, real.sections_path, real.measurements)
    renderer = Renderer(again, Project(root=ROOT, templates_dir=ROOT / "templates", site_url=SITE))
    text = glossary_json(renderer)
    assert text == api_json(glossary_api(renderer)) and "An edited definition, for this test." in text
