"""`cudagloss links` as plan -> check -> stamp -> report: the plan reads the terms without
judging them, so a glossary whose claims fail or whose measurements are broken still has its
links checked and stamped; what the checker needs (readable terms, public source URLs, no
checked_on in the future) still stops it before any request, with `make check`'s own words."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ruamel.yaml")

from conftest import FIXTURES, cudagloss
from cudagloss.links.findings import Findings
from cudagloss.links.plan import Citation, LinkPlan, plan
from cudagloss.links.report import FORMATS, LinkReport
from cudagloss.links.source_stamps import UrlStamps, source_plan
from cudagloss.links.status import LinkResult, LinkStatus
from cudagloss.load.link_report import load_link_report
from cudagloss.model.limits import COUNT_MAX, FIRST_DAY
from localserver import Quiet, running

TODAY = dt.date.today().isoformat()
"""The day the link checker stamps, set again as each test starts (conftest's stamp_day)."""
pytestmark = pytest.mark.usefixtures("stamp_day")


DAY = dt.date(2026, 9, 3)
JUDGES = (
    "cudagloss.check.claims",
    "cudagloss.model.claims",
    "cudagloss.model.verdicts",
    "cudagloss.check.typed_numbers",
    "cudagloss.check.validate",
    "cudagloss.load.corpus",
    "cudagloss.load.glossary",
    "cudagloss.load.measurements",
)
"""The check stage's judges: claims, typed numbers, the rules across files, and the reading of
measurement files. The link command loads none of them."""


class Handler(Quiet):
    def do_HEAD(self) -> None:
        self.send_response(200 if self.path == "/warps" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running(Handler) as url:
        yield url


@pytest.fixture
def broken_glossary(tmp_path: Path, server: str) -> Path:
    """The good fixture corpus with its sources on the local server, a claim that fails on the
    measured nodes, and a measurement file that is not JSON: `make check` refuses it twice."""
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    shutil.copytree(FIXTURES / "good-measurements", tmp_path / "measurements")
    (tmp_path / "measurements" / "warp-size" / "fixture-c.json").write_text("{ not json", encoding="utf-8")
    warp = tmp_path / "terms" / "warp.yaml"
    text = warp.read_text(encoding="utf-8").replace("https://example.com/", f"{server}/")
    claim = "claims:\n  - says: A warp has 64 threads on every GPU measured\n    holds: 'warp-size.warp_size == 64'\n"
    warp.write_text(text.replace("byline:\n", claim + "byline:\n"), encoding="utf-8")
    return tmp_path


def test_links_checks_and_stamps_a_glossary_whose_claims_fail_and_measurements_are_broken(
    broken_glossary: Path, server: str
) -> None:
    checked = cudagloss(broken_glossary, "check", "terms")
    assert checked.returncode == 1, checked.stderr
    assert "claims[0]: 'A warp has 64 threads on every GPU measured' does not hold" in checked.stderr
    assert "measurements/warp-size/fixture-c.json:1:" in checked.stderr
    warp = broken_glossary / "terms" / "warp.yaml"
    run = cudagloss(broken_glossary, "links", "terms")
    assert run.returncode == 1, run.stderr  # /unchecked answers 404: the links, not the claim
    line = warp.read_text(encoding="utf-8").splitlines().index(f"    url: {server}/unchecked") + 1
    assert f"terms/warp.yaml:{line}: [broken] {server}/unchecked (HTTP 404)" in run.stdout
    assert "claims" not in run.stderr and "fixture-c" not in run.stderr, run.stderr
    assert f"    checked_on: {TODAY}" in warp.read_text(encoding="utf-8")  # /warps was stamped


def test_the_link_command_never_loads_the_claim_judge(broken_glossary: Path) -> None:
    """The real command line, in a fresh interpreter: after a whole `links` run (--no-stamp),
    not one of the check stage's judges was imported, let alone run."""
    code = textwrap.dedent(
        f"""
        import contextlib, io, json, sys
        from cudagloss.commands.main import main
        with contextlib.redirect_stdout(io.StringIO()) as out:
            status = main(["links", "terms", "--no-stamp", "--format", "json"])
        print(json.dumps({{"status": status, "report": json.loads(out.getvalue()),
                           "judges": [m for m in {JUDGES!r} if m in sys.modules]}}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=broken_glossary, capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["judges"] == [] and found["status"] == 1, found
    assert found["report"]["counts"] == {"ok": 1, "broken": 1}, found


@pytest.mark.parametrize(
    ("url", "stamp", "message"),
    [
        ("https://10.1.2.3/ptx", "", "sources[0].url: 'https://10.1.2.3/ptx' "),
        ("https://example.com/ptx", "    checked_on: 2999-01-01\n", "checked_on: 2999-01-01 is in the future"),
    ],
    ids=["private-address", "checked-on-in-the-future"],
)
def test_what_the_checker_needs_still_stops_it_as_make_check_says(
    tmp_path: Path, url: str, stamp: str, message: str
) -> None:
    """A source the checker may not ask for, or a stamp that would keep its URL fresh forever:
    exit 2 before any request, with the diagnostic `make check` prints for it."""
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    lane = tmp_path / "terms" / "lane.yaml"
    assert "sources:" not in lane.read_text(encoding="utf-8")
    with lane.open("a", encoding="utf-8") as f:
        f.write(f"sources:\n  - title: PTX\n    url: {url}\n{stamp}")
    before = lane.read_text(encoding="utf-8")
    run = cudagloss(tmp_path, "links", "terms")
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    mine = [x for x in run.stderr.splitlines() if message in x]
    assert len(mine) == 1 and mine[0].startswith("terms/lane.yaml:"), run.stderr
    checked = cudagloss(tmp_path, "check", "--no-measurements", "terms")
    assert mine[0] in checked.stderr.splitlines(), checked.stderr  # the same words, at the same place
    assert lane.read_text(encoding="utf-8") == before


def test_the_plan_lists_every_url_once_with_its_citations_and_what_to_stamp(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    today = dt.date(2026, 9, 3)
    planned = plan(tmp_path / "terms", tmp_path, today=today, max_age=3, force=False)
    assert set(planned.by_url) >= {"https://example.com/warps", "https://example.com/unchecked"}
    warps = planned.by_url["https://example.com/warps"]
    assert [(c.path, c.checked_on) for c in warps] == [("terms/warp.yaml", dt.date(2026, 9, 1))]
    assert "https://example.com/warps" not in planned.todo  # found reachable two days ago
    assert "https://example.com/unchecked" in planned.todo and planned.skipped == 1
    forced = plan(tmp_path / "terms", tmp_path, today=today, max_age=3, force=True)
    assert forced.todo == list(forced.by_url) and forced.skipped == 0
    found = Findings()
    found.results.update(
        {
            "https://example.com/unchecked": LinkResult("https://example.com/unchecked", LinkStatus.REDIRECTED),
            "https://example.com/gone": LinkResult("https://example.com/gone", LinkStatus.BROKEN),
        }
    )
    assert found.stamps(today) == {
        "https://example.com/unchecked": UrlStamps(reachable_on=today),
        "https://example.com/gone": UrlStamps(failed=True),
    }


def test_each_format_is_a_formatter_over_the_same_report() -> None:
    cite = Citation("https://a.example/x", "terms/t.yaml", Path("terms/t.yaml"), 7, None)
    planned = LinkPlan({"https://a.example/x": [cite], "https://a.example/y": []}, ["https://a.example/x"], DAY, 3)
    report = LinkReport(
        planned,
        {"https://a.example/x": LinkResult("https://a.example/x", LinkStatus.BROKEN, "HTTP 404", 404)},
        ["terms/t.yaml"],
    )
    assert set(FORMATS) == {"text", "json"}
    assert FORMATS["text"](report).splitlines() == [
        "terms/t.yaml:7: [broken] https://a.example/x (HTTP 404)",
        "result             count",
        "ok                 0",
        "redirected         0",
        "blocked            0",
        "rate-limited       0",
        "timeout            0",
        "broken             1",
        "invalid            0",
        "quote-found        0",
        "quote-missing      0",
        "quote-unverifiable 0",
        "skipped            1 (checked within 3 days)",
        "stamped 1 term files",
    ]
    document = json.loads(FORMATS["json"](report))
    assert document["checked"] == 1 and document["skipped_fresh"] == 1 and document["stamped"] == ["terms/t.yaml"]
    assert document["results"][0]["cited_at"] == ["terms/t.yaml:7"] and document["counts"] == {"broken": 1}


def test_a_report_of_a_source_broken_for_the_most_runs_counted_is_read_back(tmp_path: Path) -> None:
    """The stamps stop counting at COUNT_MAX; the report says what the stamps say, so that
    `render --link-report` reads it (it refuses a count past COUNT_MAX as not ours)."""
    url = "https://a.example/gone"
    cite = Citation(url, "terms/t.yaml", Path("terms/t.yaml"), 7, None, failed_checks=COUNT_MAX)
    report = LinkReport(
        LinkPlan({url: [cite]}, [url], FIRST_DAY, 3), {url: LinkResult(url, LinkStatus.BROKEN, "HTTP 404", 404)}, []
    )
    assert report.failed_checks(url) == COUNT_MAX
    assert source_plan({"failed_checks": COUNT_MAX}, UrlStamps(failed=True)) == [("failed_checks", COUNT_MAX)]
    path = tmp_path / "links.json"
    path.write_text(FORMATS["json"](report))
    assert load_link_report(path).by_url[url].failed_checks == COUNT_MAX
