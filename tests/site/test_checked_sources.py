"""Checked dates on the published site (issue 29, part 5): what a page says after a source.

The publish job checks every source before it builds, stamps its copy, and hands the build
the run's JSON report, so a page says "checked YYYY-MM-DD", or what the run found instead
(unreachable, could not be checked), and "not yet checked" only where no check ran; and
`render --require-checked` refuses a source nobody ever found reachable.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, cudagloss
from cudagloss.check.fields import DATE_SLACK, utc_today
from cudagloss.errors import GlossaryError
from cudagloss.links.status import LinkStatus
from cudagloss.load.link_report import MAX_BYTES, load_link_report
from cudagloss.model.limits import FIRST_DAY
from cudagloss.model.link_checks import RESULTS, LinkCheck, LinkChecks, checked, checked_phrase
from scaffold import good_glossary

DAY = dt.date(2026, 12, 4)
CHECKED = "2026-09-01"
URL = "https://example.com/warps"
UNCHECKED_URL = "https://example.com/unchecked"


def test_the_model_knows_every_result_the_link_checker_gives() -> None:
    assert set(RESULTS) == {s.value for s in LinkStatus}
    assert {r for r in RESULTS if LinkStatus(r).reachable} == {"ok", "redirected"}
    assert {r for r in RESULTS if LinkStatus(r).fails} == {"broken", "invalid"}


@pytest.mark.parametrize(
    ("stamp", "result", "said"),
    [
        (CHECKED, None, f"checked {CHECKED}"),
        ("pending", None, "not yet checked"),
        (CHECKED, "ok", f"checked {CHECKED}"),
        (CHECKED, "broken", f"checked {CHECKED}; unreachable on 2026-12-04"),
        (CHECKED, "timeout", f"checked {CHECKED}"),  # a timeout says nothing of a page once found
        ("pending", "redirected", "checked 2026-12-04"),  # a --no-stamp run found it
        ("pending", "invalid", "unreachable when checked on 2026-12-04"),
        ("pending", "blocked", "could not be checked on 2026-12-04: it blocked the checker"),
        ("pending", "rate-limited", "could not be checked on 2026-12-04: it rate-limited the checker"),
        ("pending", "timeout", "could not be checked on 2026-12-04: it timed out"),
    ],
)
def test_a_page_says_what_the_stamp_and_the_run_found(stamp: str, result: str | None, said: str) -> None:
    checks = LinkChecks(DAY, {URL: LinkCheck(result)} if result else {})
    assert checked_phrase(stamp, URL, checks) == said
    assert checked(stamp, URL, checks) == said.startswith("checked")


def test_without_a_report_a_page_says_what_the_stamp_says() -> None:
    assert checked_phrase(CHECKED, URL, None) == f"checked {CHECKED}"
    assert checked_phrase("pending", URL, None) == "not yet checked"
    assert not checked("pending", URL, None)


def _report(path: Path, results: Sequence[Mapping[str, object]], day: str = "2026-12-04") -> Path:
    path.write_text(json.dumps({"checked_on": day, "checked": len(results), "results": results}), encoding="utf-8")
    return path


def test_a_report_is_read_as_the_link_checker_writes_it(tmp_path: Path) -> None:
    report = _report(tmp_path / "r.json", [{"url": URL, "result": "broken", "detail": "HTTP 404", "chain": []}])
    checks = load_link_report(report)
    assert checks.day == DAY and checks.by_url == {URL: LinkCheck("broken")}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ["1:1: not JSON: the file is empty"]),
        ("[1, 2]", ["1:1: a link report is one JSON object"]),
        ('{"checked_on": "yesterday", "results": {}}', ["1:16: 'checked_on' must", "1:40: 'results' must"]),
        (
            '{"checked_on": "2026-12-04",\n "results": [7, {"url": "u", "result": "fine"}, {"url": 1, "result": "ok"}]'
            "}",
            ["2:14: results[0] must", "2:17: results[1] must", "2:49: results[2] must"],
        ),
        ('{"checked_on": "2026-12-04", "results": [], "checked_on": "2026-12-05"}', None),
    ],
)
def test_a_bad_report_is_every_mistake_at_its_place(tmp_path: Path, text: str, expected: list[str] | None) -> None:
    path = tmp_path / "r.json"
    path.write_text(text, encoding="utf-8")
    if expected is None:  # a repeated key: strict JSON keeps the first, as every reader of ours does
        assert load_link_report(path).day == DAY
        return
    with pytest.raises(GlossaryError) as info:
        load_link_report(path)
    said = [f"{d.line}:{d.col}: {d.message}" for d in info.value.diagnostics]
    assert len(said) == len(expected) and all(s.startswith(e) for s, e in zip(said, expected, strict=True)), said
    assert all(d.path.endswith("r.json") and d.hint for d in info.value.diagnostics)


@pytest.mark.parametrize(
    ("day", "says"),
    [
        ("2999-01-01", "'checked_on' 2999-01-01 is in the future: a report is of a run that was made"),
        ("1900-01-01", "'checked_on' 1900-01-01 is before 2026-12-02, the project's first day: no run is older"),
        (str(FIRST_DAY - dt.timedelta(days=1)), "is before 2026-12-02"),
        (dt.timedelta(days=2), "is in the future"),
    ],
)
def test_a_report_dated_when_no_run_was_made_is_refused_at_its_day(
    tmp_path: Path, day: str | dt.timedelta, says: str
) -> None:
    """A day after today is read as the test runs (an offset), not when it was collected: a run
    that crosses midnight would otherwise judge yesterday's 'day after tomorrow'."""
    day = str(utc_today() + day) if isinstance(day, dt.timedelta) else day
    with pytest.raises(GlossaryError) as info:
        load_link_report(_report(tmp_path / "r.json", [], day))
    (said,) = info.value.diagnostics
    assert (said.line, said.col) == (1, 16) and says in said.message and said.hint


@pytest.mark.parametrize("day", [FIRST_DAY, DATE_SLACK])
def test_a_report_of_the_first_day_or_of_tomorrow_in_utc_is_read(tmp_path: Path, day: dt.date | dt.timedelta) -> None:
    day = utc_today() + day if isinstance(day, dt.timedelta) else day
    assert load_link_report(_report(tmp_path / "r.json", [], str(day))).day == day


def test_render_refuses_a_report_from_the_future_in_one_line(tmp_path: Path) -> None:
    root = good_glossary(tmp_path, "sources: []\n")
    shutil.copytree(ROOT / "templates", root / "templates")  # a folder mkdocs.yml names is in the repository
    (root / "mkdocs.yml").write_text("site_name: T\n", encoding="utf-8")
    _report(root / "links.json", [], "2999-01-01")
    run = cudagloss(root, "render", "--out", "tree", "--link-report", "links.json")
    assert run.returncode != 0 and "Traceback" not in run.stderr, run.stderr
    assert "links.json:1:16: 'checked_on' 2999-01-01 is in the future" in run.stderr + run.stdout
    assert not (root / "tree").exists()


def test_a_report_that_is_not_text_or_too_large_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    binary = tmp_path / "b.json"
    binary.write_bytes(b'{"checked_on": "\xff"}')
    with pytest.raises(GlossaryError, match="not UTF-8"):
        load_link_report(binary)
    large = tmp_path / "l.json"
    with large.open("wb") as f:
        f.truncate(MAX_BYTES + 1)  # sparse: no disk spent
    with pytest.raises(GlossaryError, match=f"larger than {MAX_BYTES:,} bytes"):
        load_link_report(large)
    with pytest.raises(GlossaryError, match="cannot read"):
        load_link_report(tmp_path / "missing.json")


@pytest.fixture
def glossary(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    shutil.copytree(FIXTURES / "good-measurements", tmp_path / "measurements")
    shutil.copytree(ROOT / "templates", tmp_path / "templates")  # a folder mkdocs.yml names is in the repository
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: T\nextra:\n  glossary:\n    terms_dir: terms\n    measurements_dir: measurements\n",
        encoding="utf-8",
    )
    return tmp_path


def _render(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cudagloss", "render", "--out", "tree", *args]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.processes
def test_require_checked_names_every_source_never_found_reachable_and_writes_nothing(glossary: Path) -> None:
    """warp's second source has no stamp: named at its place; its first (stamped) is not."""
    warp = (glossary / "terms" / "warp.yaml").read_text(encoding="utf-8").splitlines()
    entry = next(i for i, line in enumerate(warp, 1) if "- title: A source not checked yet" in line)
    run = _render(glossary, "--require-checked")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.splitlines()[0] == (
        f"terms/warp.yaml:{entry}:5: sources[1].checked_on: never found reachable (not yet checked)"
    )
    assert "hint: run `make links`" in run.stderr and run.stderr.rstrip().endswith("1 error found")
    assert not (glossary / "tree").exists()
    assert _render(glossary).returncode == 0  # off by default: an author without network still builds


@pytest.mark.processes
def test_a_report_that_found_every_source_lets_the_strict_build_through_and_the_page_says_so(glossary: Path) -> None:
    urls = {
        line.split("url: ", 1)[1].strip()
        for path in (glossary / "terms").glob("*.yaml")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip().startswith("url: ")
    }
    results = [{"url": u, "result": "broken" if u == UNCHECKED_URL else "ok"} for u in urls]
    _report(glossary / "links.json", results)
    run = _render(glossary, "--require-checked", "--link-report", "links.json")
    assert run.returncode == 1 and "warp.yaml" in run.stderr and "unreachable when checked on 2026-12-04" in run.stderr
    _report(glossary / "links.json", [{"url": u, "result": "ok"} for u in urls])
    run = _render(glossary, "--require-checked", "--link-report", "links.json")
    assert run.returncode == 0, run.stderr
    page = (glossary / "tree" / "docs" / "terms" / "warp.md").read_text(encoding="utf-8")
    assert f"(checked {CHECKED})" in page and "(checked 2026-12-04)" in page and "not yet checked" not in page
