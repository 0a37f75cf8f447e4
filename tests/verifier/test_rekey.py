"""The re-keying migration (verifier/rekey.py): a real folder of measurement files, each made by
the rule before VERSION, by the code as it is, by another recipe, or through a link."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest
from verifier.experiments import coalescing, ptx_jit
from verifier.recipe import ROOT, recipe_key, summary_key
from verifier.registry import EXPERIMENTS
from verifier.rekey import main, old_rule_key, rekey
from verifier.rekey_summary import old_summary_key

from cudagloss.model.measurement import parse_measurement

PROFILE = (ROOT / "verifier" / "profile.py").read_text(encoding="utf-8")
ENTRY = "\n\ndef main() -> int:\n    from verifier.registry import EXPERIMENTS\n\n    return len(EXPERIMENTS)\n"


def made(folder: Path, experiment: str, name: str, recipe: str, summary: str | None = None) -> Path:
    """A committed file of experiment, its keys replaced, written as folder/experiment/name."""
    source = next((ROOT / "measurements" / experiment).glob("*.json"))
    measurement = parse_measurement(source.read_text(encoding="utf-8"), source.name)
    path = folder / experiment / name
    path.parent.mkdir(parents=True, exist_ok=True)
    keyed = replace(measurement, recipe=recipe, summary=measurement.summary if summary is None else summary)
    path.write_text(keyed.to_json(), encoding="utf-8")
    return path


def current(path: Path, module: ModuleType) -> str:
    measurement = parse_measurement(path.read_text(encoding="utf-8"), path.name)
    return replace(measurement, recipe=recipe_key(module), summary=summary_key(module)).to_json()


def test_the_old_rule_is_rekeyed_and_nothing_else_moves(tmp_path: Path) -> None:
    old = made(tmp_path, "ptx-jit", "n1.json", recipe=old_rule_key(ptx_jit), summary=summary_key(ptx_jit))
    earlier = made(tmp_path, "ptx-jit", "n1~20260101T000000Z.json", recipe=old_rule_key(ptx_jit))
    now = made(tmp_path, "ptx-jit", "n2.json", recipe=recipe_key(ptx_jit), summary=summary_key(ptx_jit))
    other = made(tmp_path, "ptx-jit", "n3.json", recipe="sha256:" + "0" * 64)
    expected, kept_now, kept_other = current(old, ptx_jit), now.read_bytes(), other.read_bytes()
    assert old_rule_key(ptx_jit) != recipe_key(ptx_jit)
    found = rekey(tmp_path, EXPERIMENTS)["ptx-jit"]
    assert (found.rekeyed, found.current, len(found.left)) == (2, 1, 1)
    assert "n3.json: made by another recipe" in found.left[0]
    assert old.read_text(encoding="utf-8") == expected
    assert earlier.read_text(encoding="utf-8") == current(earlier, ptx_jit)
    assert (now.read_bytes(), other.read_bytes()) == (kept_now, kept_other)
    assert rekey(tmp_path, EXPERIMENTS)["ptx-jit"].rekeyed == 0  # a second run finds nothing to do


def test_a_link_is_refused_and_its_target_kept(tmp_path: Path) -> None:
    target = made(tmp_path / "outside", "ptx-jit", "n1.json", recipe=old_rule_key(ptx_jit))
    before = target.read_bytes()
    (tmp_path / "m" / "ptx-jit").mkdir(parents=True)
    os.symlink(target, tmp_path / "m" / "ptx-jit" / "n1.json")
    found = rekey(tmp_path / "m", EXPERIMENTS)["ptx-jit"]
    assert found.rekeyed == 0 and "symbolic link" in found.left[0]
    assert target.read_bytes() == before and (tmp_path / "m" / "ptx-jit" / "n1.json").is_symlink()


def test_a_summary_moved_by_code_it_does_not_reach_is_rekeyed(tmp_path: Path) -> None:
    def before(path: str) -> str | None:  # profile.py with its command-line entry still in it
        return PROFILE + ENTRY if path == "verifier/profile.py" else (ROOT / path).read_text(encoding="utf-8")

    old = old_summary_key(coalescing, before)
    assert old is not None and old != summary_key(coalescing)
    path = made(tmp_path, "coalescing", "n1.json", recipe=old_rule_key(coalescing), summary=old)
    assert rekey(tmp_path, EXPERIMENTS)["coalescing"].left  # not without being told the revision
    assert rekey(tmp_path, EXPERIMENTS, since=before)["coalescing"].rekeyed == 1
    assert path.read_text(encoding="utf-8") == current(path, coalescing)


def test_a_summary_moved_by_code_it_reaches_is_not(tmp_path: Path) -> None:
    changed = PROFILE.replace("return [found for _, found in counters]", "return [found for _, found in counters][:1]")
    assert changed != PROFILE

    def before(path: str) -> str | None:
        return changed if path == "verifier/profile.py" else (ROOT / path).read_text(encoding="utf-8")

    assert old_summary_key(coalescing, before) is None
    assert old_summary_key(coalescing, lambda path: None) is None  # a module new since


def test_the_command_says_each_experiment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = made(tmp_path, "ptx-jit", "n1.json", recipe=old_rule_key(ptx_jit))
    before = path.read_bytes()
    assert main(["--measurements", str(tmp_path), "--dry-run"]) == 0
    assert capsys.readouterr().out == "ptx-jit: would re-key 1, already current 0, left 0\n"
    assert path.read_bytes() == before
