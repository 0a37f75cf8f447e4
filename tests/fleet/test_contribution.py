"""The contribution check (fleet/contribution.py): a pull request's contributed/<node>/ folder is
read from git as data and checked by the base's `cudagloss collect --dry-run`; anything else in
it, or anything but plain files, is not taken. Real git repositories, real collect."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from gitrepo import git

sys.path.insert(0, str(ROOT / "tests" / "commands"))
from test_collect import node_folder

SCRIPT = ROOT / "fleet" / "contribution.py"


def _repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("base\n", encoding="utf-8")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "base")
    return repo, _head(repo)


def _head(repo: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()


def _commit(repo: Path, message: str = "contribution") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return _head(repo)


def _check(repo: Path, base: str, head: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), base, head, "--repo", str(repo)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_new_cards_folder_is_what_collect_would_merge(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    node_folder(repo / "contributed", "h200-c0ffee01", experiments=("device-limits", "occupancy"))
    done = _check(repo, base, _commit(repo))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("**Contribution check: collect would merge it.** Node `h200-c0ffee01`")
    assert "node h200-c0ffee01 (NVIDIA H200)" in done.stdout and str(tmp_path) not in done.stdout


def test_a_card_committed_under_another_name_is_refused_by_collect(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    node_folder(repo / "contributed", "h200-impostor", experiments=("device-limits",), card=None)
    data = (repo / "contributed/h200-impostor/device-limits/h200-impostor.json").read_text(encoding="utf-8")
    committed = (ROOT / "measurements/device-limits/h200-3f1ceb1e.json").read_text(encoding="utf-8")
    uuid = committed.split('"gpu_uuid": "', 1)[1].split('"', 1)[0]
    mine = data.split('"gpu_uuid": "', 1)[1].split('"', 1)[0]
    (repo / "contributed/h200-impostor/device-limits/h200-impostor.json").write_text(
        data.replace(mine, uuid), encoding="utf-8"
    )
    done = _check(repo, base, _commit(repo))
    assert done.returncode == 1 and "collect refused it" in done.stdout and "h200-3f1ceb1e" in done.stdout


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("measurements/device-limits/h200-3f1ceb1e.json", "not a file of contributed/"),
        ("fleet/contribution.py", "not a file of contributed/"),
        ("contributed/a/device-limits/b.json", "not a file of contributed/"),
        ("contributed/../x/device-limits/x.json", "not a file of contributed/"),
    ],
)
def test_a_change_outside_one_contributed_folder_is_not_taken(tmp_path: Path, path: str, says: str) -> None:
    repo, base = _repo(tmp_path)
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("{}", encoding="utf-8")
    done = _check(repo, base, _commit(repo))
    assert done.returncode == 1 and "not taken" in done.stdout and says in done.stdout


def test_two_cards_in_one_pull_request_are_not_taken(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    node_folder(repo / "contributed", "h200-aaaa0001", experiments=("device-limits",))
    node_folder(repo / "contributed", "h200-aaaa0002", experiments=("device-limits",))
    done = _check(repo, base, _commit(repo))
    assert done.returncode == 1 and "files of 2 nodes" in done.stdout


def test_a_link_in_the_folder_is_not_taken_and_not_followed(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    folder = node_folder(repo / "contributed", "h200-1111aaaa", experiments=("device-limits",))
    (folder / "occupancy").mkdir()
    os.symlink("/etc/passwd", folder / "occupancy" / "h200-1111aaaa.json")
    done = _check(repo, base, _commit(repo))
    assert done.returncode == 1 and "mode 120000" in done.stdout and "root:" not in done.stdout


def test_a_report_that_holds_backticks_cannot_close_its_code_block(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    name = "contributed/x````y/device-limits/x````y.json"
    (repo / name).parent.mkdir(parents=True)
    (repo / name).write_text("{}", encoding="utf-8")
    done = _check(repo, base, _commit(repo))
    fence = done.stdout.split("\n\n", 1)[1].split("\n", 1)[0]
    assert fence.startswith("`````") and done.stdout.rstrip().endswith(fence.removesuffix("text"))


def test_a_bad_commit_id_is_one_verdict(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    done = _check(repo, base, "HEAD; rm -rf /")
    assert done.returncode == 1 and "is not a commit id" in done.stdout and shutil.which("git")


def test_the_workflow_runs_the_bases_checker_on_the_pull_requests_data() -> None:
    import yaml

    flow = yaml.safe_load((ROOT / ".github/workflows/contribution.yml").read_text(encoding="utf-8"))
    assert flow[True] == {"pull_request": {"paths": ["contributed/**"]}}  # YAML 1.1 reads 'on' as true
    steps = flow["jobs"]["check"]["steps"]
    checkout = steps[0]
    assert checkout["uses"].startswith("actions/checkout@") and checkout["with"]["ref"] == "${{ github.base_ref }}"
    assert checkout["with"]["persist-credentials"] is False
    runs = "\n".join(str(s.get("run", "")) for s in steps)
    assert 'fleet/contribution.py "$base" "$head"' in runs and "refs/contribution/head" in runs
    assert "checkout refs/contribution" not in runs and "git switch" not in runs and "pip install" not in runs
