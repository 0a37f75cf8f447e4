"""Pages cite measurements: values by name, errors with the command that makes them, stale files.

Each test copies the fixture corpus and writes measurement files with the real format code,
then runs the real `cudagloss check` (and, where it matters, the real `mkdocs build --strict`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, cudagloss
from cudagloss.load.catalog import load_catalog
from cudagloss.load.corpus import load_corpus
from cudagloss.load.glossary import load_glossary
from cudagloss.load.measurements import load_measurements
from cudagloss.model.display import format_value
from cudagloss.model.measurement import ExperimentInfo, Gate, Measurement, Result, record
from cudagloss.model.project import Project
from cudagloss.model.urls import result_anchor
from cudagloss.site.renderer import Renderer


def write(
    folder: Path, node: str = "node-a", status: str = "ok", code_hash: str = "sha256:now", **results: object
) -> None:
    record(
        Measurement(
            experiment="warp-size",
            purpose="Read the warp size",
            code_hash=code_hash,
            status=status,  # type: ignore[arg-type]
            provenance={"node": node, "gpu_name": "Example GPU", "recorded_at": "2026-12-01T10:00:00+00:00"},
            gates=[Gate("readable", status == "ok")],
            results=[Result(k, v, "threads") for k, v in results.items()],  # type: ignore[arg-type]
        ),
        folder,
    )


@pytest.fixture
def glossary(tmp_path: Path) -> Path:
    """A copy of the good fixture corpus, with terms/ and an empty measurements/ beside it."""
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    (tmp_path / "measurements").mkdir()
    return tmp_path


def check(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cudagloss(root, "check", "terms", *args)


def test_a_cited_experiment_never_measured_is_an_error_with_the_command(glossary: Path) -> None:
    run = check(glossary)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    line = (
        (glossary / "terms" / "warp.yaml")
        .read_text()
        .splitlines()
        .index('  A warp holds {{ measured("warp-size", "warp_size") }} on every GPU measured.')
    )
    assert run.stderr.startswith(
        # the column of the call's '{{' in the file
        f"terms/warp.yaml:{line + 1}:16: body: measured('warp-size', 'warp_size'): "
        "experiment 'warp-size' has not been measured on any card\n"
        "    hint: run `make verify EXPERIMENT=warp-size` on a GPU node"
    )


def test_a_misspelt_result_is_an_error_that_suggests_the_right_name(glossary: Path) -> None:
    write(glossary / "measurements", warp_sise=32, query_median=1.0)
    run = check(glossary)
    assert "has no result 'warp_size' (did you mean 'warp_sise'?)" in run.stderr
    assert "measurements[0].results[0]: experiment 'warp-size' has no result 'warp_size'" in run.stderr
    assert run.stderr.rstrip().endswith("2 errors found")


def test_a_value_from_an_experiment_the_term_does_not_cite_is_an_error(glossary: Path) -> None:
    warp = glossary / "terms" / "warp.yaml"
    warp.write_text(warp.read_text().replace('measured("warp-size", "warp_size")', 'measured("warp-sizes", "x")'))
    write(glossary / "measurements", warp_size=32, query_median=1.0)
    run = check(glossary)
    assert "the term does not cite experiment 'warp-sizes' (did you mean 'warp-size'?)" in run.stderr
    assert "hint: add '- experiment: warp-sizes' under measurements:" in run.stderr


def test_measured_values_render_with_a_link_to_their_row(glossary: Path) -> None:
    write(glossary / "measurements", warp_size=32, query_median=1.5)
    measurements, problems = load_measurements(glossary / "measurements", glossary)
    assert problems == []
    corpus = load_corpus(glossary / "terms", glossary, measurements=measurements)
    md = Renderer(corpus, Project(root=ROOT, templates_dir=ROOT / "templates")).term_page("warp").markdown
    anchor = result_anchor("node-a", "warp_size")
    assert (
        f"A warp holds [32 threads](../measurements/warp-size.md#{anchor} "
        '"Example GPU &#40;card node-a&#41;, measured 2026-12-01")' in md
    )
    assert "The numbers came from one Example GPU card, `node-a`, on 2026-12-01." in md


def stale_catalog() -> list[ExperimentInfo]:
    return [ExperimentInfo("warp-size", "Read the warp size", "sha256:changed", "verifier/warp_size.py")]


def test_a_stale_measurement_is_a_warning_at_the_citation(glossary: Path) -> None:
    write(glossary / "measurements", warp_size=32, query_median=1.0)
    measurements, _ = load_measurements(glossary / "measurements", glossary, stale_catalog())
    corpus = load_corpus(glossary / "terms", glossary, measurements=measurements)
    [warning] = corpus.warnings
    assert warning.warning and warning.path == "terms/warp.yaml"
    assert "measurements[0].experiment: 'warp-size' on node 'node-a' was made by an older recipe or summary" in (
        warning.message
    )
    record = corpus.measurements.get("warp-size")  # type: ignore[union-attr]
    assert record is not None
    page = Renderer(corpus, Project(root=ROOT, templates_dir=ROOT / "templates")).measurement_page(record)
    assert '!!! warning "Stale"' in page.markdown
    term = Renderer(corpus, Project(root=ROOT, templates_dir=ROOT / "templates")).term_page("warp").markdown
    assert "[32 threads (stale)](" in term and ", stale: the experiment changed since" in term


def test_a_value_measured_in_a_changed_environment_says_so_on_the_term_page(glossary: Path) -> None:
    write(glossary / "measurements", warp_size=32, query_median=1.0)
    path = glossary / "measurements" / "warp-size" / "node-a.json"
    data = json.loads(path.read_text())
    data["format_version"] = 2
    data["drift"] = [{"name": "driver_version", "old": "580.1", "new": "590.2"}]
    path.write_text(json.dumps(data))
    measurements, _ = load_measurements(glossary / "measurements", glossary)
    corpus = load_corpus(glossary / "terms", glossary, measurements=measurements)
    term = Renderer(corpus, Project(root=ROOT, templates_dir=ROOT / "templates")).term_page("warp").markdown
    assert "Its environment changed since the run before (Driver `580.1` → `590.2`)" in term
    assert "in an environment changed since the run before &#40;driver_version&#41;" in term


def test_an_unknown_experiment_is_an_error_when_the_catalog_is_known(glossary: Path) -> None:
    warp = glossary / "terms" / "warp.yaml"
    warp.write_text(warp.read_text().replace("- experiment: warp-size", "- experiment: warp-sise"))
    measurements, _ = load_measurements(glossary / "measurements", glossary, stale_catalog())
    with pytest.raises(Exception) as info:
        load_corpus(glossary / "terms", glossary, measurements=measurements)
    assert "no experiment 'warp-sise' (did you mean 'warp-size'?)" in str(info.value)


def test_a_failed_run_beside_a_good_one_keeps_the_good_numbers_and_says_so(glossary: Path) -> None:
    folder = glossary / "measurements"
    write(folder, warp_size=32, query_median=1.0)
    write(folder, status="failed", warp_size=64)
    assert sorted(p.name for p in (folder / "warp-size").iterdir()) == ["node-a.failed.json", "node-a.json"]
    measurements, _ = load_measurements(folder, glossary)
    corpus = load_corpus(glossary / "terms", glossary, measurements=measurements)
    renderer = Renderer(corpus, Project(root=ROOT, templates_dir=ROOT / "templates"))
    term = renderer.term_page("warp").markdown
    assert "[32 threads]" in term and "64" not in term
    assert '!!! failure "The latest run on node-a failed"' in term
    page = renderer.measurement_page(corpus.measurements.get("warp-size")).markdown  # type: ignore[union-attr,arg-type]
    assert "Failed gate: readable" in page and "(node-a.failed.json)" not in page
    assert "[node-a.failed.json](warp-size/node-a.failed.json)" in page


def test_a_measurement_file_of_an_unknown_version_is_reported_with_its_path(glossary: Path) -> None:
    write(glossary / "measurements", warp_size=32, query_median=1.0)
    path = glossary / "measurements" / "warp-size" / "node-a.json"
    data = json.loads(path.read_text())
    data["format_version"] = 99
    path.write_text(json.dumps(data))
    run = check(glossary)
    assert "measurements/warp-size/node-a.json:1:1: measurement format version 99 is not known" in run.stderr


def test_a_measurement_under_the_wrong_node_name_is_reported(glossary: Path) -> None:
    write(glossary / "measurements", warp_size=32, query_median=1.0)
    folder = glossary / "measurements" / "warp-size"
    (folder / "node-a.json").rename(folder / "node-b.json")
    _, problems = load_measurements(glossary / "measurements", glossary)
    assert [p.message for p in problems] == [
        "holds experiment 'warp-size' on node 'node-a', not 'warp-size' on 'node-b'"
    ]


def test_values_are_formatted_for_readers() -> None:
    assert format_value(Result("a", 17.3456, "ms")) == "17.3 ms"
    assert format_value(Result("a", 237.56, "ms")) == "238 ms"
    assert format_value(Result("a", 0.2308, "ms")) == "0.231 ms"
    assert format_value(Result("a", 72.73, "×")) == "72.7×"
    assert format_value(Result("a", True)) == "yes"
    assert format_value(Result("a", None, "", "not measured: nvcc is not on PATH")) == "not measured"
    assert format_value(None) == "not measured"


def test_sizes_read_in_the_largest_unit_they_fill() -> None:
    assert format_value(Result("a", 26624, "KiB")) == "26 MiB"
    assert format_value(Result("a", 192, "KiB")) == "192 KiB"
    assert format_value(Result("a", 1536, "KiB")) == "1,536 KiB"  # not a whole MiB: kept exact
    assert format_value(Result("a", 1048576, "KiB")) == "1 GiB"


@pytest.mark.parametrize(
    ("value", "unit", "shown", "exact"),
    [
        (233472, "bytes", "228 KiB", "228 KiB (233,472 bytes)"),  # a capacity reads in binary units
        (39321600, "bytes", "37.5 MiB", "37.5 MiB (39,321,600 bytes)"),
        (150109880320, "bytes", "139.8 GiB", "139.8 GiB (150,109,880,320 bytes)"),
        (512, "bytes", "512 bytes", "512 bytes"),
        (65536, "registers/SM", "65,536 registers per SM", "65,536 registers per SM"),
        (4814.3, "GB/s", "4,814 GB/s", "4,814 GB/s"),  # a rate stays SI
        (17.34, "ms", "17.3 ms", "17.3 ms"),
    ],
)
def test_units_people_read_and_the_value_as_measured_on_the_measurement_page(
    value: float, unit: str, shown: str, exact: str
) -> None:
    assert (format_value(Result("a", value, unit)), format_value(Result("a", value, unit), exact=True)) == (
        shown,
        exact,
    )


def test_the_catalog_comes_from_the_verifier_registry() -> None:
    from verifier.registry import EXPERIMENTS, experiment_hash

    catalog = load_catalog(ROOT)
    assert catalog is not None
    assert [(e.id, e.code_hash) for e in catalog] == [(m.ID, experiment_hash(m)) for m in EXPERIMENTS]
    assert all(e.source.startswith("verifier/") and (ROOT / e.source).is_file() for e in catalog)


def test_the_repository_terms_cite_measured_values_on_the_five_pages() -> None:
    corpus = load_glossary(Project(root=ROOT, terms_dir=ROOT / "terms", measurements_dir=ROOT / "measurements"))
    assert corpus.warnings == []
    for slug in ("jit-compilation", "jit-cache", "no-kernel-image", "sass", "ptx"):
        term = corpus[slug].term
        assert term.measurements and "measured(" in term.body, slug


@pytest.mark.parametrize(
    ("start", "end", "shown"),
    [
        ("gpu idle", "none", None),
        ("gpu idle", "software power cap, hardware thermal slowdown", "software power cap, hardware thermal slowdown"),
        ("hardware slowdown", "hardware slowdown", "hardware slowdown"),
    ],
)
def test_a_run_whose_clocks_were_held_back_says_so_on_its_page(
    glossary: Path, start: str, end: str, shown: str | None
) -> None:
    write(glossary / "measurements", warp_size=32, query_median=1.0)
    path = glossary / "measurements" / "warp-size" / "node-a.json"
    data = json.loads(path.read_text())
    data["provenance"] |= {"clock_limited_by": start, "clock_limited_by_end": end}
    path.write_text(json.dumps(data))
    measurements, _ = load_measurements(glossary / "measurements", glossary)
    corpus = load_corpus(glossary / "terms", glossary, measurements=measurements)
    record = corpus.measurements.get("warp-size")  # type: ignore[union-attr]
    assert record is not None
    page = Renderer(corpus, Project(root=ROOT, templates_dir=ROOT / "templates")).measurement_page(record).markdown
    assert ('!!! warning "Clocks held back during this run"' in page) == (shown is not None)
    if shown:
        assert f"NVML reported the GPU's clocks held back while it ran, by: {shown}." in page
