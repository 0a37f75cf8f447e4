"""The recipe and summary keys (verifier/recipe.py) move with what reaches the GPU and with the
summary code, and with nothing else: each case edits a copy of the verifier and reads every
experiment's keys in a fresh interpreter, as a later checkout would."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KEYS = (
    "import json\n"
    "from verifier.registry import EXPERIMENTS\n"
    "from verifier.recipe import recipe_key, summary_key\n"
    "print(json.dumps({m.ID: [recipe_key(m), summary_key(m)] for m in EXPERIMENTS}))\n"
)


def keys(tree: Path) -> dict[str, list[str]]:
    env = os.environ | {"PYTHONPATH": f"{tree / 'src'}{os.pathsep}{tree}", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", KEYS], cwd=tree, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found: dict[str, list[str]] = json.loads(done.stdout)
    return found


@pytest.fixture(scope="module")
def before() -> dict[str, list[str]]:
    return keys(ROOT)


def edited(tmp_path: Path, path: str, old: str, new: str) -> Path:
    """A copy of src/ and verifier/ with one replacement made in path (old must be there)."""
    for folder in ("src", "verifier"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    file = tmp_path / path
    text = file.read_text(encoding="utf-8")
    assert old in text, f"{path} no longer holds {old!r}: pick another edit"
    file.write_text(text.replace(old, new, 1) if old else text + new, encoding="utf-8")
    return tmp_path


def moved(before: dict[str, list[str]], after: dict[str, list[str]], which: int) -> set[str]:
    return {e for e in before if before[e][which] != after[e][which]}


def test_every_experiment_has_both_keys(before: dict[str, list[str]]) -> None:
    assert len(before) >= 30
    assert all(r.startswith("sha256:") and s.startswith("sha256:") for r, s in before.values())


def test_plumbing_is_in_no_key(tmp_path: Path, before: dict[str, list[str]]) -> None:
    """Issue 40's own case: a line that reaches no GPU, in the runner every experiment runs through."""
    after = keys(edited(tmp_path, "verifier/runner.py", "", "\n_UNUSED = 0\n"))
    assert moved(before, after, 0) == set() and moved(before, after, 1) == set()


def test_a_kernel_edit_stales_exactly_its_experiments(tmp_path: Path, before: dict[str, list[str]]) -> None:
    after = keys(edited(tmp_path, "verifier/kernels/bandwidth.py", "__global__", "__global__ /* edited */"))
    assert moved(before, after, 0) == {"memory-bandwidth"}


def test_a_run_constant_stales_its_experiment(tmp_path: Path, before: dict[str, list[str]]) -> None:
    after = keys(
        edited(tmp_path, "verifier/experiments/fp32_throughput.py", "BLOCK, WAVES = 256, 32", "BLOCK, WAVES = 256, 16")
    )
    assert "fp32-throughput" in moved(before, after, 0)
    assert moved(before, after, 0) <= {"fp32-throughput", "roofline"}  # roofline imports fp32-throughput's helpers


def test_a_summary_edit_moves_the_summary_key_alone(tmp_path: Path, before: dict[str, list[str]]) -> None:
    after = keys(edited(tmp_path, "verifier/experiments/fp32_throughput.py", "TOLERANCE = 1e-5", "TOLERANCE = 2e-5"))
    assert moved(before, after, 0) == set()
    assert "fp32-throughput" in moved(before, after, 1)


def test_words_move_nothing(tmp_path: Path, before: dict[str, list[str]]) -> None:
    """A docstring or a purpose is words: reworded, no measurement is touched."""
    after = keys(
        edited(
            tmp_path, "verifier/experiments/fp32_throughput.py", "(pure: the CPU test", "(pure, reworded: the CPU test"
        )
    )
    assert moved(before, after, 0) == set() and moved(before, after, 1) == set()


def test_a_spawned_procedure_is_in_the_recipe(tmp_path: Path, before: dict[str, list[str]]) -> None:
    """peer-copy runs verifier/peer_pair.py in a child process: a VERSION it declares is a recipe change."""
    after = keys(edited(tmp_path, "verifier/peer_pair.py", "", "\nVERSION = 2\n"))
    assert moved(before, after, 0) == {"peer-copy"}


def check_strict(tree: Path) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"PYTHONPATH": f"{tree / 'src'}{os.pathsep}{tree}", "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "cudagloss", "check", "--strict", "--no-cache", "terms"]
    return subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)


def checkout(tmp_path: Path) -> Path:
    for folder in ("src", "verifier", "terms", "measurements", "computed"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_make_check_strict_holds_through_a_plumbing_edit(tmp_path: Path) -> None:
    """Issue 40's test: `echo "_UNUSED = 0" >> verifier/runner.py && make check --strict` passes."""
    tree = checkout(tmp_path)
    with (tree / "verifier/runner.py").open("a", encoding="utf-8") as runner:
        runner.write("\n_UNUSED = 0\n")
    run = check_strict(tree)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]


def test_make_check_strict_names_exactly_the_experiment_a_kernel_edit_stales(tmp_path: Path) -> None:
    tree = checkout(tmp_path)
    kernel = tree / "verifier/kernels/bandwidth.py"
    kernel.write_text(kernel.read_text(encoding="utf-8").replace("__global__", "__global__ /* edited */", 1))
    run = check_strict(tree)
    assert run.returncode == 1
    stale = set(re.findall(r"older recipe or summary.*\(measurements/([a-z0-9-]+)/", run.stderr))
    assert stale == {"memory-bandwidth"}, run.stderr[-3000:]


def test_a_summary_edit_is_rederived_on_the_cpu_and_files_without_raw_samples_are_noted(tmp_path: Path) -> None:
    """Issue 40's test on the committed tree: an edit to warp-divergence's summary fails the strict
    check for exactly its files that kept raw samples (make rederive's hint), `make rederive` makes
    them current, and its files without raw samples fail nothing but are named in check's note."""
    tree = checkout(tmp_path)
    module = tree / "verifier/experiments/warp_divergence.py"
    text = module.read_text(encoding="utf-8")
    assert "\ndef summarise(" in text
    body = text.replace("\ndef summarise(", "\nNOTHING = 0\n\n\ndef summarise(", 1)
    start = body.index("\ndef summarise(")
    colon = body.index(":\n", start) + 2
    module.write_text(body[:colon] + "    assert NOTHING == 0\n" + body[colon:], encoding="utf-8")
    files = sorted((tree / "measurements/warp-divergence").glob("*.json"))
    raw = {f.name for f in files if '"raw":' in f.read_text(encoding="utf-8") and "~" not in f.name}
    assert raw, "some committed warp-divergence file keeps raw samples"
    run = check_strict(tree)
    assert run.returncode == 1
    named = set(re.findall(r"summarised by older code \(measurements/warp-divergence/([^)]+)\)", run.stderr))
    assert named == raw, run.stderr[-3000:]
    env = os.environ | {"PYTHONPATH": f"{tree / 'src'}{os.pathsep}{tree}", "PYTHONDONTWRITEBYTECODE": "1"}
    derive = [sys.executable, "-m", "verifier.rederive", "--experiment", "warp-divergence"]
    done = subprocess.run(derive, cwd=tree, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "SAME" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    again = check_strict(tree)
    assert again.returncode == 0, again.stderr[-3000:]
    latest = {f.name for f in files if "~" not in f.name}
    if latest - raw:  # the committed files without raw samples, noted by card, never a failure
        assert "were summarised by older code and kept no raw samples" in again.stdout
        for name in latest - raw:
            assert name.removesuffix(".json") in again.stdout
