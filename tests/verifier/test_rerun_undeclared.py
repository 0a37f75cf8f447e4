"""Issue 40: a GPU time that moves while the recipe does not is reported as an undeclared method
change (or the environment's, where it drifted), by make verify's report and by collect's. The
committed file is a real file in a temporary folder; the re-run goes through settle() as on a node."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from verifier.rerun import report_json
from verifier.settle import passed, settle

from cudagloss.merge.undeclared import ENVIRONMENT_MARK, GPU_TIMED, METHOD_MARK
from cudagloss.model.measurement import Gate, Measurement, Result, record
from cudagloss.model.measurement_rules import METHODS

KERNEL = [1.846, 1.847, 1.845, 1.846, 1.848]
HOST = [5.74, 5.63, 5.66, 5.52, 5.51]
RECIPE = "sha256:" + "1" * 64
SUMMARY = "sha256:" + "3" * 64


def run(kernel: float = 1.0, host: float = 1.0, recipe: str = RECIPE, driver: str = "580.159.04") -> Measurement:
    """A launch-overhead-like run on node-a: one GPU-timed result, one host cost, one count;
    kernel and host scale their samples (0.8: 20% faster)."""
    k, h = [v * kernel for v in KERNEL], [v * host for v in HOST]
    results = [
        Result("queued_launch", sorted(k)[2], "µs", "queued launch", k, method="gpu-queued"),
        Result("stream_launch", sorted(h)[2], "µs", "host launch", h, method="host"),
        Result("launches", 100),
    ]
    provenance = {"node": "node-a", "gpu_name": "NVIDIA H100", "driver_version": driver, "duration_s": 1.5}
    return Measurement(
        "launch-overhead",
        "test",
        "sha256:now",
        "ok",
        provenance,
        [Gate("correct", True)],
        results,
        recipe=recipe,
        summary=SUMMARY,
    )


def rerun_lines(tmp_path: Path, new: Measurement) -> tuple[list[str], dict[str, Any]]:
    """What make verify says and its JSON report, for new against the committed run()."""
    folder = tmp_path / "measurements"
    record(run(), folder)
    said: list[str] = []
    rerun = settle(new, folder, said.append)
    assert rerun is not None and passed(new, rerun), "a report, never a failure"
    return said, json.loads(report_json([rerun]))


def test_a_gpu_time_20_percent_faster_under_the_same_recipe_is_an_undeclared_method_change(tmp_path: Path) -> None:
    said, report = rerun_lines(tmp_path, run(kernel=0.8))
    [line] = [s for s in said if METHOD_MARK in s]
    assert line == (
        "    undeclared method change? recipe unchanged, yet 1 GPU-timed result moved (queued_launch FASTER -20.0%): "
        "if the code changed how it measures, bump METHOD or the procedure module's VERSION; "
        "if not, the card or its environment changed (see drift)"
    )
    [experiment] = report["experiments"]
    found = experiment["undeclared"]
    assert found["cause"] == "method" and found["says"] == line.strip() and found["recipe"] == RECIPE
    assert [m["name"] for m in found["moved"]] == ["queued_launch"] and found["moved"][0]["method"] == "gpu-queued"
    assert report["undeclared"] == {"method": 1, "environment": 0}


def test_a_changed_recipe_declares_the_change(tmp_path: Path) -> None:
    said, report = rerun_lines(tmp_path, run(kernel=0.8, recipe="sha256:" + "2" * 64))
    assert any("queued_launch" in s and "FASTER" in s for s in said), "the verdict is still reported"
    assert not [s for s in said if METHOD_MARK in s or ENVIRONMENT_MARK in s]
    assert report["experiments"][0]["undeclared"] is None
    assert report["undeclared"] == {"method": 0, "environment": 0}


def test_a_host_cost_that_moved_is_no_method_change(tmp_path: Path) -> None:
    said, report = rerun_lines(tmp_path, run(host=1.3))  # host costs move 15-35% between two runs
    assert any(s.startswith("      SLOWER   stream_launch") for s in said)
    assert not [s for s in said if METHOD_MARK in s or ENVIRONMENT_MARK in s]
    assert report["experiments"][0]["undeclared"] is None


def test_with_the_driver_changed_the_environment_is_named_not_the_method(tmp_path: Path) -> None:
    said, report = rerun_lines(tmp_path, run(kernel=1.25, driver="590.10"))
    assert "      environment  driver_version 580.159.04 -> 590.10" in said
    assert not [s for s in said if METHOD_MARK in s]
    [line] = [s for s in said if ENVIRONMENT_MARK in s]
    assert line == (
        "    environment changed? recipe unchanged, yet 1 GPU-timed result moved (queued_launch SLOWER +25.0%), "
        "and the environment changed (driver_version): the likely cause, not the method (see drift)"
    )
    assert report["experiments"][0]["undeclared"]["environment"] == ["driver_version"]
    assert report["undeclared"] == {"method": 0, "environment": 1}


def test_gpu_timed_are_the_methods_that_say_gpu_time() -> None:
    assert {m for m, says in METHODS.items() if "GPU time" in says} == GPU_TIMED
