"""The glossary at a glance (issue 30, part 5): the home page says what was measured on which
GPUs and when, and "GPU at a glance" puts each GPU model's device limits side by side, one
number per model, linked to its row, however many nodes measured them."""

from __future__ import annotations

from pathlib import Path

from markupsafe import Markup

from cudagloss.model.measurement import Measurement, Result
from cudagloss.model.measurements import ExperimentRecord, MeasurementSet, NodeRun
from cudagloss.site.overview import glance, measured


def _run(node: str, gpu: str, day: int, **values: int) -> NodeRun:
    results = [Result(name, value, "SMs" if name == "sm_count" else "threads/warp") for name, value in values.items()]
    provenance = {"node": node, "gpu_name": gpu, "recorded_at": f"2026-11-{day:02d}T10:00:00+00:00"}
    return NodeRun(node, Measurement("device-limits", "Limits.", "sha256:0", "ok", provenance, results=results))


def _fleet(tmp_path: Path, runs: list[NodeRun]) -> MeasurementSet:
    found = MeasurementSet(tmp_path)
    found.experiments["device-limits"] = ExperimentRecord("device-limits", None, runs)
    found.experiments["never-run"] = ExperimentRecord("never-run", None, [])
    return found


def test_each_gpu_model_is_one_column_of_one_number_linked_to_its_row(tmp_path: Path) -> None:
    hostile = "GPU <b>|X|</b>"
    runs = [_run(f"h{i:02d}", "NVIDIA H200", 10 + i, warp_size=32, sm_count=132 if i else 114) for i in range(12)]
    page = glance(_fleet(tmp_path, [*runs, _run("x", hostile, 1, warp_size=32, sm_count=8)]))
    assert page is not None
    assert page.columns == ("NVIDIA H200 (12 cards)", f"{hostile} (1 card)")  # the model most cards share first
    warp, sms = page.rows
    assert warp.cells[0] == Markup("[32 threads per warp](measurements/device-limits.md#h00-warp_size)")
    assert sms.cells[0].startswith("[114 SMs / 132 SMs (differs by card)](")  # a count that differs: never averaged
    assert sms.cells[1] == Markup("[8 SMs](measurements/device-limits.md#x-sm_count)")


def test_the_home_page_counts_nodes_per_model_and_names_them_only_when_few(tmp_path: Path) -> None:
    runs = [_run(f"h{i:02d}", "NVIDIA H200", 10 + i, warp_size=32) for i in range(12)]
    said = measured(_fleet(tmp_path, [*runs, _run("b", "NVIDIA B200", 2, warp_size=32)]), "index.md")
    assert said is not None and (said.experiments, said.measured, said.newest) == (2, 1, "2026-11-21")
    h200, b200 = said.models
    assert (h200.gpu, h200.count, h200.nodes, h200.last) == ("NVIDIA H200", 12, (), "2026-11-21")
    assert (b200.gpu, b200.count, b200.nodes) == ("NVIDIA B200", 1, ("b",))
    assert said.glance == Markup("gpus.md") and said.index == Markup("measurements/index.md")


def test_nothing_measured_no_glance_page_and_no_invented_line(tmp_path: Path) -> None:
    assert glance(_fleet(tmp_path, [])) is None
    said = measured(_fleet(tmp_path, []), "index.md")
    assert said is not None and said.models == () and said.glance is None and said.measured == 0
    assert measured(None, "index.md") is None
