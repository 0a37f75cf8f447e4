"""Reads through committed links in the harness (issue 39, class 1): `python bench/report.py`
publishes bench/results/*.json in README.md, so a committed link at a result, at the results
folder or at bench/ is refused with one line (cudagloss.files.inside.refuse_read_links, the rule
writes follow) and nothing from outside reaches README.md or bench/RESULTS.md; every other
benchmark refuses a link at bench/ or at what it reads or copies (bench/common.py). A copy of
the harness, real links, the real scripts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from cudagloss.files.inside import HINT

SECRET = "s3cr3t-BENCH-9c2e"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """bench/report.py and its results in a copy, beside a folder outside it."""
    root = tmp_path / "repo"
    (root / "bench").mkdir(parents=True)
    for name in ("report.py", "common.py", "build.py", "check.py", "hostile.py"):
        shutil.copy2(ROOT / "bench" / name, root / "bench" / name)
    shutil.copytree(ROOT / "bench" / "results", root / "bench" / "results")
    shutil.copy2(ROOT / "README.md", root / "README.md")
    (tmp_path / "outside").mkdir()
    return root


def report(root: Path, script: str = "report.py") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "BENCH_RESULTS"}
    env["PYTHONPATH"] = str(ROOT / "src")
    run = [sys.executable, str(root / "bench" / script)]
    return subprocess.run(run, cwd=root, env=env, capture_output=True, text=True, check=False, timeout=60)


def secret_result() -> str:
    row = {"what": SECRET, "figure": "1", "target": "1", "met": True}
    return json.dumps({"date": "2026-01-01", "machine": "m", "commit": "c", "rows": [row]})


def refused(root: Path, line: str) -> None:
    readme = (root / "README.md").read_bytes()
    run = report(root)
    out = run.stdout + run.stderr
    assert run.returncode == 1 and "Traceback" not in out, out
    assert line in out.splitlines() and SECRET not in out, out
    assert (root / "README.md").read_bytes() == readme and not (root / "bench" / "RESULTS.md").exists()


def test_the_report_is_written_from_plain_results(repo: Path) -> None:
    run = report(repo)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (repo / "bench" / "RESULTS.md").exists()


def test_a_results_folder_link_is_refused_and_nothing_is_published(repo: Path) -> None:
    outside = repo.parent / "outside" / "results"
    shutil.move(repo / "bench" / "results", outside)
    (outside / "check.json").write_text(secret_result(), encoding="utf-8")
    (repo / "bench" / "results").symlink_to(outside)
    refused(
        repo, "bench/results:1:1: is a symbolic link; the results folder and the folders above it are plain folders"
    )


def test_a_result_file_link_is_refused_and_nothing_is_published(repo: Path) -> None:
    secret = repo.parent / "outside" / "check.json"
    secret.write_text(secret_result(), encoding="utf-8")
    (repo / "bench" / "results" / "check.json").unlink()
    (repo / "bench" / "results" / "check.json").symlink_to(secret)
    line = "bench/results/check.json:1:1: is a symbolic link; a benchmark result and the folders above it"
    line += " are plain folders"
    refused(repo, line)


def test_a_bench_folder_link_is_refused_and_nothing_is_published(repo: Path) -> None:
    """bench/ committed as a link to another checkout's bench folder, its results full of text
    from outside: the script is named through the link, and refuses it."""
    outside = repo.parent / "outside" / "bench"
    shutil.move(repo / "bench", outside)
    (outside / "results" / "check.json").write_text(secret_result(), encoding="utf-8")
    (repo / "bench").symlink_to(outside)
    refused(repo, "bench:1:1: is a symbolic link; the results folder and the folders above it are plain folders")


READS = "what a benchmark reads and the folders above it are plain folders"
BENCHES = {
    "bench": ("check.py", "bench"),
    "tests/fixtures/good-measurements": ("check.py", "tests/fixtures/good-measurements"),
    "docs/javascripts": ("build.py", "docs/javascripts"),
    "measurements/ptx-jit": ("hostile.py", "measurements/ptx-jit"),
}


@pytest.mark.parametrize("link", list(BENCHES))
def test_a_benchmark_refuses_a_link_at_what_it_reads_before_reading(repo: Path, link: str) -> None:
    """The benchmarks copy the site's folders and measurements into their own work folders: a
    committed link there (or at bench/) is refused with one line before anything is copied."""
    script, shown = BENCHES[link]
    for name in ("docs", "tests/fixtures/good-measurements", "measurements/ptx-jit"):
        shutil.copytree(ROOT / name, repo / name)
    target = repo.parent / "outside" / link.replace("/", "-")
    shutil.move(repo / link, target)
    for file in target.rglob("*.js*"):
        file.write_text(SECRET, encoding="utf-8")
    (repo / link).symlink_to(target)
    run = report(repo, script)
    out = run.stdout + run.stderr
    assert run.returncode == 1 and "Traceback" not in out, out
    assert f"{shown}:1:1: is a symbolic link; {READS}" in out.splitlines() and SECRET not in out, out


def test_screenshots_are_never_written_through_a_committed_artifacts_link(tmp_path: Path) -> None:
    """tests/e2e writes every screenshot through browsing.screenshot_path: a committed
    test-artifacts link (or a link as one screenshot) fails the test with one line, and the
    user's file it points at is never opened."""
    from browsing import screenshot_path

    root, user = tmp_path / "repo", tmp_path / "users-files"
    root.mkdir()
    user.mkdir()
    (user / "home-light.png").write_text("the user's own file\n")
    (root / "test-artifacts").symlink_to(user)
    with pytest.raises(pytest.fail.Exception) as caught:
        screenshot_path(root / "test-artifacts", "home-light.png", root)
    assert str(caught.value) == "test-artifacts is a symbolic link: refusing to write through it; " + HINT
    (root / "test-artifacts").unlink()
    (root / "test-artifacts").mkdir()
    (root / "test-artifacts" / "home-light.png").symlink_to(user / "home-light.png")
    with pytest.raises(pytest.fail.Exception) as caught:
        screenshot_path(root / "test-artifacts", "home-light.png", root)
    assert str(caught.value).startswith("test-artifacts/home-light.png is a symbolic link")
    assert (user / "home-light.png").read_text() == "the user's own file\n"
    assert screenshot_path(root / "test-artifacts", "home-dark.png", root) == str(
        root / "test-artifacts" / "home-dark.png"
    )
