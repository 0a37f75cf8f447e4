"""Issue 40 in `cudagloss collect` and the scheduled run's report (fleet/collect_nodes.py): a
committed card's re-run whose GPU time moved under the same recipe is named, per experiment,
as an undeclared method change, or as the environment's where its driver changed. The re-runs
are the committed launch-overhead files, one result's samples scaled."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, cudagloss
from cudagloss.merge import undeclared

H100, H200 = "h100-a1e4d568", "h200-3f1ceb1e"
HOST_COSTS = ("stream_launch", "host_launch_call", "launch_sync_round_trip")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the repository's measurements and verifier, where collect runs."""
    shutil.copytree(ROOT / "measurements", tmp_path / "measurements")
    shutil.copytree(ROOT / "verifier", tmp_path / "verifier", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def rerun(nodes: Path, node: str, scale: dict[str, float], driver: str | None = None) -> Path:
    """The node's committed launch-overhead run, made again a day later with the named results'
    samples (and value) scaled, and the driver changed if given."""
    data = json.loads((ROOT / "measurements" / "launch-overhead" / f"{node}.json").read_text(encoding="utf-8"))
    for result in data["results"]:
        factor = scale.get(result["name"], 1.0)
        result["samples"] = [round(s * factor, 4) for s in result["samples"]]
        result["value"] = round(result["value"] * factor, 4)
    stamp = data["provenance"]["recorded_at"]
    data["provenance"]["recorded_at"] = stamp[:8] + f"{int(stamp[8:10]) + 1:02d}" + stamp[10:]
    if driver is not None:
        data["provenance"]["driver_version"] = driver
    target = nodes / f"measurements-{node}" / "launch-overhead" / f"{node}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return target.parent.parent


def test_collect_names_a_gpu_time_that_moved_under_the_same_recipe(repo: Path) -> None:
    folder = rerun(repo / "nodes", H100, {"queued_launch": 0.8})
    run = cudagloss(repo, "collect", "--dry-run", str(folder))
    assert run.returncode == 0, run.stderr
    assert (
        "    undeclared method change? recipe unchanged, yet 1 GPU-timed result moved (queued_launch FASTER -20.0%): "
        "if the code changed how it measures, bump METHOD or the procedure module's VERSION"
    ) in run.stdout
    assert "GPU-timed results moved under an unchanged recipe in 1 experiment(s): 1 an undeclared" in run.stdout
    run = cudagloss(repo, "collect", "--dry-run", "--format", "json", str(folder))
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    [experiment] = report["experiments"]
    assert experiment["undeclared"]["cause"] == "method" and report["undeclared"] == {"method": 1, "environment": 0}
    assert [m["name"] for m in experiment["undeclared"]["moved"]] == ["queued_launch"]


def test_collect_leaves_host_costs_that_moved_unnamed(repo: Path) -> None:
    folder = rerun(repo / "nodes", H100, dict.fromkeys(HOST_COSTS, 1.35))
    run = cudagloss(repo, "collect", "--dry-run", str(folder))
    assert run.returncode == 0, run.stderr
    assert "      SLOWER   stream_launch" in run.stdout
    assert undeclared.METHOD_MARK not in run.stdout and undeclared.ENVIRONMENT_MARK not in run.stdout
    report = json.loads(cudagloss(repo, "collect", "--dry-run", "--format", "json", str(folder)).stdout)
    assert report["experiments"][0]["undeclared"] is None and report["undeclared"] == {"method": 0, "environment": 0}


def test_the_scheduled_runs_report_counts_them_and_blames_a_changed_driver(repo: Path) -> None:
    rerun(repo / "nodes", H100, {"queued_launch": 0.8})
    rerun(repo / "nodes", H200, {"graph_launch": 1.25}, driver="999.1")
    script = ROOT / "fleet" / "collect_nodes.py"
    cli = str(Path(sys.executable).parent / "cudagloss")
    args = [str(repo / "nodes"), "--repo", str(repo), "--report", str(repo / "report.md"), "--cudagloss", cli]
    run = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=120, check=False)
    body = (repo / "report.md").read_text(encoding="utf-8")
    assert run.returncode == 0, body
    heading, counted, *_ = body.split("\n\n")
    assert heading == "Measurements from the GPU fleet."
    assert counted.startswith(
        "GPU-timed results moved under an unchanged recipe in 2 experiment(s): 1 an undeclared method change?"
    )
    assert "1 with the environment changed" in counted
    assert "    environment changed? recipe unchanged, yet 1 GPU-timed result moved (graph_launch SLOWER" in body
    assert "and the environment changed (driver_version): the likely cause, not the method" in body


def test_the_scheduled_run_counts_the_lines_collect_writes() -> None:
    spec = importlib.util.spec_from_file_location("collect_nodes", ROOT / "fleet" / "collect_nodes.py")
    assert spec is not None and spec.loader is not None
    collect_nodes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(collect_nodes)
    assert (collect_nodes.METHOD_MARK, collect_nodes.ENVIRONMENT_MARK) == (
        undeclared.METHOD_MARK,
        undeclared.ENVIRONMENT_MARK,
    )
    assert collect_nodes.undeclared("node a\n      SLOWER   x 1 -> 2\n") is None
