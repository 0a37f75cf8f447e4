"""Every verb of the real `cudagloss` process: `--help` and `-h` work, and options count
whether they stand before or after the folder (issue 16: `links --help` and an option before
the folder once failed). Each run checks that the option took effect, not only that
argparse let it through. The runs are independent, so they go side by side."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, cudagloss
from cudagloss.commands import links
from cudagloss.commands.main import build_parser
from localserver import Ok, running


def verbs() -> list[str]:
    """Every verb of the command line, as `cudagloss -h` lists them."""
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sorted(sub.choices or ())


def test_help_works_for_every_verb() -> None:
    assert {"check", "new", "values", "export", "schema", "links", "byline"} <= set(verbs())
    runs = [(verb, flag) for verb in verbs() for flag in ("--help", "-h")]
    with ThreadPoolExecutor(4) as pool:
        done = list(pool.map(lambda run: cudagloss(ROOT, run[0], run[1]), runs))
    for (verb, flag), run in zip(runs, done, strict=True):
        assert run.returncode == 0, (verb, flag, run.stderr)
        assert run.stdout.startswith(f"usage: cudagloss {verb}"), (verb, flag, run.stdout[:200])
        assert "options:" in run.stdout and not run.stderr, (verb, flag)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running(Ok) as url:
        yield url


@pytest.fixture
def glossary(tmp_path: Path, server: str) -> Path:
    """The good fixtures (four terms, their measurements) and the templates, with every
    source on a local server: small, so that each run is quick."""
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    shutil.copytree(FIXTURES / "good-measurements", tmp_path / "measurements")
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    for term in (tmp_path / "terms").glob("*.yaml"):
        term.write_text(term.read_text(encoding="utf-8").replace("https://example.com", server), encoding="utf-8")
    return tmp_path


def _check(root: Path, before: bool) -> None:
    run = cudagloss(root, *(("check", "-q", "terms") if before else ("check", "terms", "-q")))
    assert run.returncode == 0 and run.stdout == "", run.stderr  # -q: nothing printed


def _new(root: Path, before: bool) -> None:
    """Into a folder of its own: the new term fails `check` until its placeholders are filled in."""
    slug = f"option-{'before' if before else 'after'}"
    folder = root / f"new-{slug}"
    folder.mkdir()
    shutil.copy(root / "terms" / "_sections.yaml", folder)
    options = ("--slug", slug, "--section", "gadgets", "--terms", folder.name)
    name = f"Option placed {'before' if before else 'after'}"
    run = cudagloss(root, "new", *((*options, name) if before else (name, *options)))
    assert run.returncode == 0, run.stderr
    assert "section: gadgets" in (folder / f"{slug}.yaml").read_text(encoding="utf-8")


def _values(root: Path, before: bool) -> None:
    options = ("--measurements", "measurements")
    run = cudagloss(root, "values", *((*options, "warp-size") if before else ("warp-size", *options)))
    assert run.returncode == 0 and run.stdout.startswith("warp-size: "), run.stderr


def _export(root: Path, before: bool) -> None:
    out = f"out-{before}"
    run = cudagloss(root, "export", *(("--out", out, "terms") if before else ("terms", "--out", out)))
    assert run.returncode == 0, run.stderr
    assert any((root / out).iterdir()) and not (root / "export").exists()  # --out: written there


def _schema(root: Path, before: bool) -> None:
    out = f"schema-{before}"
    run = cudagloss(root, "schema", *(("--check", "--out", out) if before else ("--out", out, "--check")))
    assert run.returncode == 1 and "out of date" in run.stderr  # --check: compared, not written
    assert not (root / out).exists()


def _links(root: Path, before: bool) -> None:
    options = ("--no-stamp", "--format", "json", "--timeout", "20")
    before_bytes = {p: p.read_bytes() for p in (root / "terms").glob("[!o]*.yaml")}  # not new's option-*
    run = cudagloss(root, "links", *((*options, "terms") if before else ("terms", *options)))
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)  # --format json
    assert report["checked"] >= 1 and report["stamped"] == []
    assert {p: p.read_bytes() for p in (root / "terms").glob("[!o]*.yaml")} == before_bytes  # --no-stamp


TRIED: dict[str, Callable[[Path, bool], None]] = {
    "check": _check,
    "new": _new,
    "values": _values,
    "export": _export,
    "schema": _schema,
    "links": _links,
}


def test_options_count_before_and_after_the_folder(glossary: Path) -> None:
    runs = [(verb, before) for verb in TRIED for before in (True, False)]
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(TRIED[verb], glossary, before) for verb, before in runs]
        for future in futures:
            future.result()
    # byline has no option but its folder; `byline --help terms` still shows the help
    assert cudagloss(glossary, "byline", "--help", "terms").stdout.startswith("usage: cudagloss byline")


@pytest.mark.parametrize("option", ["--timeout=nan", "--timeout=inf", "--timeout=-1", "--timeout=0", "--max-age=-3"])
def test_links_refuses_times_that_would_never_end_or_never_start(
    option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        links.build_parser().parse_args([option, "terms"])
    assert exited.value.code == 2 and f"argument {option.split('=')[0]}: " in capsys.readouterr().err
