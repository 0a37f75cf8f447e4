"""Which kernel sources a run compiled, as sha256 hex digests (issue 40).

The contract (verifier/contract.py) fails a run that compiled a source its experiment does not
declare, so that what reached the GPU is what its recipe key hashes. NVRTC is entered at one
place, cuda.compile_source, which notes each source here; a fresh process (verifier/spawn.py)
sends its notes back with its step's result. Standard library only: the zygote imports it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

KEY = "compiled_sources"
"""The key of a fresh process's step result that carries the digests it compiled (worker.py)."""

_seen: list[list[str]] = []
"""One list per recording in progress (innermost last); nothing is kept while none is."""


def digest(source: str) -> str:
    """The sha256 a source is known by: of its text as NVRTC gets it (UTF-8), as recipe.py hashes it."""
    return hashlib.sha256(source.encode()).hexdigest()


def note(source: str) -> None:
    """cuda.compile_source's one call: source is about to be compiled."""
    noted(digest(source))


def noted(*digests: str) -> None:
    """Record digests (a child process's, passed back) in every recording in progress."""
    for seen in _seen:
        seen.extend(digests)


@contextmanager
def recording() -> Iterator[list[str]]:
    """The digests of every source compiled while the block runs, in order, repeats kept."""
    seen: list[str] = []
    _seen.append(seen)
    try:
        yield seen
    finally:
        del _seen[next(i for i, s in enumerate(_seen) if s is seen)]  # by identity: two may be equal
