"""File writes that lose nothing: readers see the old file or the new one, never half, and
nothing of the file's owner is lost on the way.

- The new bytes go to a temporary file beside the target, then are renamed over it (or
  hard-linked, to create without overwriting). The bytes are written as given: a CRLF
  text stays CRLF.
- A symbolic link is followed: its target gets the new text, the link stays a link.
- An existing file keeps its mode (and owner, where we may set it); a new file gets
  0o666 less the umask, applied by the kernel as for any file the user creates.
- A read-only file (no write bit, or not writable by us) is not replaced: `ReadOnly`.
- `expect` makes the write a compare-and-swap: right before the rename the target is
  compared with the `Snapshot` taken when it was read (path, inode, size, times, bytes);
  if an editor saved it meanwhile, `Changed` is raised and nothing is written.
- Temporaries are named `.<name>.cudagloss-<12 hex>.tmp` and held under `flock` while they
  exist. SIGINT, SIGTERM and SIGHUP arriving meanwhile are held until the temporary is gone,
  so a catchable signal never leaves one. SIGKILL can: its temporary is then unlocked, and
  `remove_stale_temporaries` (run on the first write into each folder, and by `cudagloss
  links` and `new` at start) removes it; a locked one belongs to a live writer and stays.
- A disk that is full, a folder we may not write: `WriteFailed`, an OSError whose text is
  one line for the user; the commands exit with `ExitCode.WRITE` then.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_MARK = "cudagloss-"
_OURS = re.compile(r"^\..+\." + _MARK + r"[0-9a-f]{12}\.tmp$")
_LEGACY = re.compile(r"^\.(.+)\.[a-z0-9_]{8}\.tmp$")
"""Temporaries of versions before the lock (tempfile.mkstemp names): removed once an hour old."""
_LEGACY_AGE_S = 3600
_HELD_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))
_cleaned: set[str] = set()
_cleaned_lock = threading.Lock()


class WriteFailed(OSError):
    """A write that could not be made; the target is as it was. str() is one line."""

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror}"


class ReadOnly(WriteFailed):
    """The target is read-only: its owner does not want it changed."""


class Changed(Exception):
    """The target changed since it was read (an editor saved it): nothing was written."""


@dataclass(frozen=True)
class Snapshot:
    """A file as it was read: what a later write compares against."""

    real: str
    data: bytes
    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int
    """Changes with a chmod too: a file made read-only meanwhile is not written."""


def read_snapshot(path: Path) -> Snapshot:
    """Read path (through a link) with the facts that tell whether it changed later."""
    real = os.path.realpath(path)
    with open(real, "rb") as handle:
        st = os.fstat(handle.fileno())
        data = handle.read()
    return Snapshot(real, data, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _unchanged(real: str, expect: Snapshot) -> bool:
    if real != expect.real:
        return False
    try:
        st = os.stat(real)
        now = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if now != (expect.dev, expect.ino, expect.size, expect.mtime_ns, expect.ctime_ns):
            return False
        with open(real, "rb") as handle:
            return handle.read() == expect.data
    except OSError:
        return False


def _failed(exc: OSError, shown: Path) -> WriteFailed:
    why = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        why += " (free some space and run it again)"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        why += " (the folder or file system does not let this user write there)"
    return WriteFailed(exc.errno or errno.EIO, why, str(shown))


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP until the block ends, then deliver them (main thread only;
    signal handlers run there, so a write in another thread is not interrupted anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    saved: dict[int, Any] = {}

    def hold(signum: int, _frame: object) -> None:
        caught.append(signum)

    try:
        for sig in _HELD_SIGNALS:
            previous = signal.getsignal(sig)
            if previous is not None:  # None: a handler set outside Python, which we could not put back
                signal.signal(sig, hold)
                saved[sig] = previous
        yield
    finally:
        for sig, previous in saved.items():
            signal.signal(sig, previous)
        for sig in dict.fromkeys(caught):
            if saved.get(sig) is not signal.SIG_IGN:
                signal.raise_signal(sig)


def remove_stale_temporaries(folder: Path) -> int:
    """Remove the temporaries of writers that died (SIGKILL, power loss) from folder: ours
    when no live writer holds their lock, older versions' once an hour old. Returns how many."""
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        ours = _OURS.match(entry.name) is not None
        legacy = not ours and (m := _LEGACY.match(entry.name)) is not None and (Path(folder) / m.group(1)).exists()
        if not (ours or legacy):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                continue
            if legacy and time.time() - st.st_mtime < _LEGACY_AGE_S:
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: a live writer's
            if os.stat(entry.path, follow_symlinks=False).st_ino == st.st_ino:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def _clean_once(folder: str) -> None:
    with _cleaned_lock:
        if folder in _cleaned:
            return
        _cleaned.add(folder)
    remove_stale_temporaries(Path(folder))


def _temporary(real: str, mode: int) -> tuple[int, str]:
    """A new temporary beside real, open for writing and locked; mode before the umask."""
    folder, name = os.path.split(real)
    for _ in range(100):
        tmp = os.path.join(folder, f".{name[:180]}.{_MARK}{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
        except FileExistsError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.stat(tmp, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                return fd, tmp
        except FileNotFoundError:
            pass  # a cleaner took it between the create and the lock: another name
        os.close(fd)
    raise FileExistsError(errno.EEXIST, "no free temporary file name", folder)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_only(st: os.stat_result) -> bool:
    """No write permission for us by the mode bits (root: for no one). A file system mounted
    read-only is not this: writing there fails, as WriteFailed."""
    uid = os.geteuid()
    if uid == 0:
        return not st.st_mode & 0o222
    if st.st_uid == uid:
        return not st.st_mode & stat.S_IWUSR
    if st.st_gid == os.getegid() or st.st_gid in os.getgroups():
        return not st.st_mode & stat.S_IWGRP
    return not st.st_mode & stat.S_IWOTH


def _writable(real: str, shown: Path) -> os.stat_result | None:
    """The target's status when it exists; ReadOnly or WriteFailed where it must not be replaced."""
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _failed(exc, shown) from exc
    if not stat.S_ISREG(st.st_mode):
        raise WriteFailed(errno.EISDIR, "not a regular file; left as it is", str(shown))
    if _read_only(st):
        raise ReadOnly(errno.EACCES, "the file is read-only; left as it is (make it writable to change it)", str(shown))
    return st


def _via_temporary(
    path: Path, data: bytes, publish: Callable[[str, str], None], expect: Snapshot | None, replace: bool
) -> None:
    # Creating never goes through a link at the name: a dangling one would create its target.
    real = os.path.realpath(path) if replace else os.path.join(os.path.realpath(path.parent), path.name)
    _clean_once(os.path.dirname(real))
    st = _writable(real, path) if replace else None
    with signals_held():
        try:
            fd, tmp = _temporary(real, 0o600 if st else 0o666)
        except OSError as exc:
            raise _failed(exc, path) from exc
        try:
            _write_all(fd, data)
            if st is not None:
                os.fchmod(fd, stat.S_IMODE(st.st_mode))
                if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                    with suppress(PermissionError):  # only root may give a file away; the mode stays
                        os.fchown(fd, st.st_uid, st.st_gid)
            os.fsync(fd)
            if expect is not None and not _unchanged(real, expect):
                raise Changed(str(path))
            publish(tmp, real)
        except FileExistsError:
            raise
        except OSError as exc:
            raise _failed(exc, path) from exc
        finally:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            finally:
                os.close(fd)


def write_text_atomic(path: Path, text: str, *, expect: Snapshot | None = None) -> None:
    """Replace path (or a link's target) with text, exactly as given, so that readers see the
    old file or the new one; with expect, only if the file is still as read (else Changed)."""
    _via_temporary(Path(path), text.encode("utf-8"), os.replace, expect, replace=True)


def create_text_exclusive(path: Path, text: str) -> None:
    """Create path whole or not at all, never over an existing file (FileExistsError):
    a hard link of the finished temporary file fails if the name is taken, even by a race."""
    _via_temporary(Path(path), text.encode("utf-8"), os.link, None, replace=False)
