"""An earlier run's rows have ids of their own on the measurement page; no node's name can
make the same ids (a pull request could name a node 'h200-a-20261120T120000Z' so that links
to its rows land on another card's earlier run, or the other way round)."""

from __future__ import annotations

import json
from pathlib import Path

from cudagloss.load.measurements import load_measurements
from cudagloss.site.measurement_views import run_view
from fleets import FLEETS, H200, _node, fleet_files


def test_no_node_name_gives_the_ids_of_an_earlier_run(tmp_path: Path) -> None:
    folder = tmp_path / "m" / "copy-bench"
    folder.mkdir(parents=True)
    twin = _node("h200-a-20261120T120000Z", H200, 22, ms=0.2, gbs=4000.0)
    for name, data in fleet_files([*FLEETS["one-card-twice"], twin]):
        (folder / name).write_text(json.dumps(data), encoding="utf-8")
    measurements, problems = load_measurements(tmp_path / "m", tmp_path)
    assert problems == []
    record = measurements.get("copy-bench")
    assert record is not None
    ids: list[str] = []
    for run in record.measured:
        view = run_view(record, run)
        for f in (view.good, *view.earlier):
            assert f is not None
            ids += [str(r.anchor) for r in f.results]
    assert len(ids) == 3 * 6 and len(set(ids)) == len(ids), sorted(i for i in ids if ids.count(i) > 1)
