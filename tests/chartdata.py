"""Measurement folders and terms for the chart tests: a size sweep and a count sweep written as
`make verify` writes them, on one node, three nodes, two GPU models, or with values missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cudagloss.load.measurements import load_measurements
from cudagloss.model.chart_spec import Chart, ChartLine, ChartSeries
from cudagloss.model.measurements import MeasurementSet
from cudagloss.model.term import MeasurementCitation, Term
from fleets import fleet_files

H200, H100 = "NVIDIA H200", "NVIDIA H100 80GB HBM3"
SIZES = ("8kib", "64kib", "512kib", "4mib", "32mib", "256mib")
PATHS = (1, 2, 4, 8, 16, 32)


def _result(name: str, value: object, unit: str, samples: int = 0) -> dict[str, Any]:
    spread = [round(float(value) * (1 + d), 4) for d in (-0.01, 0, 0.01)] if samples and value is not None else []  # type: ignore[arg-type]
    return {"name": name, "value": value, "unit": unit, "description": f"{name} (fixture)", "samples": spread}


def node_file(
    node: str, gpu: str, scale: float = 1.0, missing: tuple[str, ...] = (), nulls: tuple[str, ...] = ()
) -> dict[str, Any]:
    """One node's run of the 'sweep' experiment: latency per footprint (no samples: nodes that
    differ read as a range), an L2 size and a ceiling, time per number of paths (with samples:
    nodes the rule cannot tell apart read as one value); scale stretches the values, missing
    leaves results out, nulls records them as not measured."""
    results = [_result(f"cycles_{s}", round(30 * 2.0**i * scale, 1), "cycles") for i, s in enumerate(SIZES)]
    results += [_result(f"ns_per_element_{p}_paths", round(0.44 * p * scale, 4), "ns", 3) for p in PATHS]
    results += [_result("l2_size", 61440, "KiB"), _result("ceiling_cycles", round(1200 * scale), "cycles")]
    results += [
        _result(f"{k}_tflops", round(v * scale, 1), "TFLOP/s", 3) for k, v in (("peak", 990.0), ("mma_sync", 640.6))
    ]
    results = [r for r in results if r["name"] not in missing]
    for r in results:
        if r["name"] in nulls:
            r["value"], r["samples"] = None, []
    return {
        "experiment": "sweep",
        "purpose": "A sweep (a fixture, not a measurement)",
        "code_hash": "sha256:fixture",
        "status": "ok",
        "provenance": {"node": node, "gpu_name": gpu, "recorded_at": "2026-11-20T12:00:00+00:00", "repeats": 3},
        "gates": [{"name": "fixture", "passed": True, "detail": "fixture"}],
        "results": results,
        "error": None,
        "format_version": 1,
    }


FLEETS: dict[str, list[dict[str, Any]]] = {
    "one-node": [node_file("h200-a", H200)],
    "many-nodes": [node_file("h200-a", H200), node_file("h200-b", H200, 1.1), node_file("h200-c", H200, 0.95)],
    "two-models": [node_file("h200-a", H200), node_file("h200-b", H200), node_file("h100-a", H100, 1.3)],
    "missing-value": [
        node_file("h200-a", H200, nulls=("cycles_512kib",), missing=("ns_per_element_8_paths",)),
        node_file("h200-b", H200, 1.05, nulls=("cycles_512kib",), missing=("cycles_32mib",)),
    ],
}

CHARTS = {
    "size": Chart(
        id="latency",
        experiment="sweep",
        title="Cycles per load against footprint",
        x="footprint",
        y="latency",
        series=[ChartSeries("cycles_{size}")],
        lines=[ChartLine("l2_size", "L2 size"), ChartLine("ceiling_cycles", "ceiling")],
    ),
    "count": Chart(
        id="paths",
        experiment="sweep",
        title="Time per thread against paths",
        x="paths in a warp",
        y="time per thread",
        series=[ChartSeries("ns_per_element_{count}_paths")],
    ),
    "name": Chart(
        id="rates",
        experiment="sweep",
        title="Rates by instruction",
        x="instruction",
        y="rate",
        series=[ChartSeries("{name}_tflops")],
    ),
}


def write_fleet(folder: Path, fleet: list[dict[str, Any]]) -> MeasurementSet:
    (folder / "sweep").mkdir(parents=True, exist_ok=True)
    for name, record in fleet_files(fleet):
        (folder / "sweep" / name).write_text(json.dumps(record, indent=2), encoding="utf-8")
    measurements, problems = load_measurements(folder, folder.parent)
    assert problems == []
    return measurements


def term(*charts: Chart) -> Term:
    body = "\n\n".join(f'{{{{ chart("{c.id}") }}}}' for c in charts)
    return Term(
        name="Sweep",
        title="What is a sweep?",
        definition="A fixture.",
        section="s",
        body=body,
        measurements=[MeasurementCitation("sweep")],
        charts=list(charts),
    )
