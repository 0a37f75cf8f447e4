"""Hostile input against what issue 14 added (claims, compare(), measurement format 2), through the real
`cudagloss check` and the real `mkdocs build --strict`: every bad input is an error at its place, all of
them at once, no traceback; no run is made slow by repeating a costly comparison; and every string a
reader sees reaches the HTML escaped."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, ROOT, cudagloss
from cudagloss.load.glossary import check_glossary
from cudagloss.model import compare
from cudagloss.model.measurement import Drift, Gate, Measurement, Result, record
from cudagloss.model.project import Project
from sitebuild import build, fixture_config

FAST = [1.0, 1.1, 1.2, 1.05, 1.15]
SLOW = [10.0, 11.0, 12.0, 10.5, 11.5]
EVIL = (
    '<script>alert(1)</script> <img src=x onerror=alert(1)> " onmouseover="alert(1) '
    "</code><b>bold</b> ` [x](javascript:alert(1)) !!! danger"
)


def measure(folder: Path, node: str, extra: list[Result] | None = None, **fields: Any) -> None:
    """One node's warp-size file, written by the real format code (which checks it as the site reads it)."""
    results = [
        Result("warp_size", 32, "threads", "threads per warp"),
        Result("query_median", sorted(FAST)[2], "ms", "time to read the attribute", FAST),
        Result("launch_median", sorted(SLOW)[2], "ms", "time to launch", SLOW),
        *(extra or []),
    ]
    provenance = {"node": node, "gpu_name": f"GPU {node}", "recorded_at": "2026-12-01T10:00:00+00:00"}
    m = Measurement("warp-size", "Read the warp size", "sha256:now", "ok", provenance, [Gate("ok", True)], results)
    record(replace(m, **fields), folder)


@pytest.fixture
def glossary(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    measure(tmp_path / "measurements", "node-a")
    measure(tmp_path / "measurements", "node-b")
    return tmp_path


def add_claims(root: Path, *pairs: tuple[str, str]) -> Path:
    warp = root / "terms" / "warp.yaml"
    text = "claims:\n" + "".join(f"  - says: {json.dumps(s)}\n    holds: {json.dumps(h)}\n" for s, h in pairs)
    source = warp.read_text(encoding="utf-8")
    cited = "    results: [warp_size, query_median]\n"
    warp.write_text(source.replace(cited, cited + text))
    return warp


def line_of(path: Path, needle: str, after: int = 0) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if i > after and needle in line)


def check(root: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    run = cudagloss(root, "check", "terms", timeout=timeout)
    assert "Traceback" not in run.stderr + run.stdout
    return run


def site(root: Path, tmp_path: Path, *pages: str) -> list[str]:
    """The article of each page (the warp term's by default) of the real site built from root."""
    done = build(fixture_config(tmp_path, root / "terms", root / "measurements"), tmp_path / "site")
    assert done.returncode == 0, done.stderr
    html = [(tmp_path / "site" / page / "index.html").read_text(encoding="utf-8") for page in pages or ["terms/warp"]]
    return [page[page.index("<article") : page.index("</article>")] for page in html]


def test_numbers_a_double_cannot_hold_are_errors_at_their_place_all_at_once(glossary: Path) -> None:
    """1e999 is inf, 1e-400 is 0, 1e300 * 1e300 overflows and inf - inf is nan: none of them may
    decide a claim (before, `x < 1e999` held and the page printed 'inf')."""
    warp = add_claims(
        glossary,
        ("A warp is finite", "warp-size.warp_size < 1e999"),
        ("A warp is not empty", "warp-size.warp_size > 1e-400"),
        ("A warp is small", "warp-size.warp_size * 1e300 * 1e300 > 1"),
        ("A warp is unlike nothing", "(1e300 * 1e300 - 1e300 * 1e300) != warp-size.warp_size"),
        ("A warp is huge", "warp-size.warp_size / 1e300 / 1e300 / 1e300 < 1"),
    )
    run = check(glossary)
    assert run.returncode == 1
    says = [line_of(warp, f"- says: {json.dumps(s)}") for s in ("A warp is finite", "A warp is not empty")]
    holds = [line_of(warp, "holds:", after) for after in says]
    assert run.stderr.count("out of range") == 5, run.stderr
    assert f"terms/warp.yaml:{holds[0]}:12: claims[0].holds: number '1e999' is out of range (at character 23)" in (
        run.stderr
    )
    assert f"terms/warp.yaml:{holds[1]}:12: claims[1].holds: number '1e-400' is out of range (at character 23)" in (
        run.stderr
    )
    assert "claims[2].holds: warp-size.warp_size * 1e+300 * 1e+300 is out of range (inf)" in run.stderr
    assert "claims[3].holds: 1e+300 * 1e+300 is out of range (inf)" in run.stderr
    assert "claims[4].holds: warp-size.warp_size / 1e+300 / 1e+300 is out of range (0)" in run.stderr
    assert "hint: keep numbers within what a double holds" in run.stderr
    assert "nan" not in run.stderr and "does not hold" not in run.stderr


def test_a_costly_comparison_repeated_in_many_claims_is_made_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty samples a side take the exact rank test (25 ms); 45 claims of 16 differ() each, judged
    on two nodes, evaluated and explained, were 72 s of `cudagloss check` from one term file. The
    rank tests are counted, not timed: each pair of samples is compared once."""
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    for node in ("node-a", "node-b"):
        many = [Result(f"t{i}_median", i, "ms", "a timing", [i + j / 100 for j in range(20)]) for i in (1, 2)]
        measure(tmp_path / "measurements", node, many)
    pair = "differ(warp-size.t1_median, warp-size.t2_median)"
    holds = " and ".join([pair] * 16)
    add_claims(tmp_path, *((f"Claim {i} holds", holds) for i in range(45)))
    warp = tmp_path / "terms" / "warp.yaml"
    warp.write_text(warp.read_text(encoding="utf-8").replace("[warp_size, query_median]", "[warp_size, t1_median]"))
    run = check(tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr
    made: list[tuple[tuple[float, ...], tuple[float, ...]]] = []
    rank_test = compare.mann_whitney

    def counted(x: Sequence[float], y: Sequence[float]) -> compare.RankTest:
        made.append((tuple(x), tuple(y)))
        return rank_test(x, y)

    monkeypatch.setattr(compare, "mann_whitney", counted)
    compare._compare.cache_clear()
    check_glossary(Project.default(tmp_path), cache=False)
    t1, t2 = (tuple(i + j / 100 for j in range(20)) for i in (1, 2))
    assert made.count((t1, t2)) == 1  # 45 claims x 16 differ() x 2 nodes: the same samples on each node
    assert len(made) == len(set(made)), "a comparison was made twice"


@pytest.mark.builders
def test_a_ratio_too_large_for_a_double_is_no_ratio(glossary: Path, tmp_path: Path) -> None:
    """Medians 1e15 and 1e-300 apart: 'about inf× slower than' was on the page."""
    extra = [
        Result("huge_median", 1.1e15, "ms", "huge", [1e15, 1.1e15, 1.2e15, 1.05e15, 1.15e15]),
        Result("tiny_median", 1.1e-300, "ms", "tiny", [1e-300, 1.1e-300, 1.2e-300, 1.05e-300, 1.15e-300]),
    ]
    for node in ("node-a", "node-b"):
        measure(glossary / "measurements", node, extra)
    warp = glossary / "terms" / "warp.yaml"
    body = '  Huge is {{ compare("warp-size.huge_median", "warp-size.tiny_median") }} tiny.\n\n'
    warp.write_text(warp.read_text(encoding="utf-8").replace("  A warp holds {{", body + "  A warp holds {{"))
    assert check(glossary).returncode == 0
    text = re.sub(r"<[^>]+>", "", site(glossary, tmp_path)[0])
    assert "Huge is slower than tiny." in text
    assert "inf" not in text


class _Markup(HTMLParser):
    """Every tag and attribute of a page's article."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [(name, value or "") for name, value in attrs]


def assert_inert(article: str) -> None:
    markup = _Markup()
    markup.feed(article)
    assert not {"script", "img", "b"} & set(markup.tags)
    assert not [name for name, _ in markup.attributes if name.startswith("on")]
    assert not [v for name, v in markup.attributes if name == "href" and v.strip().lower().startswith("javascript")]
    assert "admonition danger" not in article


@pytest.mark.builders
def test_hostile_says_holds_and_drift_reach_the_html_escaped(glossary: Path, tmp_path: Path) -> None:
    """What a claim says, its condition with text in it, and the drift of a forged but well-formed
    file are shown as the text they are; a `\\{{` the check asks for in says shows as `{{`."""
    drift = [Drift("driver_version", EVIL[:200], "590.10"), Drift("cpu", "`x` | y", None)]
    provenance = {
        "node": "node-a",
        "gpu_name": "GPU node-a",
        "recorded_at": "2026-12-01T10:00:00+00:00",
        "driver_version": "590.10",
    }
    measure(glossary / "measurements", "node-a", drift=drift, provenance=provenance)
    says = "<script>alert(1)</script> `code` <img src=x onerror=alert(1)> *a* | b | ]: x \\{{ not a directive"
    text = "'<script>alert(1)</script> <img src=x onerror=alert(1)> </code><b>bold</b> ` [x](javascript:alert(1))'"
    add_claims(glossary, (says, f"warp-size.warp_size >= 32 or {text} == 'a'"))
    assert check(glossary).returncode == 0
    article, measurements = site(glossary, tmp_path, "terms/warp", "measurements/warp-size")
    assert_inert(article)
    assert "{{ not a directive." in article and "\\{{" not in article
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in article
    assert_inert(measurements)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in measurements, "the drift is shown, as text"


def test_a_forged_drift_that_changes_nothing_or_contradicts_its_run_is_refused(glossary: Path) -> None:
    """make verify writes drift only for a key whose value changed, to the value its run records."""
    path = glossary / "measurements" / "warp-size" / "node-a.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["provenance"]["driver_version"] = "590.10"
    data["format_version"] = 2
    data["drift"] = [
        {"name": "cpu", "old": "x", "new": "x"},
        {"name": "driver_version", "old": "580.159.04", "new": "600.1"},
        {"name": "nvrtc_version", "old": 12, "new": 13},
    ]
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    run = check(glossary)
    assert run.returncode == 1
    shown = "measurements/warp-size/node-a.json"
    entry, new = line_of(path, '"name": "cpu"') - 1, line_of(path, '"new": "600.1"')
    assert f"{shown}:{entry}:5: drift[0]: 'cpu' did not change: old and new are the same" in run.stderr
    assert f"{shown}:{new}:14: drift[1].new: is not '590.10', what this run's provenance says driver_version is" in (
        run.stderr
    )
    assert "drift[2]" not in run.stderr, "a key the run does not record may have changed from 12 to 13"


def test_two_claims_that_say_the_same_are_an_error(glossary: Path) -> None:
    warp = add_claims(
        glossary,
        ("A warp is small", "warp-size.warp_size <= 64"),
        ("A  WARP is small", "warp-size.warp_size >= 1"),
    )
    run = check(glossary)
    assert run.returncode == 1
    line = line_of(warp, '- says: "A  WARP is small"')
    assert f"terms/warp.yaml:{line}:11: claims[1].says: says what claims[0] says" in run.stderr
    assert "1 error found" in run.stderr


def test_a_claim_judged_on_stale_values_says_so(tmp_path: Path) -> None:
    """A file made by an older recipe still decides a claim, but its verdict is marked."""
    for folder in ("terms", "measurements", "computed", "verifier"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / "measurements" / "ptx-jit" / "h200-3f1ceb1e.json"
    other = json.loads(path.read_text(encoding="utf-8"))  # a second card, its file current
    other["provenance"].update(node="h200-other", gpu_uuid="GPU-00000000-0000-0000-0000-000000000002")
    (path.parent / "h200-other.json").write_text(json.dumps(other, indent=2), encoding="utf-8")
    path.write_text(path.read_text(encoding="utf-8").replace('"recipe": "sha256:', '"recipe": "sha256:0'))
    for earlier in path.parent.glob("h200-3f1ceb1e~*.json"):  # made by the latest run's recipe, which changed
        earlier.unlink()
    term = tmp_path / "terms" / "jit-compilation.yaml"
    claim = "claims:\n  - says: Starting the driver is free\n    holds: ptx-jit.cuinit_median < 0\n"
    term.write_text(term.read_text(encoding="utf-8").replace("claims:\n", claim, 1))
    run = check(tmp_path)
    assert run.returncode == 1
    failed = [line for line in run.stderr.splitlines() if "claims[0]" in line and "'h200-3f1ceb1e'" in line]
    line = line_of(term, "- says: Starting the driver is free")
    assert len(failed) == 1 and failed[0].startswith(
        f"terms/jit-compilation.yaml:{line}:5: claims[0]: 'Starting the driver is free' does not hold on node "
        "'h200-3f1ceb1e' (NVIDIA H200): ptx-jit.cuinit_median = "
    )
    assert failed[0].endswith(" ms < 0 (stale: made by an older recipe or summary)")
    others = [line for line in run.stderr.splitlines() if "claims[0]" in line and "'h200-3f1ceb1e'" not in line]
    assert others and not any("stale" in line for line in others)  # only the card whose file is stale says so


def test_a_condition_cannot_carry_a_typed_gpu_number_to_the_page(glossary: Path) -> None:
    """The condition is shown on the page; its text values were not checked for typed numbers, in a code
    span or not."""
    warp = add_claims(
        glossary,
        ("A warp is not empty", "warp-size.warp_size > 0 or 'the H200 has 132 SMs' == 'x'"),
        ("A warp is not huge", "warp-size.warp_size < 1e6 or '`80 GB`' == 'x'"),
        ("A warp is not tiny", "warp-size.warp_size > 1e-6 or '    4 MiB' == 'x'"),
    )
    run = check(glossary)
    assert run.returncode == 1
    lines = [
        line_of(warp, "holds:", line_of(warp, f"- says: {s}"))
        for s in ('"A warp is not empty"', '"A warp is not huge"')
    ]
    assert (
        f"terms/warp.yaml:{lines[0]}:12: claims[0].holds: the text 'the H200 has 132 SMs' states '132 SMs', "
        "a number about a GPU typed by hand\n    hint: compare measured values, not text that states them"
    ) in run.stderr
    assert f"terms/warp.yaml:{lines[1]}:12: claims[1].holds: the text '`80 GB`' states '80 GB'" in run.stderr
    assert "claims[2].holds: the text '    4 MiB' states '4 MiB'" in run.stderr
    assert "3 errors found" in run.stderr


def test_measured_text_in_an_explanation_cannot_forge_report_lines(glossary: Path) -> None:
    """A text result may hold line breaks (a JIT log): in a failed claim's explanation they forged a
    `path:line:col:` line of their own, and 20,000 characters of log made one message."""
    log = "line one\nterms/fake.yaml:1:1: forged error\n" + "x" * 5000
    for node in ("node-a", "node-b"):
        measure(glossary / "measurements", node, [Result("log", log, "", "the JIT log")])
    add_claims(glossary, ("The log says nothing", "warp-size.log == 'ok'"))
    run = check(glossary)
    assert run.returncode == 1
    assert not [line for line in run.stderr.splitlines() if line.startswith("terms/fake.yaml")]
    assert 'warp-size.log = "line one\\nterms/fake.yaml:1:1: forged error\\nxxx' in run.stderr
    assert max(len(line) for line in run.stderr.splitlines()) < 500


CANNOT_FAIL = [
    "warp-size.warp_size == warp-size.warp_size",
    "warp-size.warp_size * 0 == 0",
    "not differ(warp-size.query_median, warp-size.query_median)",
    "warp-size.warp_size > 16 or warp-size.warp_size <= 16",
    "warp-size.query_median - warp-size.query_median < 1",
    "max(warp-size.warp_size, 1) >= warp-size.warp_size",
]
CAN_FAIL = [
    "warp-size.warp_size == 32",
    "warp-size.query_median < warp-size.launch_median and differ(warp-size.query_median, warp-size.launch_median)",
    "warp-size.warp_size > 0",
    "not differ(warp-size.query_median, warp-size.launch_median) or warp-size.warp_size < 64",
]


def reported(warp: Path, run: subprocess.CompletedProcess[str], says: str) -> tuple[int, list[str]]:
    """The line of the claim that says `says`' condition, and the report's lines about it."""
    line = line_of(warp, "holds:", line_of(warp, f'- says: "{says}"'))
    return line, [entry for entry in run.stderr.splitlines() if entry.startswith(f"terms/warp.yaml:{line}:")]


def test_a_claim_that_cannot_fail_is_an_author_error_at_its_place(glossary: Path) -> None:
    """Issue 27, class 3: a condition true whatever is measured would be published as checked."""
    warp = add_claims(
        glossary,
        *((f"Tautology {i}", holds) for i, holds in enumerate(CANNOT_FAIL)),
        *((f"Real claim {i}", holds) for i, holds in enumerate(CAN_FAIL)),
    )
    run = check(glossary)
    assert run.returncode == 1
    for i in range(len(CANNOT_FAIL)):
        line, _ = reported(warp, run, f"Tautology {i}")
        assert f"terms/warp.yaml:{line}:12: claims[{i}].holds: cannot fail: it holds whatever" in run.stderr, i
    assert f"{len(CANNOT_FAIL)} errors found" in run.stderr, run.stderr


UNIT_MISTAKES = (
    ("warp-size.query_median * warp-size.launch_median > warp-size.query_median", "(ms²) compared with"),
    ("warp-size.query_median / warp-size.launch_median < warp-size.query_median", "(no unit) compared with"),
    ("warp-size.warp_size * warp-size.query_median > warp-size.launch_median", "(threads·ms) compared with"),
    ("warp-size.query_median + 1 / warp-size.launch_median > 1", "(ms) added to 1 / warp-size.launch_median (1/ms)"),
)
UNITS_THAT_FIT = (
    "warp-size.query_median * warp-size.query_median < warp-size.launch_median * warp-size.launch_median",
    "warp-size.query_median / warp-size.launch_median < 0.5",
    "warp-size.launch_median / warp-size.query_median > warp-size.warp_size / warp-size.warp_size",
)


def test_units_multiply_and_a_mismatch_is_an_error_at_its_place(glossary: Path) -> None:
    """Issue 27, class 3: ms × ms is ms², a rate over a rate has no unit, different units do not compare."""
    warp = add_claims(
        glossary,
        *((f"Unit mistake {i}", holds) for i, (holds, _) in enumerate(UNIT_MISTAKES)),
        *((f"Units that fit {i}", holds) for i, holds in enumerate(UNITS_THAT_FIT)),
    )
    run = check(glossary)
    assert run.returncode == 1
    for i, (_, message) in enumerate(UNIT_MISTAKES):
        _, found = reported(warp, run, f"Unit mistake {i}")
        assert found and message in found[0], (i, run.stderr)
    assert f"{len(UNIT_MISTAKES)} errors found" in run.stderr, run.stderr
