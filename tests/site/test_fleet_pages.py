"""A page read with one node, two, twelve, and three of two GPU models (issue 29): golden text.

The same term (tests/fixtures/fleet) is rendered over measurement folders written here, so
each golden file shows what a reader gets as the fleet grows: one number inline where the
nodes agree, a range with the count where they differ, discrete values that differ shown as
differing, a value a node lacks said so, the reference model with "varies by GPU", compare()
as one phrase, the claims as a checklist (a failing node, a node that did not measure), and a
byline of one line. UPDATE_GOLDEN=1 rewrites them; read the diff.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, ROOT, check_golden
from cudagloss.model.project import Project
from cudagloss.site.build import build_site_content

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
    "two-models": [
        _node("h200-a", H200, 20, ms=0.1, gbs=4200.0),
        _node("h200-b", H200, 22, ms=0.25, gbs=4100.0),
        _node("h100-a", H100, 21, ms=0.14, gbs=3000.0, sms=132),
    ],
}


def page(tmp_path: Path, fleet: list[dict[str, Any]]) -> str:
    root = tmp_path
    shutil.copytree(FIXTURES / "fleet" / "terms", root / "terms")
    folder = root / "measurements" / "copy-bench"
    folder.mkdir(parents=True)
    for record in fleet:
        (folder / f"{record['provenance']['node']}.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
    project = Project(
        root=root, terms_dir=root / "terms", templates_dir=ROOT / "templates", measurements_dir=root / "measurements"
    )
    content, corpus = build_site_content(project)
    assert [d.message for d in corpus.warnings] == []
    return next(p.markdown for p in content.pages if p.src_uri == "terms/copy-bandwidth.md")


@pytest.mark.parametrize("fleet", sorted(FLEETS))
def test_a_page_reads_the_same_way_whatever_the_fleet(tmp_path: Path, fleet: str) -> None:
    check_golden(f"fleet-{fleet}.md", page(tmp_path, FLEETS[fleet]))


def test_the_prose_names_no_node_and_each_hover_names_every_one(tmp_path: Path) -> None:
    """What the golden files show, said as rules: the body's text (links' targets and hover
    titles aside) names no node, however many measured; each value's hover names them all."""
    for name, fleet in FLEETS.items():
        body = page(tmp_path / name, fleet).split("## Measured")[0].split("\n\n", 2)[2]
        titles = re.findall(r' "([^"]*)"\)', body)
        text = re.sub(r"\]\([^)]*\)", "]", body)
        nodes = [record["provenance"]["node"] for record in fleet]
        assert not [n for n in nodes if n in text], (name, text)
        assert len(titles) == 6 and all(f"&#40;{n}&#41;" in t for t in titles for n in nodes), name
