"""The authoring tools, run as an author runs them: `cudagloss new`, `check --format github`,
the pre-commit hook definition, and a new term showing up in a real `mkdocs build --strict`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, ROOT, cudagloss
from scaffold import filled
from sitebuild import REPO_TERMS, build, fixture_config


@pytest.fixture
def glossary(tmp_path: Path) -> Path:
    """A copy of the repository's terms, measurements and verifier catalog to change freely."""
    for name in ("terms", "measurements", "computed", "verifier", "schema"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_new_writes_every_field_and_fails_check_until_its_placeholders_are_replaced(glossary: Path) -> None:
    run = cudagloss(glossary, "new", "Memory fence", "--section", "compilation")
    assert run.returncode == 0, run.stderr
    assert "wrote terms/memory-fence.yaml" in run.stdout
    path = glossary / "terms" / "memory-fence.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=../schema/term.schema.json\n")
    data = yaml.safe_load(text)
    fields = [
        "name", "title", "definition", "section", "aliases", "abbreviations", "plurals", "error_strings",
        "body", "related", "where_you_meet_this", "sources", "measurements", "byline",
    ]  # fmt: skip
    assert list(data) == fields
    assert data["name"] == "Memory fence"
    assert data["title"] == "What is a memory fence?"
    assert data["byline"] == dict.fromkeys(["written_by", "reviewed_by", "written_on", "last_checked_on"], "pending")
    check = cudagloss(glossary, "check", "--strict", "terms")
    assert check.returncode == 1
    left = "placeholder text left from make new: replace it"
    assert [line for line in check.stderr.splitlines() if not line.startswith("    hint: ")] == [
        f"terms/memory-fence.yaml:5:3: definition: {left}",
        f"terms/memory-fence.yaml:13:3: body: {left}",
        f"terms/memory-fence.yaml:18:12: where_you_meet_this[0].label: {left}",
        f"terms/memory-fence.yaml:20:11: where_you_meet_this[0].note: {left}",
        f"terms/memory-fence.yaml:22:12: sources[0].title: {left}",
        f"terms/memory-fence.yaml:23:10: sources[0].url: {left}",
        "6 errors found",
    ]
    assert "Traceback" not in check.stderr
    path.write_text(_filled_in(text), encoding="utf-8")
    check = cudagloss(glossary, "check", "--strict", "terms")
    assert check.returncode == 0, check.stderr
    assert f"{len(REPO_TERMS) + 1} terms" in check.stdout


def _filled_in(text: str) -> str:
    """The scaffold as an author leaves it: the definition, body and source written, the
    place a reader meets the term removed."""
    lines = text.split("\n")

    def first(prefix: str) -> int:
        return next(i for i, line in enumerate(lines) if line.startswith(prefix))

    start, end = first("definition: >-"), first("section: ")
    lines[start + 1 : end] = ["  An instruction that orders a thread's memory accesses as other threads see them."]
    start, end = first("body: |"), first("related: ")
    lines[start + 1 : end] = ["  A fence makes the writes before it visible before the writes after it."]
    start, end = first("where_you_meet_this:"), first("sources:")
    lines[start:end] = ["where_you_meet_this: []"]
    start = first("  - title: ")
    lines[start : start + 2] = [
        "  - title: CUDA C++ Programming Guide",
        "    url: https://docs.nvidia.com/cuda/cuda-c-programming-guide/",
    ]
    return "\n".join(lines)


def test_new_refuses_to_overwrite_and_changes_nothing(glossary: Path) -> None:
    before = (glossary / "terms" / "fat-binary.yaml").read_bytes()
    run = cudagloss(glossary, "new", "Fat binary")
    assert run.returncode == 1
    assert "terms/fat-binary.yaml:1:1: the term already exists; nothing was changed" in run.stderr
    assert "Traceback" not in run.stderr
    assert (glossary / "terms" / "fat-binary.yaml").read_bytes() == before
    assert not [p for p in (glossary / "terms").iterdir() if p.name.startswith(".")]


def test_new_refuses_a_name_another_term_has_as_alias(glossary: Path) -> None:
    run = cudagloss(glossary, "new", "Native GPU code")
    assert run.returncode == 1
    assert "'Native GPU code' is already a name or alias of terms/sass.yaml" in run.stderr
    assert not (glossary / "terms" / "native-gpu-code.yaml").exists()


def test_new_reports_an_unknown_section_with_a_suggestion(glossary: Path) -> None:
    run = cudagloss(glossary, "new", "Instruction cache", "--section", "eror")
    assert run.returncode == 1
    assert "unknown section 'eror' (did you mean 'errors'?)" in run.stderr
    listed = "hardware, execution, memory, performance, instruction-sets, compilation, host-software, errors, "
    listed += "libraries-and-tools"
    assert f"hint: sections: {listed}" in run.stderr


@pytest.mark.builders
def test_a_new_term_appears_in_the_built_site(glossary: Path, tmp_path: Path) -> None:
    assert cudagloss(glossary, "new", "Instruction cache").returncode == 0
    path = glossary / "terms" / "instruction-cache.yaml"
    path.write_text(filled(path.read_text(encoding="utf-8")), encoding="utf-8")
    site = tmp_path / "site"
    run = build(fixture_config(tmp_path, glossary / "terms", glossary / "measurements"), site)
    assert run.returncode == 0, run.stderr
    page = (site / "terms" / "instruction-cache" / "index.html").read_text(encoding="utf-8")
    assert "What is an instruction cache?" in page
    assert 'href="terms/instruction-cache/"' in (site / "index.html").read_text(encoding="utf-8")


def test_check_prints_github_annotations(tmp_path: Path) -> None:
    run = cudagloss(ROOT, "check", "--no-measurements", "--format", "github", str(FIXTURES / "broken"))
    assert run.returncode == 1
    lines = [line for line in run.stdout.splitlines() if line]
    assert len(lines) >= 24
    assert all(line.startswith("::error file=") for line in lines)
    first = lines[0]
    assert ",line=" in first and ",col=" in first and ",title=cudagloss check::" in first
    assert "%0Ahint: " in run.stdout  # the hint rides along on a second line
    assert "errors found" in run.stderr


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Author", "-c", "user.email=author@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.mark.installs
def test_the_pre_commit_hook_passes_good_terms_and_fails_a_broken_one(glossary: Path, tmp_path: Path) -> None:
    """The real pre-commit, installing this repository's hook into its own environment."""
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    _git(glossary, "init", "-q")
    _git(glossary, "add", "-A")
    _git(glossary, "commit", "-q", "-m", "terms")

    def hook() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "cudagloss-check", "--all-files"],
            cwd=glossary,
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=300,
        )

    good = hook()
    assert good.returncode == 0, good.stdout + good.stderr
    assert re.search(r"check glossary terms and measurements\.+Passed", good.stdout)
    nvrtc = glossary / "terms" / "nvrtc.yaml"
    nvrtc.write_text(nvrtc.read_text(encoding="utf-8").replace("section: host-software", "section: host-softwar"))
    _git(glossary, "commit", "-q", "-am", "a typo")
    bad = hook()
    assert bad.returncode == 1
    assert "terms/nvrtc.yaml:7:10: section: no section 'host-softwar' (did you mean 'host-software'?)" in bad.stdout


def test_the_hook_runs_only_for_glossary_files() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(h for h in hooks if h["id"] == "cudagloss-check")
    assert re.search(hook["files"], "terms/ptx.yaml") and re.search(hook["files"], "measurements/a/b.json")
    assert not re.search(hook["files"], "src/cudagloss/commands/main.py")


def test_values_lists_what_a_body_can_cite_with_the_call_to_write(glossary: Path) -> None:
    run = cudagloss(glossary, "values", "ptx-jit")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("ptx-jit: ")
    grid = next(line for line in lines if '"grid"' in line)
    shown = []  # every card that measured it, side by side, each by its latest run (<node>.json)
    for node in sorted(p.stem for p in (glossary / "measurements" / "ptx-jit").glob("*.json") if "~" not in p.name):
        measured = yaml.safe_load((glossary / "measurements" / "ptx-jit" / f"{node}.json").read_text(encoding="utf-8"))
        shown.append(f"{next(r['value'] for r in measured['results'] if r['name'] == 'grid'):,} blocks ({node})")
    assert len(shown) >= 1
    assert grid.strip() == '{{ measured("ptx-jit", "grid") }}  ' + " / ".join(shown)
    wrong = cudagloss(glossary, "values", "ptx-jt")
    assert wrong.returncode == 1 and "no experiment 'ptx-jt' (did you mean 'ptx-jit'?)" in wrong.stderr
