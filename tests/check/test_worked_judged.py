"""Worked examples through the real `cudagloss check` and the real `mkdocs build --strict`: one
that agrees with its measurement is shown step by step; one that disagrees on any node is an
error at its step naming the computed and the measured value, and the build stops; the
directive, the facts file's values and every string a reader sees are checked like the rest."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, cudagloss
from cudagloss.model.measurement import Gate, Measurement, Result, record
from sitebuild import build, fixture_config

EVIL = "<script>alert(1)</script> <img src=x onerror=alert(1)> **bold** `code` _x_ [a](b.md)"
"""Author text a page must show as text (a javascript: link in it is refused by the check)."""
WORKED = """worked:
  - id: warps-per-sm
    title: How many warps fit on one SM?
    steps:
      - id: threads
        says: An SM holds this many threads
        value: warp-size.threads_per_sm
      - id: warp
        says: A warp is this many threads
        value: warp-size.warp_size
      - says: So an SM holds this many warps
        value: step.threads / step.warp
        matches: warp-size.warps_per_sm
"""


def measure(folder: Path, node: str, gpu: str, warps: int) -> None:
    results = [
        Result("warp_size", 32, "threads/warp", "threads per warp"),
        Result("threads_per_sm", 2048, "threads/SM", "threads an SM holds"),
        Result("warps_per_sm", warps, "warps/SM", "warps an SM holds, as the driver says"),
        Result("query_median", 1.1, "ms", "time to read the attribute", [1.0, 1.1, 1.2]),
    ]
    provenance = {"node": node, "gpu_name": gpu, "recorded_at": "2026-12-01T10:00:00+00:00"}
    record(
        Measurement("warp-size", "Read the limits", "sha256:now", "ok", provenance, [Gate("ok", True)], results), folder
    )


@pytest.fixture
def glossary(tmp_path: Path) -> Path:
    """The good fixture corpus; warp.yaml works out the warps per SM, placed after its first
    paragraph; two nodes measured the limits alike."""
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    for node in ("node-a", "node-b"):
        measure(tmp_path / "measurements", node, "Example GPU", 64)
    edit(tmp_path, ("byline:\n", WORKED + "byline:\n"))
    edit(tmp_path, ("is not linked twice.\n", 'is not linked twice.\n\n  {{ worked("warps-per-sm") }}\n'))
    return tmp_path


def edit(root: Path, *changes: tuple[str, str]) -> Path:
    warp = root / "terms" / "warp.yaml"
    text = warp.read_text(encoding="utf-8")
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new, 1)
    warp.write_text(text, encoding="utf-8")
    return warp


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


def check(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    run = cudagloss(root, "check", "terms", *args)
    assert "Traceback" not in run.stderr + run.stdout
    return run


def article(tmp_path: Path, root: Path) -> str:
    done = build(fixture_config(tmp_path, root / "terms", root / "measurements"), tmp_path / "site")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "site" / "terms" / "warp" / "index.html").read_text(encoding="utf-8")
    return page[page.index("<article") : page.index("</article>")]


def test_a_worked_example_that_disagrees_on_one_node_is_an_error_naming_both_values(glossary: Path) -> None:
    assert check(glossary).returncode == 0
    measure(glossary / "measurements", "node-b", "Example GPU B", 48)
    run = check(glossary)
    assert run.returncode == 1
    line = line_of(glossary / "terms" / "warp.yaml", "- says: So an SM holds this many warps")
    errors = [x for x in run.stderr.splitlines() if ": worked[0]" in x]
    assert errors == [
        f"terms/warp.yaml:{line}:9: worked[0].steps[2]: 'So an SM holds this many warps' works out to 64 warps "
        "per SM on node 'node-b' (Example GPU B), but warp-size.warps_per_sm measured 48 warps per SM there, "
        "25.0% below it; they must be equal"
    ], run.stderr


@pytest.mark.builders
def test_the_site_build_refuses_a_worked_example_that_disagrees_with_its_measurement(
    glossary: Path, tmp_path: Path
) -> None:
    measure(glossary / "measurements", "node-a", "Example GPU", 60)
    done = build(fixture_config(tmp_path, glossary / "terms", glossary / "measurements"), tmp_path / "site")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "works out to 64 warps per SM on node 'node-a' (Example GPU), but warp-size.warps_per_sm measured" in (
        done.stderr
    )
    assert not (tmp_path / "site" / "terms" / "warp" / "index.html").exists()


@pytest.mark.builders
def test_a_worked_example_that_agrees_is_shown_step_by_step_with_linked_values(glossary: Path, tmp_path: Path) -> None:
    text = html.unescape(re.sub(r"<[^>]+>", "", article(tmp_path, glossary)))
    assert "Worked example: How many warps fit on one SM?" in text
    assert "Worked out from the values measured on 2 Example GPU cards (node-a, node-b)." in text
    assert "An SM holds this many threads: 2,048 threads per SM." in text
    assert (
        "So an SM holds this many warps: 2,048 threads per SM ÷ 32 threads per warp = 64 warps per SM; "
        "measured: 64 warps per SM, the same." in text
    )
    page = article(tmp_path, glossary)
    assert '<a href="../../measurements/warp-size/#node-a-warps_per_sm"' in page


def test_the_directive_must_stand_alone_and_name_a_worked_example_the_body_places_once(glossary: Path) -> None:
    warp = edit(glossary, ('twice.\n\n  {{ worked("warps-per-sm") }}', 'twice. {{ worked("warps-per-sm") }}'))
    run = check(glossary)
    assert run.returncode == 1
    line = line_of(warp, '{{ worked("warps-per-sm") }}')
    assert f"terms/warp.yaml:{line}:" in run.stderr
    assert "body: worked(...) must stand alone, with a blank line before and after it" in run.stderr
    two = '\n\n  {{ worked("warps-per-sm") }}\n\n  {{ worked("warp-per-sm") }}\n'
    edit(glossary, (' {{ worked("warps-per-sm") }}\n', two))
    run = check(glossary)
    assert (
        "body: worked('warp-per-sm'): the term has no worked example 'warp-per-sm' (did you mean 'warps-per-sm'?)"
        in (run.stderr)
    )
    edit(glossary, ('{{ worked("warp-per-sm") }}', '{{ worked("warps-per-sm") }}'))
    assert "worked[0].id: 'warps-per-sm' is placed 2 times" in check(glossary).stderr
    edit(glossary, ('\n\n  {{ worked("warps-per-sm") }}\n\n  {{ worked("warps-per-sm") }}\n', "\n"))
    run = check(glossary)
    assert run.returncode == 1
    assert (
        f"terms/warp.yaml:{line_of(warp, '  - id: warps-per-sm')}:9: worked[0].id: 'warps-per-sm' is not placed in "
        "the body, so no page shows it" in run.stderr
    )
    assert '{{ worked("warps-per-sm") }}' in run.stderr  # the hint


def test_a_highlight_may_not_place_a_worked_example(glossary: Path) -> None:
    warp = edit(
        glossary, ("section: widgets\n", 'section: widgets\nhighlight: >-\n  See {{ worked("warps-per-sm") }}.\n')
    )
    run = check(glossary)
    assert run.returncode == 1
    assert (
        f"terms/warp.yaml:{line_of(warp, 'See {{ worked')}:7: highlight: worked(...) is allowed only in the body"
        in run.stderr
    )


def test_an_example_nobody_measured_is_a_warning_and_its_words_are_checked_like_prose(glossary: Path) -> None:
    edit(glossary, ("        value: warp-size.warp_size\n", "        value: warp-size.lanes\n"))
    edit(glossary, ("says: An SM holds this many threads", "says: An SM holds 2048 threads"))
    run = check(glossary)
    warp = glossary / "terms" / "warp.yaml"
    assert f"terms/warp.yaml:{line_of(warp, 'says: An SM holds 2048')}:15: worked[0].steps[0].says: '2048 threads'" in (
        run.stderr
    )
    assert "worked[0].steps[1].value: warp-size.lanes: experiment 'warp-size' has no result 'lanes'" in run.stderr


def test_the_facts_files_values_are_checked_where_they_are_written(glossary: Path) -> None:
    facts = glossary / "terms" / "_facts.yml"
    facts.write_text(
        "values:\n"
        "  - id: two\n    value: 2 FLOP/clock/lane\n    reason: An FMA is two operations.\n"
        "  - id: two\n    value: 2 FLOP/clock/lane\n    reason: Again.\n"
        "  - id: Bad-Id\n    value: many\n    reason: ' '\n",
        encoding="utf-8",
    )
    run = check(glossary)
    assert run.returncode == 1
    errors = [x for x in run.stderr.splitlines() if x.startswith("terms/_facts.yml:")]
    assert errors == [
        "terms/_facts.yml:5:9: values[1].id: 'two' is listed twice (also values[0])",
        "terms/_facts.yml:8:9: values[2].id: 'Bad-Id' is not an id",
        "terms/_facts.yml:9:12: values[2].value: 'many' is not a number and a unit",
        "terms/_facts.yml:10:13: values[2].reason: is empty",
    ], run.stderr


@pytest.mark.builders
def test_every_string_a_reader_sees_reaches_the_page_escaped(glossary: Path, tmp_path: Path) -> None:
    edit(glossary, ("title: How many warps fit on one SM?", f"title: {EVIL!r}"))
    edit(glossary, ("says: A warp is this many threads", f"says: {EVIL!r}"))
    measure(glossary / "measurements", "node-a", "GPU <b>bold</b> & [x](javascript:y)", 64)
    page = article(tmp_path, glossary)
    tags = re.findall(r"<[^>]+>", page)
    assert not [
        t for t in tags if re.match(r"<(script|img|b)\b", t) or "onerror" in t or "javascript" in t.split('"')[0]
    ]
    assert not [t for t in tags if re.search(r'href="(?!\.\./|#|https://example\.com)', t)]
    assert "<strong>bold</strong>" not in page.split("Worked example")[1].split("Related")[0]
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert text.count(f"Worked example: {EVIL}") == 1
    assert text.count(f"{EVIL}: 32 threads per warp") == 2  # one list per GPU model
    assert "Worked out from the values measured on GPU <b>bold</b> & [x](javascript:y) (card node-a)." in text
    assert "Worked out from the values measured on Example GPU (card node-b)." in text
