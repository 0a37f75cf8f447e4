"""The check cache: what each term file checked to, kept per user so that `cudagloss check`
re-reads only the files that changed.

A term's own checks depend on its bytes, the measurements, the facts file, this package's
code and the Python it runs on; all but the bytes make the `context`, and a cache written
under another context is not used at all. Per file the cache keeps a digest of its bytes,
its diagnostics, the facts it used and its `Entry` (what the checks across files need). A
file whose digest matches is neither parsed nor checked again.

The cache lives in the user's cache folder (`$CUDAGLOSS_CACHE_DIR`, else
`$XDG_CACHE_HOME/cudagloss`, else `~/.cache/cudagloss`), never in the repository: a pull
request could commit a cache that declares its own mistaken term clean. It is JSON lines (a
header, then one line per file; never pickle), read only when it and its folder are the
user's own and no one else may write them; anything unexpected in it means a cold run,
never an error. `--no-cache` or
`CUDAGLOSS_CACHE=off` turns it off. Each context has its own file (see _forget_old).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cudagloss.check.entries import Entry, as_int, as_str
from cudagloss.errors import Diagnostic
from cudagloss.files.atomic import WriteFailed, write_text_atomic

FORMAT = 1
STALE_DAYS = 7
"""A cache of another context unused this long is removed when a run saves its own."""
MAX_BYTES = 256 * 1024 * 1024
"""A cache file larger than this is not read (5,000 terms make about 4 MB)."""


@dataclass(frozen=True)
class Checked:
    """One term file's checks, as the cache keeps them."""

    diagnostics: list[Diagnostic]
    used_facts: frozenset[int]
    entry: Entry | None
    """None when the file did not load as a term (its diagnostics say why)."""


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=20).hexdigest()


@functools.cache
def code_digest() -> str:
    """This package's code, so that a changed check never reuses an old verdict."""
    package = Path(__file__).resolve().parent.parent
    h = hashlib.blake2b(digest_size=20)
    for path in sorted(package.rglob("*.py")):
        h.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def folder_digest(folder: Path) -> str:
    """The digest of every file's name and bytes under folder (the diagrams terms draw from):
    a changed drawing is checked again, its terms' verdicts are not taken from the cache."""
    h = hashlib.blake2b(digest_size=20)
    for path in sorted(folder.rglob("*")) if folder.is_dir() and not folder.is_symlink() else []:
        linked = any(p.is_symlink() for p in (path, *(folder / q for q in path.relative_to(folder).parents[:-1])))
        if linked or path.is_file():  # a link is never read through (the check refuses it)
            h.update(path.relative_to(folder).as_posix().encode("utf-8", "surrogatepass") + b"\0")
            h.update(b"a link\0" if linked else path.read_bytes() + b"\0")
    return h.hexdigest()


def context_digest(*parts: str) -> str:
    """The digest of everything besides a file's bytes that its checks depend on."""
    h = hashlib.blake2b(digest_size=20)
    for part in (str(FORMAT), code_digest(), sys.version, yaml.__version__, *parts):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def cache_folder() -> Path | None:
    """Where caches go, or None when turned off."""
    if os.environ.get("CUDAGLOSS_CACHE", "").lower() in ("0", "off", "no", "false"):
        return None
    explicit = os.environ.get("CUDAGLOSS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cudagloss"


def _in_repository(folder: Path, terms: Path) -> bool:
    """Whether folder is in the terms folder's parent or in the git work tree around it."""
    real, here = Path(os.path.realpath(folder)), Path(os.path.realpath(terms)).parent
    work_tree = next((p for p in (here, *here.parents) if (p / ".git").exists()), here)
    return real.is_relative_to(here) or real.is_relative_to(work_tree)


def _ours(info: os.stat_result) -> bool:
    """Owned by this user and writable by no one else."""
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


_Files = dict[str, tuple[str, "Checked", str]]
"""File name -> (digest of its text, what it checked to, the cache's line for it)."""
_last: dict[Path, tuple[tuple[int, int, int], str, _Files]] = {}
"""The cache file this process last wrote or read, by its (inode, size, mtime): `make serve`
checks after every edit, and decoding 5,000 entries each time cost a third of a second."""


def _stamp(info: os.stat_result) -> tuple[int, int, int]:
    return info.st_ino, info.st_size, info.st_mtime_ns


@dataclass
class CheckCache:
    """The cache of one terms folder under one context."""

    path: Path | None
    context: str
    entries: _Files = field(default_factory=dict)
    """As read."""
    seen: _Files = field(default_factory=dict)
    """What this run found, which is what is saved."""
    changed: bool = False

    @classmethod
    def open(cls, terms: Path, context: str) -> CheckCache:
        """The cache for terms under context; none when there is none usable, or when it
        would lie in the repository (a pull request could commit it)."""
        folder = cache_folder()
        if folder is None or _in_repository(folder, terms):
            return cls(None, context)
        name = hashlib.blake2b(str(terms.resolve()).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        cache = cls(folder / "check" / f"{name}-{context[:16]}.json", context)
        cache.entries = cache._read()
        return cache

    def _forget_old(self) -> None:
        """Remove this folder's caches of other contexts unused for STALE_DAYS: each context
        (with or without measurements, another Python) keeps its own file, so two that
        alternate do not make each other cold, and old code's files do not pile up."""
        assert self.path is not None
        mine = self.path.name.rsplit("-", 1)[0]
        for other in self.path.parent.glob(f"{mine}-*.json"):
            with contextlib.suppress(OSError):
                info = os.lstat(other)
                if other != self.path and time.time() - info.st_mtime > STALE_DAYS * 86400:
                    os.unlink(other)

    def _read(self) -> _Files:
        if self.path is None:
            return {}
        try:
            info = os.lstat(self.path)
            if not (_ours(os.stat(self.path.parent)) and _ours(info)):
                return {}
            last = _last.get(self.path)
            if last is not None and last[0] == _stamp(info) and last[1] == self.context:
                return last[2]
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return {}
                raw = f.read(MAX_BYTES + 1)
            if len(raw) > MAX_BYTES:
                return {}
            head, *lines = raw.decode("utf-8").split("\n")
            data = json.loads(head)
            if data.get("format") != FORMAT or data.get("context") != self.context:
                return {}
            found: _Files = {}
            for line in lines:
                name, text_digest, checked = json.loads(line)
                found[as_str(name)] = (as_str(text_digest), _checked(checked), line)
            _last[self.path] = (_stamp(info), self.context, found)
            return found
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError, UnicodeError):
            return {}

    def get(self, name: str, text_digest: str) -> Checked | None:
        found = self.entries.get(name)
        if found is None or found[0] != text_digest:
            return None
        self.seen[name] = found
        return found[1]

    def put(self, name: str, text_digest: str, checked: Checked) -> None:
        line = json.dumps([name, text_digest, _checked_json(checked)], separators=(",", ":"))
        self.seen[name] = (text_digest, checked, line)
        self.changed = True

    def save(self) -> None:
        """Write what this run found, when anything changed; a cache that cannot be written
        is no error (the next run is cold)."""
        if self.path is None or not (self.changed or set(self.seen) != set(self.entries)):
            return
        head = json.dumps({"format": FORMAT, "context": self.context}, separators=(",", ":"))
        text = "\n".join([head, *(line for _, (_, _, line) in sorted(self.seen.items()))])
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not _ours(os.stat(self.path.parent)):
                return  # others may write this folder: nothing of ours goes there
            with contextlib.suppress(FileNotFoundError):
                if not stat.S_ISREG(os.lstat(self.path).st_mode):
                    os.unlink(self.path)  # a link (or FIFO) at the name is replaced, never written through
            write_text_atomic(self.path, text)
            os.chmod(self.path, 0o600)  # made 0o664 under umask 002, it would fail _read's own test
            self._forget_old()
            _last[self.path] = (_stamp(os.lstat(self.path)), self.context, dict(self.seen))
        except (WriteFailed, OSError):
            pass


def _checked_json(c: Checked) -> dict[str, Any]:
    return {
        "diagnostics": [[d.path, d.line, d.col, d.message, d.hint, d.warning] for d in c.diagnostics],
        "used_facts": sorted(c.used_facts),
        "entry": c.entry.to_json() if c.entry else None,
    }


def _checked(data: dict[str, Any]) -> Checked:
    diagnostics = []
    for path, line, col, message, hint, warning in data["diagnostics"]:
        diagnostics.append(
            Diagnostic(as_str(path), as_int(line), as_int(col), as_str(message), as_str(hint), warning is True)
        )
    used = frozenset(int(i) for i in data["used_facts"] if type(i) is int)
    entry = Entry.from_json(data["entry"]) if data["entry"] is not None else None
    return Checked(diagnostics, used, entry)
