"""Numbers about a GPU typed by hand, through the real `mkdocs build --strict` and `cudagloss
check`: what the checker allows (by rule, or as a reviewed fact in _facts.yml) reaches the
page as text; what it refuses stops the build, each at its place with the exact message
and the measured(...) call that would replace it, and `check` reports the same lines.

tests/fixtures/typed-numbers-site/terms is a glossary that builds; typed/typed-gpu.yaml
is the one term that types numbers about the GPU measured, added to a copy of it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, cudagloss
from cudagloss.check.typed_hints import facts_hint
from cudagloss.check.typed_numbers import find
from sitebuild import build, fixture_config

FIXTURE = FIXTURES / "typed-numbers-site"
MEASUREMENTS = FIXTURES / "good-measurements"
Run = subprocess.CompletedProcess[str]
FALLBACK = f"    hint: {facts_hint('terms/_facts.yml')}"
REPORTED = [
    "terms/typed-gpu.yaml:6:13: definition: 'compute capability 9.0' is a number about a GPU typed by hand",
    FALLBACK,
    "terms/typed-gpu.yaml:9:16: body: '132 SMs' is a number about a GPU typed by hand",
    FALLBACK,
    "terms/typed-gpu.yaml:9:38: body: '32 threads' is a number about a GPU typed by hand",
    '    hint: write {{ measured("warp-size", "warp_size") }} (32 threads on fixture-a) instead',
    "terms/typed-gpu.yaml:10:20: body: '17.3 ms' is a number about a GPU typed by hand",
    FALLBACK,  # query_median is a duration this term cites, but not 17.3 ms
    "terms/typed-gpu.yaml:10:60: body: '3.35 TB/s' is a number about a GPU typed by hand",
    FALLBACK,
    "terms/typed-gpu.yaml:11:18: body: 'sm_90' says what a GPU is, typed by hand",
    "    hint: cite a measurement or add it to terms/_facts.yml with a reason; "
    "a target name that is only a name is written as code (`sm_90`)",
    "terms/typed-gpu.yaml:14:11: where_you_meet_this[0].note: '141 GB' is a number about a GPU typed by hand",
    FALLBACK,
]
"""The build's and the check's report, in order: every number typed-gpu.yaml types, and
nothing from the terms that may type them."""

ALLOWED = {
    "warp-model": [
        "A group of 32 threads, as the CUDA programming model defines it.",  # a fact for this term
        "CUDA has grouped threads into warps since 2006, and CUDA 12.4 still does.",  # a year, a version
        "A stopwatch that reads 5 µs times the reader.",  # a duration about no GPU work
        "32 threads",  # the measured value, cited
    ],
    "target-names": [
        "such as compute_75.",  # a target name, in code
        "Compile for sm_90 and compute_75; sm_90 names compute capability 9.0.",  # a fact, a name
        "In code, 132 SMs is text",  # a code span
        "1024 threads",  # a code block
        "nvcc: Its -arch=sm_90 option.",  # a note
    ],
}


@pytest.fixture(scope="module")
def allowed_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("allowed")
    run = build(fixture_config(tmp, FIXTURE / "terms", MEASUREMENTS), tmp / "site")
    assert run.returncode == 0, run.stderr
    assert "WARNING" not in run.stderr
    return tmp / "site"


@pytest.fixture(scope="module")
def typed_glossary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the fixture glossary with typed-gpu.yaml added to it."""
    root = tmp_path_factory.mktemp("typed")
    shutil.copytree(FIXTURE / "terms", root / "terms")
    shutil.copy(FIXTURE / "typed" / "typed-gpu.yaml", root / "terms")
    return root


@pytest.fixture(scope="module")
def typed_build(typed_glossary: Path) -> Run:
    return build(fixture_config(typed_glossary, typed_glossary / "terms", MEASUREMENTS), typed_glossary / "site")


def _text(page: Path) -> str:
    """The words of a page's article, tags removed, as a reader sees them."""
    html = page.read_text(encoding="utf-8")
    return re.sub(r"<[^>]+>", "", html[html.index("<article") : html.index("</article>")])


@pytest.mark.builders
@pytest.mark.parametrize("slug", sorted(ALLOWED))
def test_allowed_numbers_build_and_reach_the_page_as_text(allowed_site: Path, slug: str) -> None:
    text = _text(allowed_site / "terms" / slug / "index.html")
    for words in ALLOWED[slug]:
        assert words in text, (slug, words)


@pytest.mark.builders
def test_typed_numbers_stop_the_build_each_at_its_place(typed_glossary: Path, typed_build: Run) -> None:
    assert typed_build.returncode != 0
    assert "Traceback" not in typed_build.stderr
    reported = [line.removeprefix("ERROR   -  ") for line in typed_build.stderr.splitlines() if line.strip()]
    assert reported == REPORTED
    assert f"{len(REPORTED) // 2} errors in term or measurement files; nothing was built" in typed_build.stdout
    assert not (typed_glossary / "site" / "terms").exists()


@pytest.mark.builders
def test_a_fact_for_one_term_is_refused_in_another(typed_build: Run) -> None:
    """_facts.yml lists '32 threads' for warp-model and 'compute capability 9.0' for
    target-names: both pages type them freely, typed-gpu.yaml may not."""
    refused = [line for line in REPORTED if "'32 threads'" in line or "'compute capability 9.0'" in line]
    assert len(refused) == 2
    assert all(line in typed_build.stderr for line in refused)
    assert "warp-model.yaml" not in typed_build.stderr and "target-names.yaml" not in typed_build.stderr


def test_check_reports_the_same_lines_at_once(typed_glossary: Path, tmp_path: Path) -> None:
    """In a folder of its own: the build's mkdocs.yml beside typed_glossary names folders of this
    checkout, outside that folder, which check refuses (issue 39)."""
    root = tmp_path / "glossary"
    shutil.copytree(typed_glossary / "terms", root / "terms")
    run = cudagloss(root, "check", "terms", "--measurements", str(MEASUREMENTS))
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert run.stderr == "\n".join([*REPORTED, f"{len(REPORTED) // 2} errors found", ""])


def test_a_target_name_that_states_the_gpu_first_is_found() -> None:
    assert [f.text for f in find("sm_90 is the H200.")] == ["sm_90"]
    assert [f.text for f in find("sm_90 was our GPU.")] == ["sm_90"]
    assert not find("sm_90 is the target to compile for.")
