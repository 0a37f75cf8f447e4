"""The check cache: a warm `cudagloss check` says exactly what a cold one says, re-checks what
changed (a file, a file it names, the facts, the measurements), and a cache it cannot trust
is ignored, never believed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import cudagloss.load.corpus as corpus_module
from conftest import FIXTURES, ROOT
from cudagloss.errors import GlossaryError
from cudagloss.load.cache import digest
from cudagloss.load.corpus import check_corpus, load_corpus
from cudagloss.load.measurements import load_measurements
from cudagloss.load.terms import term_from_text
from cudagloss.text.skeleton import ASCII_PROTOTYPES, _prototypes, skeleton

HEAD = "# yaml-language-server: $schema=../schema/term.schema.json\n"
SECTIONS = "sections:\n  - slug: basics\n    title: Basics\n"


def term(name: str, *, related: str = "", body: str = "A body.", extra: str = "") -> str:
    rel = f"related: [{related}]\n" if related else ""
    return (
        f"{HEAD}name: {name}\ntitle: What is {name}?\ndefinition: A term used by these tests.\n"
        f"section: basics\nbody: |\n  {body}\n{rel}{extra}"
    )


def glossary(root: Path, files: dict[str, str]) -> Path:
    folder = root / "terms"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "_sections.yaml").write_text(SECTIONS, encoding="utf-8")
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def cli(root: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CUDAGLOSS_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "cudagloss", "check", "terms", "--no-measurements", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def spy_on_parsing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files parsed from now on (a spy: the real parser still runs)."""
    parsed: list[str] = []
    real = term_from_text

    def spy(path: Path, shown: str, text: str) -> Any:
        parsed.append(shown)
        return real(path, shown, text)

    monkeypatch.setattr(corpus_module, "term_from_text", spy)
    return parsed


def verdict(folder: Path, root: Path) -> list[str]:
    try:
        check_corpus(folder, root)
    except GlossaryError as exc:
        return sorted(d.format() for d in exc.diagnostics)
    return []


def test_a_warm_check_reports_what_a_cold_one_does_on_the_broken_fixtures(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "broken", root / "terms")
    cache = tmp_path / "cache"
    cold = cli(root, cache)
    assert cold.returncode == 1 and "error" in cold.stderr
    assert list((cache / "check").glob("*.json")), "the first run wrote no cache"
    warm = cli(root, cache)
    uncached = cli(root, tmp_path / "other", "--no-cache")
    assert (warm.returncode, warm.stderr, warm.stdout) == (cold.returncode, cold.stderr, cold.stdout)
    assert (uncached.returncode, uncached.stderr) == (cold.returncode, cold.stderr)
    assert not (tmp_path / "other").exists(), "--no-cache wrote a cache"


def test_an_unchanged_file_is_not_parsed_again_and_a_changed_one_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = glossary(tmp_path, {"a.yaml": term("Alpha"), "b.yaml": term("Beta")})
    assert verdict(folder, tmp_path) == []
    parsed = spy_on_parsing(monkeypatch)
    (folder / "b.yaml").write_text(term("Beta", body="Mail me at someone@example.com."), encoding="utf-8")
    found = verdict(folder, tmp_path)
    assert parsed == ["terms/b.yaml"]
    assert any("terms/b.yaml" in d and "e-mail address" in d for d in found)


def test_cross_file_checks_run_over_cached_terms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = glossary(tmp_path, {"a.yaml": term("Alpha", related="b"), "b.yaml": term("Beta")})
    assert verdict(folder, tmp_path) == []
    (folder / "b.yaml").unlink()
    (folder / "c.yaml").write_text(term("alpha"), encoding="utf-8")
    parsed = spy_on_parsing(monkeypatch)
    found = verdict(folder, tmp_path)
    assert parsed == ["terms/c.yaml"]  # a.yaml came from the cache, and its related entry was checked
    assert any("terms/a.yaml" in d and "related[0]: no term 'b'" in d for d in found)
    assert any("terms/c.yaml" in d and "'alpha' is already used by terms/a.yaml" in d for d in found)


def test_a_new_facts_file_or_other_measurements_are_a_new_context(tmp_path: Path) -> None:
    folder = glossary(tmp_path, {"a.yaml": term("Alpha", body="A warp is 32 threads.")})
    assert any("32 threads" in d for d in verdict(folder, tmp_path))
    (folder / "_facts.yml").write_text(
        "facts:\n  - text: 32 threads\n    reason: the programming model defines it\n", encoding="utf-8"
    )
    assert verdict(folder, tmp_path) == []
    (folder / "_facts.yml").unlink()
    cites = term("Alpha", extra="measurements:\n  - experiment: warp-size\n    results: [nope]\n")
    (folder / "a.yaml").write_text(cites, encoding="utf-8")
    measurements = FIXTURES / "good-measurements"

    first = load_measurements(measurements)[0]
    with pytest.raises(GlossaryError) as exc:
        load_corpus(folder, tmp_path, measurements=first)
    assert any("has no result 'nope'" in d.message for d in exc.value.diagnostics)
    assert verdict(folder, tmp_path) == []  # without measurements nothing is known of its results


def forged(tmp_path: Path) -> tuple[Path, Path, Path, list[Any]]:
    """A glossary whose one term now holds a mistake, and a cache whose entry for it was
    forged to declare the new text clean: (repository, cache folder, cache file, its lines)."""
    root = tmp_path / "repo"
    glossary(root, {"a.yaml": term("Alpha")})
    cache = tmp_path / "cache"
    assert cli(root, cache).returncode == 0
    bad = term("Alpha", body="Mail someone@example.com.")
    (root / "terms" / "a.yaml").write_text(bad, encoding="utf-8")
    (stored,) = (cache / "check").glob("*.json")
    head, line = (json.loads(text) for text in stored.read_text(encoding="utf-8").split("\n"))
    assert line[0] == "a.yaml"
    line[1] = digest(bad)
    write_lines(stored, [head, line])
    stored.chmod(0o600)
    return root, cache, stored, [head, line]


def write_lines(path: Path, lines: list[Any]) -> None:
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")


@pytest.mark.parametrize("attack", ["group-writable", "symlink", "garbage", "other-format"])
def test_a_cache_that_cannot_be_trusted_is_ignored(tmp_path: Path, attack: str) -> None:
    root, cache, stored, (head, line) = forged(tmp_path)
    if attack == "group-writable":
        stored.chmod(0o664)
    elif attack == "symlink":
        elsewhere = tmp_path / "planted.json"
        stored.rename(elsewhere)
        stored.symlink_to(elsewhere)
    elif attack == "garbage":
        write_lines(stored, [head, ["a.yaml", line[1], {"diagnostics": [[1]]}]])
    else:
        write_lines(stored, [{**head, "format": 999}, line])
    found = cli(root, cache)
    assert found.returncode == 1, found.stderr
    assert "e-mail address" in found.stderr and "Traceback" not in found.stderr


def test_the_forged_entry_of_the_trust_test_would_be_believed_from_a_trusted_file(tmp_path: Path) -> None:
    """The other side of the test above: the same forgery in a file we trust is used, so the
    attacks above fail for the reason they name, not by accident."""
    root, cache, _, _ = forged(tmp_path)
    assert cli(root, cache).returncode == 0


def test_an_unwritable_cache_folder_is_no_error(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    glossary(root, {"a.yaml": term("Alpha")})
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x", encoding="utf-8")
    done = cli(root, blocked / "cache")
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_the_ascii_prototypes_are_the_tables() -> None:
    table = _prototypes()
    derived = {c: p for c, p in table.items() if ord(c) < 128 and p != c and c != "%"}
    assert derived == ASCII_PROTOTYPES
    assert all(table.get(ch, ch) == ch for p in derived.values() for ch in p)
    for text in ("rn-cache", "sm1", 'say "I0|`', "plain", "100% of it"):
        table_skeleton = "".join(table.get(ch, ch) for ch in text)
        assert skeleton(text) == "".join(table.get(ch, ch) for ch in table_skeleton)


def test_two_contexts_in_turn_each_keep_their_cache_and_old_ones_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checking with and without measurements in turn leaves both warm; a cache of another
    context unused for a week is removed when a run saves its own, a recent one is kept."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("CUDAGLOSS_CACHE_DIR", str(cache))
    root = tmp_path / "repo"
    folder = glossary(root, {"a.yaml": term("Alpha")})
    measurements = load_measurements(FIXTURES / "good-measurements")[0]
    check_corpus(folder, root)
    check_corpus(folder, root, measurements=measurements)
    ours = sorted((cache / "check").glob("*.json"))
    assert len(ours) == 2 and len({f.name.rsplit("-", 1)[0] for f in ours}) == 1
    parsed = spy_on_parsing(monkeypatch)
    check_corpus(folder, root)
    check_corpus(folder, root, measurements=measurements)
    assert parsed == []
    prefix = ours[0].name.rsplit("-", 1)[0]
    old, recent = cache / "check" / f"{prefix}-{'0' * 16}.json", cache / "check" / f"{prefix}-{'1' * 16}.json"
    old.write_text("{}", encoding="utf-8")
    recent.write_text("{}", encoding="utf-8")
    os.utime(old, (0, 0))
    (folder / "a.yaml").write_text(term("Alpha", body="Changed."), encoding="utf-8")
    check_corpus(folder, root)
    assert not old.exists() and recent.exists() and all(f.exists() for f in ours)
