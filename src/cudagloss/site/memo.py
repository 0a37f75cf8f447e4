"""A bounded memo for the render stage, so `mkdocs serve` re-renders only what changed.

MkDocs rebuilds the whole site after every edit, in the same process. Each page's Markdown
is a pure function of its page view (a frozen dataclass of plain values), so keying the
rendered text on the exact inputs lets an unchanged page cost a dictionary lookup instead of a
template render, with no way to serve a stale page: any changed input is a new key.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Memo(Generic[V]):
    """Least recently used first out, at most maxsize entries."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._data: OrderedDict[Hashable, V] = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        try:
            value = self._data[key]
        except KeyError:
            value = self._data[key] = make()
            if len(self._data) > self.maxsize:
                self._data.popitem(last=False)
            return value
        self._data.move_to_end(key)
        return value

    def __len__(self) -> int:
        return len(self._data)


class Pinned(Generic[V]):
    """A Memo keyed by the identity of objects, and a hashable rest.

    The loader hands back the very same LoadedTerm for a file that did not change, so across
    the builds of `mkdocs serve` a key of identities costs no hashing of a term's contents
    (at 5,000 terms, hashing every view each build cost more than rendering one page). The
    objects are kept with the value, so an id is never reused while its entry lives; they
    must not be changed after loading (nothing changes a term).
    """

    def __init__(self, maxsize: int) -> None:
        self._memo: Memo[tuple[tuple[object, ...], V]] = Memo(maxsize)

    def get(self, objects: tuple[object, ...], rest: Hashable, make: Callable[[], V]) -> V:
        return self._memo.get((tuple(map(id, objects)), rest), lambda: (objects, make()))[1]
