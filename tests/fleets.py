"""Measurement files of one fixture experiment (copy-bench, for tests/fixtures/fleet) as a fleet
of 1, 2 or 12 H200 cards, 3 cards of two GPU models, or one card run twice would write them: the
pages' golden tests and the problem-report tests read the same fleets. A node is one card (its
own gpu_uuid); a node named twice is one card's runs, the earlier ones in <node>~<stamp>.json."""

from __future__ import annotations

import statistics
import uuid
from typing import Any

from cudagloss.model.cards import run_stamp
from cudagloss.model.urls import measurement_file_name

H200, H100 = "NVIDIA H200", "NVIDIA H100 80GB HBM3"
RUNS = (1.0, 1.02, 0.98, 1.01, 0.99)


def _timing(name: str, median: float, unit: str, description: str) -> dict[str, Any]:
    samples = [round(median * r, 4) for r in RUNS]
    return {
        "name": name,
        "value": statistics.median(samples),
        "unit": unit,
        "description": description,
        "samples": samples,
    }


def _node(
    node: str, gpu: str, day: int, *, ms: float, gbs: float, arch: str = "sm_90", buffer: bool = True, sms: int = 132
) -> dict[str, Any]:
    results = [
        _timing("copy_gbs", gbs, "GB/s", "copy rate"),
        _timing("copy_ms", ms, "ms", "one copy of the buffer"),
        _timing("read_ms", ms / 2, "ms", "one read of the buffer"),
        {"name": "sm_count", "value": sms, "unit": "SMs", "description": "SMs on the card", "samples": []},
        {"name": "arch", "value": arch, "unit": "", "description": "the target compiled for", "samples": []},
    ]
    if buffer:
        results.append(
            {"name": "buffer_bytes", "value": 268435456, "unit": "bytes", "description": "buffer size", "samples": []}
        )
    return {
        "experiment": "copy-bench",
        "purpose": "Time a device-to-device copy (a fixture, not a measurement)",
        "code_hash": "sha256:fixture",
        "status": "ok",
        "provenance": {
            "node": node,
            "gpu_name": gpu,
            "gpu_uuid": "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_URL, node)),
            "compute_capability": "9.0",
            "recorded_at": f"2026-11-{day:02d}T12:00:00+00:00",
            "repeats": len(RUNS),
        },
        "gates": [{"name": "the copy is correct", "passed": True, "detail": "fixture"}],
        "results": results,
        "error": None,
        "format_version": 1,
    }


FLEETS: dict[str, list[dict[str, Any]]] = {
    "one-node": [_node("h200-a", H200, 20, ms=0.1, gbs=4200.0)],
    "two-nodes-alike": [_node("h200-a", H200, 20, ms=0.1, gbs=4200.0), _node("h200-b", H200, 20, ms=0.1, gbs=4200.0)],
    "two-nodes-agree": [_node("h200-a", H200, 20, ms=0.1, gbs=4200.0), _node("h200-b", H200, 21, ms=0.101, gbs=4190.0)],
    "twelve-nodes": [
        _node(
            f"h200-{i:02d}",
            H200,
            10 + i,
            ms=0.1 * (1 + i / 10),
            gbs=4200.0 - 40 * i,
            arch="sm_90a" if i == 5 else "sm_90",
            buffer=i != 3,  # one node never measured the buffer size: its claim is not judged there
        )
        for i in range(12)
    ],
    "one-card-twice": [
        _node("h200-a", H200, 20, ms=0.1, gbs=4200.0),
        _node("h200-a", H200, 21, ms=0.13, gbs=3900.0),  # a re-run of the same card: a run, not a card
    ],
    "two-models": [
        _node("h200-a", H200, 20, ms=0.1, gbs=4200.0),
        _node("h200-b", H200, 22, ms=0.25, gbs=4100.0),
        _node("h100-a", H100, 21, ms=0.14, gbs=3000.0, sms=132),
    ],
}


def fleet_files(fleet: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(file name, record) of each run, as make verify keeps them: a node's latest run as
    <node>.json, its earlier ones as <node>~<stamp>.json."""
    latest: dict[str, str] = {}
    for record in fleet:
        node, at = record["provenance"]["node"], record["provenance"]["recorded_at"]
        latest[node] = max(latest.get(node, ""), at)
    out = []
    for record in fleet:
        node, at = record["provenance"]["node"], record["provenance"]["recorded_at"]
        out.append((measurement_file_name(node, run="" if at == latest[node] else run_stamp(at)), record))
    return out
