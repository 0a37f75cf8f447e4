"""Report a problem with the evidence (issue 30, part 6): each term page links a new issue in the
repository, prefilled with the page, the term's file, the commit and every value shown with the
nodes that measured it; always one address a browser sends whole, whatever the page holds."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import FIXTURES, ROOT
from cudagloss.load.glossary import load_glossary
from cudagloss.model.project import Project
from cudagloss.model.urls import MAX_URL_LENGTH
from cudagloss.site.renderer import Renderer
from fleets import FLEETS

REPO = "https://github.com/example/glossary"


def _renderer(root: Path, fleet: str, **settings: object) -> Renderer:
    shutil.copytree(FIXTURES / "fleet" / "terms", root / "terms")
    folder = root / "measurements" / "copy-bench"
    folder.mkdir(parents=True)
    for record in FLEETS[fleet]:
        (folder / f"{record['provenance']['node']}.json").write_text(json.dumps(record), encoding="utf-8")
    project = Project(
        root=root, terms_dir=root / "terms", templates_dir=ROOT / "templates", measurements_dir=root / "measurements"
    )
    project = dataclasses.replace(project, **settings)  # type: ignore[arg-type]
    return Renderer(load_glossary(project), project)


def _issue(r: Renderer) -> tuple[str, dict[str, str]]:
    report = r.term_view("copy-bandwidth").report
    assert report is not None
    address = str(report).replace("&amp;", "&")
    query = {k: v[0] for k, v in parse_qs(urlsplit(address).query).items()}
    return address, query


def test_the_issue_names_the_page_file_commit_nodes_and_each_value_once(tmp_path: Path) -> None:
    r = _renderer(tmp_path, "two-models", repo_url=REPO, site_url="https://glossary.example/", commit="abc1234")
    address, issue = _issue(r)
    assert address.startswith(f"{REPO}/issues/new?") and len(address) <= MAX_URL_LENGTH
    assert issue["title"] == "Problem on the page \u201ccopy bandwidth\u201d"
    body = issue["body"].splitlines()
    assert body[:3] == [
        "Page: https://glossary.example/terms/copy-bandwidth/",
        "Term file: terms/copy-bandwidth.yaml",
        "Site built from commit: abc1234",
    ]
    assert "- h100-a: NVIDIA H100 80GB HBM3, driver not recorded, measured 2026-11-21" in body
    assert "- copy-bench.copy_ms: 0.1–0.25 ms on 2 H200s" in body  # the prose's one number, not each node's
    assert "- copy-bench.sm_count: 132 SMs" in body


def test_a_page_with_many_values_keeps_the_address_whole_and_counts_the_rest(tmp_path: Path) -> None:
    r = _renderer(tmp_path, "twelve-nodes", repo_url=REPO + "/" + "x" * 500)
    address, issue = _issue(r)
    assert len(address) <= MAX_URL_LENGTH and "more, on the page" in issue["body"]
    assert issue["body"].rstrip().endswith("(a source or a measurement that shows it helps):")


def test_no_repository_no_link_and_nothing_the_page_did_not_say(tmp_path: Path) -> None:
    assert _renderer(tmp_path / "a", "one-node").term_view("copy-bandwidth").report is None
    _, issue = _issue(_renderer(tmp_path / "b", "one-node", repo_url=REPO))
    assert "Site built from commit: not recorded" in issue["body"]


@pytest.mark.parametrize("name", ['"quoted" <script>alert(1)</script>', "ampersand & #fragment ?q=1 =+%20 \u00e9"])
def test_hostile_term_text_is_data_in_the_query_never_markup_or_another_parameter(tmp_path: Path, name: str) -> None:
    r = _renderer(tmp_path, "one-node", repo_url=REPO)
    path = tmp_path / "terms" / "copy-bandwidth.yaml"
    quoted = json.dumps(name, ensure_ascii=False)
    path.write_text(path.read_text(encoding="utf-8").replace("name: copy bandwidth", f"name: {quoted}"))
    project = r.project
    r = Renderer(load_glossary(project), project)
    address, issue = _issue(r)
    assert set(issue) == {"title", "body"} and name in issue["title"]
    assert not any(c in address for c in '<>" \n\u2028')
