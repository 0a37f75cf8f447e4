"""The real `mkdocs build --strict` on the repository's terms and on the fixture corpus.

The repository's site is the session's (tests/browsing.py: repo_site), built once for every test
that reads it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, cudagloss
from sitebuild import REPO_TERMS, build, fixture_config
from sitecheck import broken_links, internal_target, parse

pytestmark = pytest.mark.builders

SECTION_IDS = ["measured", "related-terms", "where-you-meet-this", "sources", "byline"]


@pytest.fixture(scope="module")
def fixture_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("fixture")
    run = build(fixture_config(tmp, FIXTURES / "good"), tmp / "site")
    assert run.returncode == 0, run.stderr
    return tmp / "site"


@pytest.mark.parametrize("slug", REPO_TERMS)
def test_every_term_page_has_every_section(repo_site: Path, slug: str) -> None:
    page = repo_site / "terms" / slug / "index.html"
    links = parse(page)
    for section in SECTION_IDS:
        assert section in links.ids, f"{slug}: no '{section}' section"
    html = page.read_text(encoding="utf-8")
    assert '"@type": "DefinedTerm"' in html
    assert html.count("<h1 id=") == 1


def test_the_five_first_terms_exist() -> None:
    assert {"jit-compilation", "no-kernel-image", "sass", "ptx", "jit-cache"} <= set(REPO_TERMS)


def test_home_has_sections_and_a_to_z_with_every_term(repo_site: Path) -> None:
    home = repo_site / "index.html"
    links = parse(home)
    assert {"sections", "az"} <= links.ids
    for slug in REPO_TERMS:
        assert f"terms/{slug}/" in links.hrefs
    html = home.read_text(encoding="utf-8")
    assert '"@type": "DefinedTermSet"' in html
    for section in ("compilation", "instruction-sets", "errors"):
        assert (repo_site / "sections" / section / "index.html").exists()


@pytest.mark.parametrize("which", ["repo_site", "fixture_site"])
def test_internal_links_resolve(which: str, request: pytest.FixtureRequest) -> None:
    site: Path = request.getfixturevalue(which)
    assert broken_links(site) == []


@pytest.mark.parametrize("which", ["repo_site", "fixture_site"])
def test_sidebar_lists_sections_not_terms(which: str, request: pytest.FixtureRequest) -> None:
    site: Path = request.getfixturevalue(which)
    pages = sorted(p for p in site.rglob("*.html") if p.name != "404.html")
    assert len(pages) > 5
    for page in pages:
        targets = [internal_target(site, page, h) for h in parse(page).nav_hrefs]
        paths = [t[0].relative_to(site).as_posix() for t in targets if t is not None]
        assert [p for p in paths if p.startswith("terms/")] == [], page
        assert sum(p.startswith("sections/") for p in paths) >= 2, page


def test_search_finds_names_aliases_and_error_strings(repo_site: Path) -> None:
    index = json.loads((repo_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    text = {d["location"]: d["text"] for d in index["docs"] if "#" not in d["location"]}
    page = text["terms/no-kernel-image/"]
    assert "no kernel image is available for execution on the device" in page
    assert "no binary for GPU" in page
    assert "CUDA_ERROR_NO_BINARY_FOR_GPU" in page
    assert "just-in-time compilation" in text["terms/jit-compilation/"]


def test_edit_link_points_at_the_term_yaml(repo_site: Path) -> None:
    html = (repo_site / "terms" / "jit-compilation" / "index.html").read_text(encoding="utf-8")
    assert 'href="https://github.com/example/glossary/edit/main/terms/jit-compilation.yaml"' in html


def test_auto_links_carry_the_definition_as_tooltip(repo_site: Path) -> None:
    html = (repo_site / "terms" / "jit-compilation" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<a href="../sass/" title="The native machine code of an NVIDIA GPU generation', html)
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "- content.tooltips" in config


def test_author_html_is_escaped_in_the_built_page(fixture_site: Path) -> None:
    html = (fixture_site / "terms" / "warp" / "index.html").read_text(encoding="utf-8")
    article = html[html.index("<article") : html.index("</article>")]
    assert "<script>alert" not in article and "<img src=x" not in article
    assert "&lt;img src=x onerror=alert(1)&gt;" in article
    assert "<em>without</em>" not in article


def test_broken_terms_stop_the_build_with_every_mistake(tmp_path: Path) -> None:
    site = tmp_path / "site"
    run = build(fixture_config(tmp_path, FIXTURES / "broken"), site)
    assert run.returncode != 0
    assert "Traceback" not in run.stderr
    positions = re.findall(r"broken/[\w.-]+\.ya?ml:\d+:\d+: ", run.stderr)
    assert len(positions) >= 24
    assert "errors in term or measurement files; nothing was built" in run.stdout + run.stderr
    assert not (site / "terms").exists()


def test_no_generated_page_is_written_into_the_repository(repo_site: Path) -> None:
    assert sorted(p.name for p in (ROOT / "docs").rglob("*.md")) == []
    assert (
        shutil.which("git") is None
        or "terms/"
        not in subprocess.run(
            ["git", "status", "--porcelain", "docs"], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout
    )


@pytest.mark.parametrize("slug", ["jit-compilation", "jit-cache", "no-kernel-image", "sass", "ptx"])
def test_the_five_pages_show_measured_values_linked_to_their_measurement_rows(repo_site: Path, slug: str) -> None:
    page = repo_site / "terms" / slug / "index.html"
    links = [h for h in parse(page).hrefs if "/measurements/" in h and "#" in h]
    reading = [h for h in links if h.endswith("#how-to-read-the-numbers")]  # the rules, on the index
    index = (page.parent / reading[0].split("#")[0]).resolve() / "index.html" if reading else page
    assert reading and "how-to-read-the-numbers" in parse(index).ids
    rows = [h for h in links if h not in reading]
    assert rows, f"{slug} shows no measured value"
    nodes = {p.stem.split("~")[0] for p in (ROOT / "measurements").glob("*/*.json")}  # every card that measured
    assert "h200-3f1ceb1e" in nodes
    for href in rows:
        target, fragment = (page.parent / href).resolve().parent, href.split("#", 1)[1]
        assert any(fragment.startswith(f"{n}-") for n in nodes) and fragment in parse(target / "index.html").ids
    text = page.read_text(encoding="utf-8")
    byline = re.search(r"The numbers came from (.*?)\.</p>", text)
    assert byline is not None and " node" not in byline[1], text
    named = re.findall(r"<code>([^<]+)</code>", byline[1])
    assert named and len(named) == len(set(named)) and set(named) <= nodes  # each card named once


def test_measurement_pages_carry_provenance_and_the_raw_json(repo_site: Path) -> None:
    for committed in sorted((ROOT / "measurements").glob("*/*.json")):
        experiment = committed.parent.name
        built = repo_site / "measurements" / experiment / committed.name
        published = built.read_text(encoding="utf-8")  # the same JSON, with <, > and & escaped as \u003c...
        assert json.loads(published) == json.loads(committed.read_text(encoding="utf-8"))
        assert not {"<", ">", "&"} & set(published)
        html = (repo_site / "measurements" / experiment / "index.html").read_text(encoding="utf-8")
        assert f'href="{committed.name}"' in html
        for label in ("GPU", "Compute capability", "Driver", "NVRTC", "Git commit", "Repeats"):
            assert f"<td>{label}</td>" in html, (experiment, label)
    index = parse(repo_site / "measurements" / "index.html").hrefs
    assert {f"{p.name}/" for p in (ROOT / "measurements").iterdir() if p.is_dir()} <= set(index)
    assert "measurements/" in parse(repo_site / "index.html").nav_hrefs


def test_the_site_publishes_the_whole_glossary_as_markdown_and_an_llms_txt(repo_site: Path) -> None:
    glossary = (repo_site / "llms-full.txt").read_text(encoding="utf-8")
    llms = (repo_site / "llms.txt").read_text(encoding="utf-8")
    for slug in REPO_TERMS:
        assert f'<a id="{slug}"></a>' in glossary
        assert f"](terms/{slug}/)" in llms
    # Links between terms are anchors of the one file; every anchor exists.
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', glossary))
    assert set(re.findall(r"\]\(#([^)\s]+)", glossary)) <= anchors
    # Measured values keep their provenance and point at pages the site has.
    grid = (
        r"\[1,056 blocks\]\(measurements/ptx-jit/#(h[0-9]00-[0-9a-f]{8})-grid "
        r'"[^"]*NVIDIA H[0-9]00[^"]*?&#40;card \1&#41;'
    )
    assert re.search(grid, glossary)
    for target in set(re.findall(r"\]\((measurements/[^)#\s]+|terms/[^)#\s]+)", glossary + llms)):
        assert (repo_site / target / "index.html").is_file(), target
    assert llms.startswith("# CUDA Glossary\n\n> ")
    assert "](llms-full.txt)" in llms
    assert "&#34;" not in llms + glossary and "&#39;" not in llms + glossary  # Markdown, not HTML-escaped


def test_cudagloss_export_writes_the_same_files_as_the_site(repo_site: Path, tmp_path: Path) -> None:
    run = cudagloss(ROOT, "export", "--out", str(tmp_path))
    assert run.returncode == 0, run.stderr
    for name in ("llms-full.txt", "llms.txt"):
        assert (tmp_path / name).read_text(encoding="utf-8") == (repo_site / name).read_text(encoding="utf-8")


def test_every_value_is_one_number_however_many_nodes_measured_it(repo_site: Path) -> None:
    """Issue 29: two H200 nodes measured every cited value, and no page prints it once per node."""
    doubled = [
        str(page.relative_to(repo_site))
        for page in sorted(repo_site.rglob("*.html"))
        if re.search(r"\(NVIDIA H200\)\s*/", re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))
    ]
    assert doubled == []
    occupancy = re.sub(r"<[^>]+>", "", (repo_site / "terms" / "occupancy" / "index.html").read_text(encoding="utf-8"))
    assert "64 warps per SM" in occupancy and "(card h200-" not in occupancy.split("Measured")[0]


def test_each_measurement_page_shows_the_kernels_and_calls_behind_its_numbers(repo_site: Path) -> None:
    """Issue 30, part 3: the kernel source, highlighted, folded in a details element that works
    without JavaScript, and the driver calls, on the published page of every experiment."""
    latency = (repo_site / "measurements" / "memory-latency" / "index.html").read_text(encoding="utf-8")
    code = latency.split('id="the-code-behind-these-numbers"', 1)[1]
    assert "<details" in code and '<div class="highlight">' in code
    assert "chase" in re.sub(r"<[^>]+>", "", code) and "<code>cuLaunchKernel</code>" in code
    tensor = (repo_site / "measurements" / "tensor-core" / "index.html").read_text(encoding="utf-8")
    assert "verifier/kernels/mma_sync.py:SOURCE" in tensor and "verifier/kernels/wgmma.py:SOURCE" in tensor
