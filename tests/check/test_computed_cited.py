"""A term's `computed:` names files of the computed folder: a name with no file is an error at
its line, with the names there are; the real glossary cites its table cleanly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, cudagloss
from cudagloss.errors import GlossaryError
from cudagloss.load.corpus import CheckReport, check_corpus
from cudagloss.load.measurements import load_measurements
from cudagloss.model.computed_set import ComputedSet


def _glossary(tmp_path: Path, names: list[str]) -> Path:
    terms = tmp_path / "terms"
    shutil.copytree(FIXTURES / "good", terms)
    shutil.copytree(ROOT / "computed", tmp_path / "computed")
    lane = terms / "lane.yaml"
    text = lane.read_text(encoding="utf-8")
    cited = "computed:\n" + "".join(f"  - {n}\n" for n in names)
    lane.write_text(text.replace("section: gadgets\n", "section: gadgets\n" + cited), encoding="utf-8")
    shutil.copytree(FIXTURES / "good-measurements", tmp_path / "measurements")
    return terms


def _check(tmp_path: Path) -> CheckReport:
    measurements, problems = load_measurements(tmp_path / "measurements", tmp_path)
    assert problems == []
    computed = ComputedSet(tmp_path / "computed", tmp_path)
    return check_corpus(tmp_path / "terms", tmp_path, measurements=measurements, computed=computed, cache=False)


def test_a_mistyped_name_is_an_error_at_its_line(tmp_path: Path) -> None:
    terms = _glossary(tmp_path, ["compute-capabilities", "compute-capabilites"])
    with pytest.raises(GlossaryError) as caught:
        _check(tmp_path)
    found = [d for d in caught.value.diagnostics if not d.warning]
    assert len(found) == 1
    d = found[0]
    lines = (terms / "lane.yaml").read_text(encoding="utf-8").splitlines()
    assert d.path == "terms/lane.yaml" and lines[d.line - 1] == "  - compute-capabilites"
    assert d.message == "computed[1]: no computed file 'compute-capabilites' (did you mean 'compute-capabilities'?)"
    assert "compute-capabilities" in d.hint


def test_a_file_that_does_not_read_is_an_error_in_the_file(tmp_path: Path) -> None:
    _glossary(tmp_path, ["compute-capabilities"])
    path = tmp_path / "computed" / "compute-capabilities.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"7.5"', '"7"'), encoding="utf-8")
    with pytest.raises(GlossaryError) as caught:
        _check(tmp_path)
    (d,) = [d for d in caught.value.diagnostics if not d.warning]
    assert d.path == "computed/compute-capabilities.json" and "'7' is not a compute capability" in d.message
    assert path.read_text(encoding="utf-8").splitlines()[d.line - 1].strip().startswith('"7"')


def test_the_cited_names_check_clean(tmp_path: Path) -> None:
    _glossary(tmp_path, ["compute-capabilities"])
    report = _check(tmp_path)
    assert report.terms == 4


def test_the_real_glossary_checks_clean() -> None:
    done = cudagloss(ROOT, "check", "--strict", "terms")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "compute-capabilities" in (ROOT / "terms" / "compute-capability.yaml").read_text(encoding="utf-8")
