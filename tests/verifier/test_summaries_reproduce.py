"""Issue 40's guard on summary bumps: each experiment's summarise(), as the code is now, turns every
committed file's raw samples into that file's gates and results exactly, so a summary edit that
moved a published number cannot land without `make rederive` rewriting (and a reviewer reading)
what it moved. Files that kept no raw samples are not derivable and are not judged here."""

from __future__ import annotations

from pathlib import Path

import pytest
from verifier.experiment import ROOT
from verifier.registry import EXPERIMENTS

from cudagloss.model.measurement import Measurement, parse_measurement, read_measurement_text
from verifier import rederive

MODULES = {m.ID: m for m in EXPERIMENTS}


def _with_raw() -> list[Path]:
    return sorted(p for p in (ROOT / "measurements").glob("*/*.json") if '"raw": {' in p.read_text(encoding="utf-8"))


def _shape(m: Measurement) -> tuple[object, object]:
    gates = [(g.name, g.passed, g.detail) for g in m.gates]
    results = [(r.name, r.value, r.unit, r.method, list(r.samples), r.description) for r in m.results]
    return gates, results


@pytest.mark.parametrize("path", _with_raw(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_summarise_now_reproduces_the_committed_file_from_its_raw_samples(path: Path) -> None:
    shown = path.relative_to(ROOT).as_posix()
    m = parse_measurement(read_measurement_text(path, shown), shown)
    assert m.raw is not None
    derived = rederive.derive(MODULES[m.experiment], m, m.summary, shown)
    assert _shape(derived) == _shape(m), f"{shown}: run make rederive and review what it changes"


def test_some_committed_files_keep_raw_samples() -> None:
    """The guard above judges something: the committed runs since raw samples were kept."""
    kept = {p.parent.name for p in _with_raw()}
    assert len(kept) >= 20, kept
