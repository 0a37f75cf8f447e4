"""Writes lose nothing (issue 12, item 4) and `make new` takes the name without a shell (item 7).

Real parts only: real files and modes, real symlinks, a real tmpfs for the full disk (as
root), real `cudagloss links` subprocesses killed with real signals while a local HTTP
server keeps them busy, and a real `make new` in a copy of the repository.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, cudagloss
from cudagloss.commands.new import new_term, slugify
from cudagloss.errors import GlossaryError
from cudagloss.files import atomic
from cudagloss.files.atomic import Changed, ReadOnly, read_snapshot, write_text_atomic
from cudagloss.links import stamp
from cudagloss.links.stamp import stamp_file
from disks import small_tmpfs
from localserver import Ok, running
from scaffold import scaffold

TODAY = dt.date.today().isoformat()
"""The day the link checker stamps, set again as each test starts (conftest's stamp_day)."""
pytestmark = pytest.mark.usefixtures("stamp_day")


DAY = dt.date(2026, 12, 2)
TEMPORARY = re.compile(r"^\..*\.tmp$")


class Slow(Ok):
    """Answers every URL 200 after a short wait, so a run is busy long enough to be killed."""

    def do_HEAD(self) -> None:
        time.sleep(0.005)
        super().do_HEAD()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running(Slow) as url:
        yield url


def a_term(name: str, url: str) -> str:
    """A valid term (the scaffold's text) citing url."""
    return scaffold(name, f"  - title: Source\n    url: {url}\n")


def corpus(root: Path, server: str, n: int) -> Path:
    """root/terms with n terms and every awkward kind of file: CRLF, mixed line breaks, .yml,
    a mode of 0o640 (a link, even to a file of the repository, is refused: see below)."""
    terms = root / "terms"
    terms.mkdir(parents=True)
    (root / "shared").mkdir()
    shutil.copy(FIXTURES / "good" / "_sections.yaml", terms)
    for i in range(n):
        (terms / f"term-{i:03d}.yaml").write_text(a_term(f"Term {i:03d}", f"{server}/p{i}"), encoding="utf-8")
    crlf = a_term("Carriage", f"{server}/crlf").replace("\n", "\r\n").encode()
    (terms / "carriage.yaml").write_bytes(crlf)
    lines = a_term("Mixed", f"{server}/mixed").split("\n")
    (terms / "mixed.yaml").write_bytes(
        "".join(x + ("\r\n" if i % 2 else "\n") for i, x in enumerate(lines[:-1])).encode()
    )
    (terms / "other-suffix.yml").write_text(a_term("Other suffix", f"{server}/yml"), encoding="utf-8")
    private = terms / "private.yaml"
    private.write_text(a_term("Private", f"{server}/private"), encoding="utf-8")
    private.chmod(0o640)
    return terms


def links(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cudagloss", "links", "terms", "--no-archive", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )


def state(root: Path) -> dict[str, tuple[bytes, int, bool]]:
    """Every file under root: bytes, mode, whether the name is a link."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            out[str(p.relative_to(root))] = (p.read_bytes(), stat.S_IMODE(p.stat().st_mode), p.is_symlink())
    return out


def stamped_lf(data: bytes) -> bytes:
    """A scaffold term citing one URL as a run today stamps it, with LF line breaks."""
    lf = data.replace(b"\r\n", b"\n")
    url = re.search(rb"    url: \S+\n", lf)
    assert url is not None
    lf = lf[: url.end()] + b"    checked_on: " + TODAY.encode() + b"\n" + lf[url.end() :]
    return lf.replace(b"last_checked_on: pending", b"last_checked_on: " + TODAY.encode())


def temporaries(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if TEMPORARY.match(p.name)]


# --- line breaks, modes, links, read-only files, .yml: one real run -----------------------


def test_a_run_keeps_line_breaks_modes_links_and_stamps_yml(tmp_path: Path, server: str) -> None:
    terms = corpus(tmp_path, server, 2)
    readonly = terms / "frozen.yaml"
    readonly.write_text(a_term("Frozen", f"{server}/frozen"), encoding="utf-8")
    readonly.chmod(0o444)
    before = state(tmp_path)
    old_umask = os.umask(0o077)  # a stamp keeps the file's own mode, whatever the umask
    try:
        run = links(tmp_path)
    finally:
        os.umask(old_umask)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    after = state(tmp_path)
    for name, (data, mode, link) in before.items():
        new, new_mode, new_link = after[name]
        assert (new_mode, new_link) == (mode, link), name
        if name in ("terms/_sections.yaml", "terms/frozen.yaml"):
            assert new == data, name
            continue
        assert new != data, f"{name} was not stamped"
        assert new.replace(b"\r\n", b"\n") == stamped_lf(data), name
        # every line keeps its own break; the added line takes the break of the line above
        old_breaks = re.findall(rb"\r\n|\n", data)
        new_breaks = re.findall(rb"\r\n|\n", new)
        assert len(new_breaks) == len(old_breaks) + 1, name
        url_line = next(i for i, line in enumerate(data.split(b"\n")) if line.startswith(b"    url:"))
        assert new_breaks[: url_line + 1] == old_breaks[: url_line + 1], name
        assert new_breaks[url_line + 1] == old_breaks[url_line], name
        assert new_breaks[url_line + 2 :] == old_breaks[url_line + 1 :], name
    assert b"\r\n" in after["terms/carriage.yaml"][0] and b"\n" not in after["terms/carriage.yaml"][0].replace(
        b"\r\n", b""
    )
    assert run.stderr.count("frozen.yaml: not stamped: the file is read-only; left as it is") == 1
    assert not temporaries(tmp_path)


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_a_link_out_of_or_inside_the_repository_is_not_written(tmp_path: Path, server: str, where: str) -> None:
    root = tmp_path / "repo"
    terms = corpus(root, server, 1)
    target = tmp_path / "home-file.yaml" if where == "outside" else root / "shared" / "linked.yaml"
    target.write_text(a_term("Outside", f"{server}/outside"), encoding="utf-8")
    (terms / "linked.yaml").symlink_to(target)
    before = target.read_bytes()
    run = links(root)
    assert target.read_bytes() == before
    # Refused when the terms are read (the rule writes follow), before anything is stamped.
    line = "terms/linked.yaml:1:1: is a symbolic link; a term file and the folders above it are plain folders"
    assert line in run.stderr.splitlines()
    assert run.returncode == 2 and "Traceback" not in run.stderr


def test_hard_links_and_dangling_links_never_reach_another_file(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(TERM.format(note="x"))
    inside = tmp_path / "terms" / "t.yaml"
    inside.parent.mkdir()
    os.link(outside, inside)  # a hard link: a stamp replaces the name, never the other file
    assert stamp_file(inside, {"https://a.example/1": DAY}).changed
    assert outside.read_text() == TERM.format(note="x") and "2026-12-02" in inside.read_text()
    dangling = tmp_path / "terms" / "new.yaml"
    dangling.symlink_to(tmp_path / "created-through-the-link")
    with pytest.raises(FileExistsError):
        atomic.create_text_exclusive(dangling, "x\n")
    assert not (tmp_path / "created-through-the-link").exists()
    assert not temporaries(tmp_path)


def test_stamping_a_folder_never_writes_through_a_term_file_made_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A term file made a link after the load refused none (a race): one line, not stamped,
    the file it leads to, in the repository or not, as it was."""
    from cudagloss.links.stamp_folder import FolderStamps, stamp_folder

    terms = tmp_path / "repo" / "terms"
    terms.mkdir(parents=True)
    for name, target in (("out.yaml", tmp_path / "out.yaml"), ("in.yaml", tmp_path / "repo" / "in.yaml")):
        target.write_text(TERM.format(note="x"), encoding="utf-8")
        (terms / name).symlink_to(target)
    done = stamp_folder(terms, {"https://a.example/1": DAY}, {}, "cudagloss links", FolderStamps())
    assert done.changed == [] and not done.write_failed
    assert (tmp_path / "out.yaml").read_text() == (tmp_path / "repo" / "in.yaml").read_text() == TERM.format(note="x")
    err = capsys.readouterr().err.splitlines()
    assert f"{terms / 'in.yaml'}: not stamped: it is a symbolic link, never written through" in err, err
    assert f"{terms / 'out.yaml'}: not stamped: it is a symbolic link, never written through" in err, err


def test_new_files_get_the_umask_not_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "a.md", "x\n")
        atomic.create_text_exclusive(tmp_path / "b.yaml", "x\n")
        os.umask(0o027)
        write_text_atomic(tmp_path / "c.md", "x\n")
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert modes == {"a.md": 0o644, "b.yaml": 0o644, "c.md": 0o640}


def test_crlf_lone_cr_and_no_final_newline_through_both_stamp_paths(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    body = "name: t\nsources:\n  - title: One\n    url: https://a.example/1\nbyline:\n  last_checked_on: pending"
    for eol in ("\r\n", "\r"):
        path.write_bytes(body.replace("\n", eol).encode())
        assert stamp_file(path, {"https://a.example/1": DAY}).changed
        assert path.read_bytes().decode() == (
            body.replace("/1\n", "/1\n    checked_on: 2026-12-02\n")
            .replace("last_checked_on: pending", "last_checked_on: 2026-12-02")
            .replace("\n", eol)
        )
    # a layout only the round trip can stamp (the source's last value is a list)
    folded = "sources:\n- url: https://a.example/1\n  tags:\n  - a\n  - b\n"
    path.write_bytes(folded.replace("\n", "\r\n").encode())
    assert stamp._in_place(folded, {"https://a.example/1": DAY}, None) is None  # so: the round trip
    assert stamp_file(path, {"https://a.example/1": DAY}).changed
    assert path.read_bytes() == (folded + "  checked_on: 2026-12-02\n").replace("\n", "\r\n").encode()


def test_read_only_files_are_never_replaced(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("sources:\n  - url: https://a.example/1\n    checked_on: 2026-01-01\n")
    path.chmod(0o444)
    outcome = stamp_file(path, {"https://a.example/1": DAY})
    assert (outcome.changed, outcome.problem) == (False, "the file is read-only; left as it is")
    assert "2026-01-01" in path.read_text() and stat.S_IMODE(path.stat().st_mode) == 0o444
    with pytest.raises(ReadOnly, match=r"cannot write .*t\.yaml: the file is read-only"):
        write_text_atomic(path, "x")
    assert not temporaries(tmp_path)


# --- text that no longer parses (saved half-way through an edit, mid-run) -----------------

SOURCE = "sources:\n  - url: https://a.example/1\n    checked_on: 2026-01-01\n"
FOLDED = "sources:\n- url: https://a.example/1\n  tags:\n  - a\n  - b\n"  # the round trip's (ends in a list)
UNREADABLE = {
    "unclosed-quote": SOURCE + "  - title: 'unclosed\n",
    "second-document": SOURCE + "---\nname: two\n",
    "nul": SOURCE + "note: a\x00b\n",
    "tab-indent": "sources:\n\t- url: https://a.example/1\n",
    "no-such-day": SOURCE.replace("2026-01-01", "2026-02-30"),
    "no-such-month": SOURCE.replace("2026-01-01", "2026-13-01"),
    "no-such-hour": SOURCE.replace("2026-01-01", "2026-01-01 25:00:00"),
    "merge-of-a-scalar": SOURCE + "    <<: 3\n",
    "alias-of-itself": "a: &x [*x]\n" + SOURCE,  # RecursionError (deep nesting too, but slowly)
    "huge-integer": SOURCE + "x: " + "9" * 5000 + "\n",
    "duplicate-key-round-trip": FOLDED + "x: 1\nx: 2\n",  # PyYAML takes it, ruamel.yaml does not
    "unclosed-round-trip": FOLDED + "  note: 'unclosed\n",
    "crlf-unclosed": (SOURCE + "  - title: 'unclosed\n").replace("\n", "\r\n"),
}


@pytest.mark.parametrize("text", list(UNREADABLE.values()), ids=list(UNREADABLE))
def test_text_that_does_not_parse_is_left_as_it_is_with_a_reason(tmp_path: Path, text: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(text, newline="")
    outcome = stamp_file(path, {"https://a.example/1": DAY}, {"written_by": "Ada"})
    assert not outcome.changed and outcome.problem.endswith("; left as it is"), outcome
    assert "\n" not in outcome.problem and len(outcome.problem) < 250
    assert path.read_bytes() == text.encode() and not temporaries(tmp_path)


class _Held(Ok):
    """Holds every request until released."""

    arrived = threading.Event()
    release = threading.Event()

    def do_HEAD(self) -> None:
        type(self).arrived.set()
        type(self).release.wait(120)  # released by the test; the bound only ends a thread a failed test left
        super().do_HEAD()


class _HeldOnce(_Held):
    """Holds the first request until released (events of its own: _Held's are spent)."""

    arrived = threading.Event()
    release = threading.Event()


def test_a_file_broken_while_urls_are_checked_is_reported_and_the_run_goes_on(tmp_path: Path, server: str) -> None:
    """End to end: while `links --force` waits for a URL, the author's editor saves the file
    half-way through a new source; it is left as saved, and every later file is stamped."""
    terms = corpus(tmp_path, server, 2)
    broken, later = terms / "term-000.yaml", terms / "term-001.yaml"
    with running(_HeldOnce) as slow:
        held = f"{slow}/held"
        broken.write_text(broken.read_text().replace("    url: ", f"    url: {held}\n  - title: Two\n    url: ", 1))
        proc = subprocess.Popen(
            [sys.executable, "-m", "cudagloss", "links", "terms", "--no-archive", "--force"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert _HeldOnce.arrived.wait(300)  # a hang, not a slow start, gets near it
            saved = broken.read_text() + "  - title: 'unclosed\n"
            broken.write_text(saved)
            _HeldOnce.release.set()
            _, err = proc.communicate(timeout=300)
        finally:
            _HeldOnce.release.set()
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert "terms/term-000.yaml: not stamped: it cannot be read as YAML now (" in err, err
    assert broken.read_text() == saved
    assert later.read_text().count(f"\n    checked_on: {TODAY}\n") == 1
    assert (terms / "private.yaml").read_text().count(f"\n    checked_on: {TODAY}\n") == 1


# --- compare-and-swap --------------------------------------------------------------------


def test_a_write_is_a_compare_and_swap(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"

    def fresh() -> atomic.Snapshot:
        path.write_text("a: 1\n")
        return read_snapshot(path)

    def same_size_same_mtime() -> None:
        st = path.stat()
        path.write_text("a: 2\n")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    def renamed_over() -> None:
        (tmp_path / "new").write_text("a: 1\n")  # even the same bytes, as a new file
        os.replace(tmp_path / "new", path)

    def repointed() -> None:
        (tmp_path / "elsewhere").write_text("a: 1\n")
        path.unlink()
        path.symlink_to(tmp_path / "elsewhere")

    def mode_changed() -> None:
        path.chmod(0o600)  # the bytes and mtime stay; a chmod is an owner's decision all the same

    for edit in (same_size_same_mtime, renamed_over, path.unlink, repointed, mode_changed):
        snapshot = fresh()
        edit()
        seen = path.read_bytes() if path.exists() else None
        with pytest.raises(Changed):
            write_text_atomic(path, "stamped: true\n", expect=snapshot)
        assert (path.read_bytes() if path.exists() else None) == seen, edit
        path.unlink(missing_ok=True)
    snapshot = fresh()
    write_text_atomic(path, "stamped: true\n", expect=snapshot)
    assert path.read_text() == "stamped: true\n"
    assert not temporaries(tmp_path)


TERM = "sources:\n  - url: https://a.example/1\n    checked_on: 2026-01-01\nnote: {note}\n"


def test_a_stamp_replans_on_an_edit_saved_meanwhile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The author saves between the stamp's read and its write (here: while it plans)."""
    path = tmp_path / "t.yaml"
    path.write_text(TERM.format(note="old"))
    real_plan = stamp._in_place
    saves = iter([TERM.format(note="the author's edit"), None])

    def author_saves_meanwhile(*args: object) -> object:
        edit = next(saves, None)
        if edit is not None:
            path.write_text(edit)
        return real_plan(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(stamp, "_in_place", author_saves_meanwhile)
    outcome = stamp_file(path, {"https://a.example/1": DAY})
    assert outcome.changed and not outcome.problem
    assert path.read_text() == TERM.format(note="the author's edit").replace("2026-01-01", "2026-12-02")

    # The edit removes the URL: re-planned, nothing to stamp, the author's text as saved.
    path.write_text(TERM.format(note="old"))
    removed = "sources:\n  - url: https://b.example/moved\nnote: moved\n"
    saves = iter([removed, None])
    assert not stamp_file(path, {"https://a.example/1": DAY}).changed
    assert path.read_text() == removed

    # An editor saving on every attempt: left as last saved, and said.
    path.write_text(TERM.format(note="old"))
    saves = iter([TERM.format(note=f"edit {i}") for i in range(10)])
    outcome = stamp_file(path, {"https://a.example/1": DAY})
    assert not outcome.changed and "changed while being stamped" in outcome.problem
    assert path.read_text().startswith("sources:\n  - url: https://a.example/1\n    checked_on: 2026-01-01\n")
    assert not temporaries(tmp_path)


def test_an_edit_saved_while_urls_are_checked_is_kept(tmp_path: Path, server: str) -> None:
    """End to end: the author saves while `cudagloss links` waits for a URL."""
    terms = corpus(tmp_path, server, 1)
    path = terms / "term-000.yaml"
    with running(_Held) as slow:
        held = f"{slow}/held"
        text = path.read_text().replace("    url: ", f"    url: {held}\n  - title: Two\n    url: ", 1)
        path.write_text(text)
        proc = subprocess.Popen(
            [sys.executable, "-m", "cudagloss", "links", "terms", "--no-archive"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert _Held.arrived.wait(300)  # a hang, not a slow start, gets near it
            edited = text.replace("definition: >-", "# the author's new comment\ndefinition: >-")
            path.write_text(edited)
            _Held.release.set()
            proc.communicate(timeout=300)
        finally:
            _Held.release.set()
    after = path.read_text()
    assert "# the author's new comment\n" in after
    assert after.count(f"\n    checked_on: {TODAY}\n") == 2  # re-planned on the saved text


# --- temporaries: signals, SIGKILL, the next run -----------------------------------------

HOLD_A_TEMPORARY = (
    "import sys, time\nfrom cudagloss.files import atomic\n"
    "fd, tmp = atomic._temporary(sys.argv[1], 0o666)\nprint(tmp, flush=True)\ntime.sleep(60)\n"
)


def _holder(target: Path) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD_A_TEMPORARY, str(target)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    with proc.stdout:  # closed once read: the holder prints its temporary's name and only sleeps
        return proc, Path(proc.stdout.readline().strip())


def test_only_temporaries_of_dead_writers_are_removed(tmp_path: Path) -> None:
    target = tmp_path / "t.yaml"
    target.write_text("a: 1\n")
    killed, dead = _holder(target)
    alive, live = _holder(target)
    try:
        killed.kill()
        killed.wait()
        old = time.time() - 7200
        decoys = {
            ".notes.tmp": None,
            ".t.yaml.cudagloss-notours.tmp": None,
            ".t.yaml.abcd1234.tmp": None,  # an older version's, but young: a writer may be at it
            ".gone.yaml.abcd1234.tmp": old,  # old, but no file of that name: not ours to judge
        }
        for name, when in decoys.items():
            (tmp_path / name).write_text("x")
            if when:
                os.utime(tmp_path / name, (when, when))
        legacy = tmp_path / ".t.yaml.k3j4h5g6.tmp"
        legacy.write_text("x")
        os.utime(legacy, (old, old))
        (tmp_path / ".t.yaml.cudagloss-0123456789ab.tmp").symlink_to(target)  # a link posing as ours
        if os.geteuid() == 0:
            foreign = tmp_path / ".t.yaml.cudagloss-ba9876543210.tmp"
            foreign.write_text("x")
            os.chown(foreign, 65534, 65534)  # another user's: never ours to remove
        before = set(os.listdir(tmp_path))
        assert atomic.remove_stale_temporaries(tmp_path) == 2
        assert set(os.listdir(tmp_path)) == before - {dead.name, legacy.name}
        assert live.exists() and target.read_text() == "a: 1\n"
    finally:
        alive.kill()
        alive.wait()
    # The next write into a folder clears what a killed writer left there.
    folder = tmp_path / "next"
    folder.mkdir()
    killed, dead = _holder(folder / "x.md")
    killed.kill()
    killed.wait()
    assert dead.exists()
    write_text_atomic(folder / "y.md", "y\n")
    assert sorted(os.listdir(folder)) == ["y.md"]


def test_kills_at_random_moments_lose_nothing_and_leave_no_temporaries(tmp_path: Path, server: str) -> None:
    """Real SIGTERM, SIGINT and SIGKILL at random delays: at any moment of the run, and at
    random moments after the stamping began. Every file is the old one or the stamped one."""
    base = tmp_path / "base"
    terms = corpus(base, server, 40)
    seed = int(os.environ.get("KILL_SEED", time.time_ns() % 10**6))
    rng = random.Random(seed)
    full = tmp_path / "full"
    shutil.copytree(base, full, symlinks=True)
    t0 = time.monotonic()
    assert links(full).returncode == 0
    duration = time.monotonic() - t0
    old, done = state(base), state(full)
    assert all(old[n][0] != done[n][0] for n in old if n != "terms/_sections.yaml")
    plans = [
        (sig, when, rng.uniform(0.05, duration) if when == "any" else rng.uniform(0, 0.1))
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGKILL)
        for when in ("any", "stamping")
    ]
    outcomes: dict[int, tuple[Path, int, str]] = {}

    def trial(k: int, sig: int, when: str, delay: float) -> None:
        root = tmp_path / f"run{k}"
        shutil.copytree(base, root, symlinks=True)
        folder = root / terms.name
        start = os.stat(folder).st_mtime_ns
        proc = subprocess.Popen(
            [sys.executable, "-m", "cudagloss", "links", "terms", "--no-archive"],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while when == "stamping" and os.stat(folder).st_mtime_ns == start and proc.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.001)  # a temporary or a rename changes the folder: the stamping began
        time.sleep(delay)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=300)
        outcomes[k] = (root, proc.returncode, err)

    threads = [threading.Thread(target=trial, args=(k, *plan)) for k, plan in enumerate(plans)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    why = f"KILL_SEED={seed}"
    reruns = []
    for k, (sig, when, delay) in enumerate(plans):
        root, code, err = outcomes[k]
        about = f"{why}: {signal.Signals(sig).name} {when} +{delay:.3f}s"
        now = state(root)
        for name in old:
            assert now[name] in (old[name], done[name]), f"{about}: {name} is neither old nor stamped"
        if sig == signal.SIGKILL:
            assert code in (-9, 0), about
            reruns.append(root)
            continue
        assert set(now) == set(old), f"{about}: left {set(now) - set(old)}"
        assert code in ((143, -15, 0) if sig == signal.SIGTERM else (130, -2, 0)), f"{about}: exit {code}\n{err}"
        if when == "stamping":
            assert "Traceback" not in err, f"{about}\n{err}"
    threads = [threading.Thread(target=links, args=(root,)) for root in reruns]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for root in reruns:
        assert not temporaries(root), why
        assert state(root) == done, why  # the next run stamps what the killed one did not


# --- a full disk, a read-only file system, a folder we may not write -----------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (root only; CI runs as root)."""
    with small_tmpfs(tmp_path) as disk:
        yield disk


def _one_write_line(run: subprocess.CompletedProcess[str], why: str) -> None:
    lines = [x for x in run.stderr.splitlines() if "cannot write" in x]
    assert run.returncode == 5, run.stderr
    assert len(lines) == 1 and why in lines[0] and "Traceback" not in run.stderr, run.stderr
    assert lines[0].startswith("cudagloss links: cannot write terms/"), lines


def test_a_full_disk_is_one_line_and_exit_5(small_disk: Path, server: str) -> None:
    corpus(small_disk, server, 2)
    with open(small_disk / "filler", "wb", buffering=0) as filler, pytest.raises(OSError, match="No space left"):
        while True:
            filler.write(b"\0" * 4096)
    before = state(small_disk)
    run = links(small_disk)
    _one_write_line(run, "No space left on device")
    assert state(small_disk) == before and not temporaries(small_disk)


def test_a_read_only_file_system_is_one_line_and_exit_5(
    small_disk: Path, server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    terms = corpus(small_disk, server, 2)
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    before = state(small_disk)
    _one_write_line(links(small_disk), "Read-only file system")
    assert state(small_disk) == before
    from cudagloss.commands.main import main

    assert main(["new", "Occupancy", "--terms", str(terms)]) == 5
    assert main(["schema", "--out", str(small_disk / "schema")]) == 5
    assert state(small_disk) == before
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("Read-only file system") == 2, err


def test_a_folder_we_may_not_write_is_one_line_and_exit_5(tmp_path: Path, server: str) -> None:
    if os.geteuid() == 0:
        pytest.skip("root may write any folder (the read-only file system test covers root)")
    terms = corpus(tmp_path, server, 2)
    (tmp_path / "shared").chmod(0o555)
    terms.chmod(0o555)
    try:
        before = state(tmp_path)
        _one_write_line(links(tmp_path), "Permission denied")
        assert state(tmp_path) == before
    finally:
        terms.chmod(0o755)
        (tmp_path / "shared").chmod(0o755)


# --- `make new`: the name is data ----------------------------------------------------------

HOSTILE_NAMES = [
    'x"; touch {p}; "',
    "$(shell touch {p})",
    "`touch {p}`",
    "$$(touch {p})",
    "$(touch {p})",
    "'; touch {p}; '",
    "; touch {p} #",
    'a\\" && touch {p} && \\"',
    "$${{IFS}}touch$${{IFS}}{p}",
    "x\ntouch {p}",
]


def test_make_new_passes_the_name_literally_and_never_runs_it(make_copy: tuple[Path, list[str]]) -> None:
    root, make = make_copy
    pwned = root.parent / "pwned"
    procs = []

    def start(name: str, *assignments: str) -> None:
        command = [*make, "new", *assignments]
        procs.append(
            (name, subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        )

    for i, template in enumerate(HOSTILE_NAMES):
        name = template.format(p=f"{pwned}{i}")
        start(name, f"TERM={name}")
    for other in (
        f"SECTION=$(shell touch {pwned}-s)",
        f"SECTION=x; touch {pwned}-s2",
        f"TERMS=$(shell touch {pwned}-t)",
        f"SLUG=$(shell touch {pwned}-slug)",
        f"SLUG=x; touch {pwned}-slug2",
    ):
        start("Plain name", "TERM=Plain name", other)
    import yaml

    made = {}
    for name, proc in procs:
        out, err = proc.communicate(timeout=60)
        assert "Traceback" not in err, err
        if proc.returncode == 0:
            written = root / re.search(r"wrote (\S+):", out).group(1)  # type: ignore[union-attr]
            made[written.name] = yaml.safe_load(written.read_text(encoding="utf-8"))["name"]
            assert made[written.name] == " ".join(name.split()), (name, made[written.name])
        else:
            assert "1 error found" in err or "usage" in err, err
    assert not list(root.parent.glob("pwned*")), "a name ran as code"
    assert len(made) == len(HOSTILE_NAMES)
    assert subprocess.run([*make, "new"], cwd=root, capture_output=True).returncode == 2  # TERM only from env
    chosen = subprocess.run([*make, "new", "TERM=Chosen slug", "SLUG=my-own-slug"], cwd=root, capture_output=True)
    assert chosen.returncode == 0 and (root / "terms" / "my-own-slug.yaml").is_file(), chosen.stderr


REFUSED_SLUGS = ["../x", "/tmp/x", "a/b", "x\n", "A", "x.yaml", "-x", "x-", "a" * 101, "x\x00", ".", "é"]
REFUSED_NAMES = ["   ", "abc\u202edef", "a\u200bb", "\x1b[31mred", "a" * 201, "\ufeffbom", '"; "']


def test_new_refuses_slugs_that_leave_terms_and_names_with_hidden_characters(tmp_path: Path) -> None:
    terms = tmp_path / "terms"
    terms.mkdir()
    shutil.copy(ROOT / "terms" / "_sections.yaml", terms)
    before = sorted(tmp_path.rglob("*"))
    for slug in REFUSED_SLUGS:
        with pytest.raises(GlossaryError, match="is not a valid slug"):
            new_term("Fine name", terms, slug=slug)
    for name in REFUSED_NAMES:
        with pytest.raises(GlossaryError) as refused:
            new_term(name, terms)
        assert "\x1b" not in refused.value.report() and "\u202e" not in refused.value.report(), name
    assert sorted(tmp_path.rglob("*")) == before
    for name, slug in (("../../escape", "escape"), ("/etc/passwd", "etc-passwd"), ("C:\\x", "c-x")):
        assert new_term(name, terms) == terms / f"{slug}.yaml"
    assert sorted(p.name for p in tmp_path.rglob("*") if p.parent != terms) == ["terms"]


SLUGS = {
    "ß": "ss",
    "Straße": "strasse",
    "ẞig": "ssig",
    "Éclair": "eclair",
    "Crème brûlée": "creme-brulee",
    "Ångström": "angstrom",
    "ﬁnal": "final",
    "½ warp": "1-2-warp",
    "İstanbul": "istanbul",
    "Fat binary": "fat-binary",
}
ASK_FOR_A_SLUG = ["Ωmega", "Ωμέγα", "Øresund", "µs timer", "CUDA 编程", "+-+"]


def test_new_spells_accented_and_folded_letters_in_ascii_or_asks_for_a_slug(tmp_path: Path) -> None:
    """'Ωmega' is not filed as 'mega': where a letter has no ASCII spelling, the author names the file."""
    terms = tmp_path / "terms"
    terms.mkdir()
    shutil.copy(ROOT / "terms" / "_sections.yaml", terms)
    assert {name: slugify(name) for name in SLUGS} == SLUGS
    for name in ASK_FOR_A_SLUG:
        assert slugify(name) == "", name
        with pytest.raises(GlossaryError, match="choose the slug"):
            new_term(name, terms)
    assert new_term("Ωmega", terms, slug="omega") == terms / "omega.yaml"
    run = cudagloss(tmp_path, "new", "ß")
    assert run.returncode == 0 and (terms / "ss.yaml").is_file(), run.stderr
    assert '\nname: "ß"\n' in (terms / "ss.yaml").read_text(encoding="utf-8")


# --- the links command line: options before the folder ----------------------------------


def test_links_takes_its_options_before_the_folder_and_shows_its_own_help(tmp_path: Path, server: str) -> None:
    """`--no-stamp` before the folder must still hold: it was 'unrecognized', and a wrapper that
    dropped it would have stamped."""
    terms = corpus(tmp_path, server, 1)
    shown = cudagloss(tmp_path, "links", "-h")
    assert shown.returncode == 0 and shown.stdout.startswith("usage: cudagloss links"), shown.stderr
    assert "--no-stamp" in shown.stdout and "the terms folder" in shown.stdout
    assert "links" in cudagloss(tmp_path, "-h").stdout
    before = state(tmp_path)
    report = cudagloss(tmp_path, "links", "--no-stamp", "--force", "--format", "json", "terms")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["counts"] == {"ok": 5} and state(tmp_path) == before
    run = cudagloss(tmp_path, "links", "--force", "--timeout=30", "terms")
    assert run.returncode == 0 and "stamped 5 term files" in run.stdout, run.stderr
    assert f"\n    checked_on: {TODAY}\n" in (terms / "term-000.yaml").read_text()
    wrong = cudagloss(tmp_path, "links", "--bogus", "terms")
    assert wrong.returncode == 2 and "cudagloss links: error: unrecognized arguments: --bogus" in wrong.stderr
