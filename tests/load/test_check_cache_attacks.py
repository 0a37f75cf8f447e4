"""Attacks on the check cache: whatever changes between two runs, a warm `cudagloss check`
says what a cold one (`--no-cache`) says; a cache in a place others control is neither
believed nor written through; and no cache file, however made, crashes or hangs a run."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_check_cache import glossary, spy_on_parsing, term

import cudagloss.check.fields as fields_module
from conftest import ROOT
from cudagloss.errors import GlossaryError
from cudagloss.load.cache import digest
from cudagloss.load.corpus import check_corpus


def verdicts(folder: Path) -> tuple[list[str], list[str]]:
    """(warm, cold): what a run with the cache says, and one without it (the repository
    is the terms folder's parent; the cache folder lies outside it)."""

    def one(cache: bool) -> list[str]:
        try:
            report = check_corpus(folder, folder.parent, cache=cache)
        except GlossaryError as exc:
            return sorted(d.format() for d in exc.diagnostics)
        return sorted(d.format() for d in report.warnings)

    return one(True), one(False)


def check(cwd: Path, env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`cudagloss check` in a fresh process, with env over a copy of ours (a value of "" removes it)."""
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}
    return subprocess.run(
        [sys.executable, "-m", "cudagloss", "check", *args],
        cwd=cwd,
        env={k: v for k, v in full.items() if v},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def said(done: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of this test's own, for the in-process runs."""
    folder = tmp_path / "user-cache"
    monkeypatch.setenv("CUDAGLOSS_CACHE_DIR", str(folder))
    return folder


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


# -- a cache others may write is neither believed nor written through ----------------------


def forge(cache_file: Path, term_file: Path, new_text: str) -> None:
    """Give term_file new_text (with a mistake) and make the cache declare that text clean."""
    term_file.write_text(new_text, encoding="utf-8")
    head, line = (json.loads(text) for text in cache_file.read_text(encoding="utf-8").split("\n"))
    line[1] = digest(new_text)
    cache_file.write_text(json.dumps(head) + "\n" + json.dumps(line), encoding="utf-8")
    cache_file.chmod(0o644)  # as git checks a file out: the user's own, writable by no one else


@pytest.mark.parametrize("where", ["CUDAGLOSS_CACHE_DIR", "XDG_CACHE_HOME"])
def test_a_cache_inside_the_repository_is_never_believed(tmp_path: Path, where: str) -> None:
    """A pull request can commit files under the repository; a cache there (a CI that points
    its cache folder into the workspace, a relative XDG_CACHE_HOME) must not be read, or the
    pull request declares its own mistaken term clean."""
    root = tmp_path / "repo"
    glossary(root, {"a.yaml": term("Alpha")})
    assert check(root, {"CUDAGLOSS_CACHE_DIR": str(tmp_path / "made")}, "--no-measurements").returncode == 0
    (made,) = (tmp_path / "made" / "check").glob("*.json")  # its name and context are the same in the repo
    env = {"CUDAGLOSS_CACHE_DIR": "", "XDG_CACHE_HOME": ""}
    if where == "CUDAGLOSS_CACHE_DIR":
        env[where], committed = str(root / ".cache"), root / ".cache" / "check" / made.name
    else:
        env[where], committed = ".cache", root / ".cache" / "cudagloss" / "check" / made.name
    committed.parent.mkdir(parents=True)
    committed.write_bytes(made.read_bytes())
    forge(committed, root / "terms" / "a.yaml", term("Alpha", body="Mail someone@example.com."))
    done = check(root, env, "--no-measurements")
    assert done.returncode == 1 and "e-mail address" in done.stderr, said(done)


def test_a_cache_folder_inside_the_measurements_is_not_read_as_measurements(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    glossary(root, {"a.yaml": term("Alpha")})
    (root / "measurements").mkdir()
    env = {"CUDAGLOSS_CACHE_DIR": str(root / "measurements"), "XDG_CACHE_HOME": ""}
    cold = check(root, env)
    warm = check(root, env)
    assert said(warm) == said(cold), said(warm)


@pytest.mark.parametrize("folder_mode", [0o700, 0o777])
def test_saving_never_writes_through_a_link_at_the_cache_path(tmp_path: Path, folder_mode: int) -> None:
    """The cache's name is predictable (a digest of the terms folder's path). A link planted
    at it (in a shared cache folder, 0o777; or anywhere) must not lead the save into the
    file it names: write_text_atomic follows links, which is right for a user's files and
    wrong here."""
    root = tmp_path / "repo"
    glossary(root, {"a.yaml": term("Alpha")})
    cache = tmp_path / "cache"
    env = {"CUDAGLOSS_CACHE_DIR": str(cache)}
    assert check(root, env, "--no-measurements").returncode == 0
    (stored,) = (cache / "check").glob("*.json")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    stored.unlink()
    stored.symlink_to(victim)
    (cache / "check").chmod(folder_mode)
    done = check(root, env, "--no-measurements")
    assert done.returncode == 0, said(done)
    assert victim.read_text(encoding="utf-8") == "precious\n", "the save wrote through the link"


def test_a_cache_written_under_a_group_writable_umask_is_used_again(
    tmp_path: Path, own_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """umask 002 is the default for users with their own group (Debian, Ubuntu): a cache file
    created 0o664 fails the reader's own trust test, and every run is cold."""
    folder = glossary(tmp_path / "repo", {"a.yaml": term("Alpha"), "b.yaml": term("Beta")})
    with umask(0o002):
        check_corpus(folder, folder.parent)
        parsed = spy_on_parsing(monkeypatch)
        check_corpus(folder, folder.parent)
    (stored,) = (own_cache / "check").glob("*.json")
    assert not stat.S_IMODE(stored.stat().st_mode) & 0o022, oct(stored.stat().st_mode)
    assert parsed == [], "the second run parsed every file again: its own cache was not trusted"


# -- whatever changed besides a file's bytes, warm says what cold says ----------------------


def test_a_date_in_the_future_passes_once_today_reaches_it(
    tmp_path: Path, own_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    today = dt.datetime.now(dt.UTC).date()
    later = today + dt.timedelta(days=5)
    byline = f"byline:\n  written_by: pending\n  reviewed_by: pending\n  written_on: {later.isoformat()}\n"
    folder = glossary(tmp_path / "repo", {"a.yaml": term("Alpha", extra=byline)})
    warm, cold = verdicts(folder)
    assert warm == cold and any("written_on" in d for d in warm), warm
    monkeypatch.setattr(fields_module, "utc_today", lambda: later)
    parsed = spy_on_parsing(monkeypatch)
    warm, cold = verdicts(folder)
    assert warm == cold == [] and parsed == ["terms/a.yaml"], (warm, parsed)  # parsed by the cold run alone


def test_what_other_files_say_is_checked_again_over_cached_terms(tmp_path: Path, own_cache: Path) -> None:
    """The sections file, a related term's file renamed, a term that names a link target
    deleted, a new term whose name clashes: none changes the bytes of a.yaml."""
    meet = "where_you_meet_this:\n  - label: somewhere\n    link: gamma\n"
    folder = glossary(
        tmp_path,
        {"a.yaml": term("Alpha", related="b", extra=meet), "b.yaml": term("Beta"), "gamma.yaml": term("Gamma")},
    )
    assert verdicts(folder) == ([], [])
    (folder / "_sections.yaml").write_text("sections:\n  - slug: other\n    title: Other\n", encoding="utf-8")
    (folder / "b.yaml").rename(folder / "bee.yaml")
    (folder / "gamma.yaml").unlink()
    (folder / "d.yaml").write_text(term("ALPHA"), encoding="utf-8")
    warm, cold = verdicts(folder)
    assert warm == cold, (warm, cold)
    for expected in ("no section 'basics'", "related[0]: no term 'b'", "'gamma' is neither", "'ALPHA' is already"):
        assert any(expected in d for d in warm), (expected, warm)


def test_a_term_file_replaced_by_a_link_to_the_same_text_is_refused_warm_and_cold(
    tmp_path: Path, own_cache: Path
) -> None:
    """The cache keys a verdict by the file's text: a link to the very text once checked clean is
    still refused (read_term_file refuses it before the cache is asked)."""
    folder = glossary(tmp_path / "repo", {"a.yaml": term("Alpha")})
    assert verdicts(folder) == ([], [])
    store = folder.parent / "store"
    store.mkdir()
    shutil.move(folder / "a.yaml", store / "one.yaml")
    (folder / "a.yaml").symlink_to(store / "one.yaml")
    warm, cold = verdicts(folder)
    assert warm == cold and len(warm) == 1 and warm[0].startswith("terms/a.yaml:1:1: is a symbolic link;"), warm


def test_two_terms_folders_share_a_cache_folder_without_mixing(tmp_path: Path, own_cache: Path) -> None:
    clean = glossary(tmp_path / "one", {"a.yaml": term("Alpha")})
    broken = glossary(tmp_path / "two", {"a.yaml": term("Alpha", body="Mail someone@example.com.")})
    for _ in range(2):
        assert verdicts(clean) == ([], [])
        warm, cold = verdicts(broken)
        assert warm == cold and any("e-mail address" in d for d in warm)


def test_another_working_directory_shows_its_own_paths(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    glossary(root, {"a.yaml": term("Alpha", body="Mail someone@example.com.")})
    env = {"CUDAGLOSS_CACHE_DIR": str(tmp_path / "cache")}
    from_root = check(root, env, "terms", "--no-measurements")
    warm = check(tmp_path, env, "repo/terms", "--no-measurements")
    cold = check(tmp_path, env, "repo/terms", "--no-measurements", "--no-cache")
    assert "terms/a.yaml:" in from_root.stderr and "repo/terms/a.yaml:" in warm.stderr
    assert said(warm) == said(cold)


REGISTRY = """\
from cudagloss.model.measurement import ExperimentInfo
IDS = {ids!r}
def catalog():
    return [ExperimentInfo(i, "a test experiment", "0" * 64) for i in IDS]
"""


def test_a_changed_verifier_catalog_is_a_new_context(tmp_path: Path) -> None:
    cites = "measurements:\n  - experiment: warp-size\n"
    root = tmp_path / "repo"
    glossary(root, {"a.yaml": term("Alpha", extra=cites)})
    (root / "measurements").mkdir()
    (root / "verifier").mkdir()
    (root / "verifier" / "__init__.py").write_text("", encoding="utf-8")
    registry = root / "verifier" / "registry.py"
    registry.write_text(REGISTRY.format(ids=["warp-size"]), encoding="utf-8")
    env = {"CUDAGLOSS_CACHE_DIR": str(tmp_path / "cache"), "PYTHONDONTWRITEBYTECODE": "1"}
    assert check(root, env).returncode == 0, check(root, env).stderr
    registry.write_text(REGISTRY.format(ids=["warp-sizes"]), encoding="utf-8")
    warm, cold = check(root, env), check(root, env, "--no-cache")
    assert said(warm) == said(cold) and "no experiment 'warp-size'" in warm.stderr, said(warm)


# -- no cache file, however made, crashes or hangs a run -----------------------------------


def _planted(kind: str, path: Path, head: str) -> None:
    if kind == "deep-json":
        path.write_text(head + "\n" + "[" * 200_000 + "]" * 200_000, encoding="utf-8")
    elif kind == "huge-line":
        path.write_text(head + "\n" + '["a.yaml","' + "x" * 20_000_000 + '"]', encoding="utf-8")
    elif kind == "huge-number":
        path.write_text(head + "\n" + "9" * 100_000, encoding="utf-8")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    path.parent.chmod(0o700)
    if path.is_file():
        path.chmod(0o600)


@pytest.mark.parametrize("kind", ["deep-json", "huge-line", "huge-number", "fifo", "folder"])
def test_a_hostile_cache_file_neither_crashes_nor_hangs_a_run(tmp_path: Path, own_cache: Path, kind: str) -> None:
    folder = glossary(tmp_path / "repo", {"a.yaml": term("Alpha", body="Mail someone@example.com.")})
    warm, cold = verdicts(folder)
    assert warm == cold and cold
    (stored,) = (own_cache / "check").glob("*.json")
    head = stored.read_text(encoding="utf-8").split("\n")[0]
    stored.unlink()
    _planted(kind, stored, head)
    for _ in range(2):  # the second run reads what the first one wrote, if it could
        assert verdicts(folder)[0] == cold


def test_a_cache_folder_that_is_a_link_to_the_users_own_folder_is_used(tmp_path: Path) -> None:
    real = tmp_path / "real-cache"
    real.mkdir(mode=0o700)
    link = tmp_path / "cache-link"
    link.symlink_to(real)
    root = tmp_path / "repo"
    glossary(root, {"a.yaml": term("Alpha", body="Mail someone@example.com.")})
    env = {"CUDAGLOSS_CACHE_DIR": str(link)}
    cold = check(root, env, "--no-measurements")
    warm = check(root, env, "--no-measurements")
    assert said(warm) == said(cold) and list((real / "check").glob("*.json"))


def test_runs_at_the_same_time_leave_a_cache_that_says_what_a_cold_run_does(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    files = {f"t{i}.yaml": term(f"Term {i}", related=f"t{(i + 1) % 30}") for i in range(30)}
    files["bad.yaml"] = term("Bad", body="Mail someone@example.com.")
    glossary(root, files)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "CUDAGLOSS_CACHE_DIR": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "cudagloss", "check", "--no-measurements"]
    running = [
        subprocess.Popen(argv, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=60) for p in running]
    cold = check(root, {}, "--no-measurements", "--no-cache")
    assert all((p.returncode, *out) == said(cold) for p, out in zip(running, outputs, strict=True))
    (root / "terms" / "t3.yaml").write_text(term("Term 3"), encoding="utf-8")  # a change after the race
    warm = check(root, {"CUDAGLOSS_CACHE_DIR": str(tmp_path / "cache")}, "--no-measurements")
    assert said(warm) == said(check(root, {}, "--no-measurements", "--no-cache"))
    assert not [p for p in (tmp_path / "cache" / "check").iterdir() if p.name.endswith(".tmp")]
