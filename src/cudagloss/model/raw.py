"""Raw samples as JSON: what an experiment's run() handed its summarise(), kept in the
measurement file so that a summary can be derived again on the CPU (`make rederive`).

A run's raw samples are Python values: dicts keyed by ints (a branch count, a stride), tuples,
floats that may be NaN, numpy scalars and arrays. JSON has none of those, and a summary fed
`{"2": ...}` where it was fed `{2: ...}` fails or, worse, computes something else. So the values
are written with three tags, and read back as they were:

- a dict whose keys are not all strings, or whose one key looks like a tag: `{"__map__": [[k, v], ...]}`;
- a tuple: `{"__tuple__": [...]}`;
- a float JSON cannot hold: `{"__float__": "nan"}` (or "inf", "-inf").

numpy values become the Python values their `tolist()` gives. The file is hostile input like
every measurement file: decoding is bounded in depth and size and raises RawError, never
anything a value could choose.
"""

from __future__ import annotations

import math
from typing import Any

from cudagloss.model.value_checks import Checker

MAP, TUPLE, FLOAT = "__map__", "__tuple__", "__float__"
TAGS = frozenset({MAP, TUPLE, FLOAT})
MAX_DEPTH = 16
"""How deep a raw value may nest, tags included (the deepest run today nests 7)."""
MAX_ITEMS = 400_000
"""Values in one file's raw samples; the file's own limit (MAX_VALUES) is the outer bound."""
_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class RawError(ValueError):
    """A value that cannot be written as raw samples, or raw samples that cannot be read back."""

    def __init__(self, path: tuple[object, ...], message: str) -> None:
        self.path = path
        where = "".join(f"[{p!r}]" for p in path) or "the raw samples"
        super().__init__(f"{where}: {message}")


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_ITEMS

    def take(self, path: tuple[object, ...]) -> None:
        self.left -= 1
        if self.left < 0:
            raise RawError(path, f"more than {MAX_ITEMS:,} values")


def encode(value: Any) -> Any:
    """value as JSON-able data that decode() turns back into an equal value."""
    return _encode(value, (), _Budget())


def _encode(value: Any, path: tuple[object, ...], budget: _Budget) -> Any:
    budget.take(path)
    if len(path) > MAX_DEPTH:
        raise RawError(path, f"nests deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else {FLOAT: "nan" if math.isnan(value) else repr(value)}
    if hasattr(value, "tolist") and type(value).__module__ == "numpy":
        return _encode(value.tolist(), path, budget)
    if isinstance(value, tuple):
        return {TUPLE: [_encode(v, (*path, i), budget) for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [_encode(v, (*path, i), budget) for i, v in enumerate(value)]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and not (len(value) == 1 and set(value) & TAGS):
            return {k: _encode(v, (*path, k), budget) for k, v in value.items()}
        return {MAP: [[_encode(k, (*path, "key"), budget), _encode(v, (*path, k), budget)] for k, v in value.items()]}
    raise RawError(path, f"a {type(value).__name__} cannot be kept as raw samples")


def decode(data: Any) -> Any:
    """The value encode() wrote; RawError for anything it cannot have written."""
    return _decode(data, (), _Budget())


def _decode(data: Any, path: tuple[object, ...], budget: _Budget) -> Any:
    budget.take(path)
    if len(path) > MAX_DEPTH:
        raise RawError(path, f"nests deeper than {MAX_DEPTH} levels")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [_decode(v, (*path, i), budget) for i, v in enumerate(data)]
    if not isinstance(data, dict):
        raise RawError(path, f"a {type(data).__name__} is not JSON")
    if len(data) == 1 and set(data) & TAGS:
        ((tag, inner),) = data.items()
        return _tagged(tag, inner, path, budget)
    return {k: _decode(v, (*path, k), budget) for k, v in data.items()}


def _tagged(tag: str, inner: Any, path: tuple[object, ...], budget: _Budget) -> Any:
    if tag == FLOAT:
        if not isinstance(inner, str) or inner not in _FLOATS:
            raise RawError(path, f"{FLOAT} holds {inner!r:.40}, not one of {', '.join(_FLOATS)}")
        return _FLOATS[inner]
    if not isinstance(inner, list):
        raise RawError(path, f"{tag} must hold a list")
    if tag == TUPLE:
        return tuple(_decode(v, (*path, i), budget) for i, v in enumerate(inner))
    out: dict[Any, Any] = {}
    for i, pair in enumerate(inner):
        if not isinstance(pair, list) or len(pair) != 2:
            raise RawError((*path, i), f"each item of {MAP} must be a [key, value] pair")
        key = _decode(pair[0], (*path, i, 0), budget)
        try:
            hash(key)
        except TypeError:
            raise RawError((*path, i, 0), f"a {type(key).__name__} cannot be a key") from None
        if key in out:
            raise RawError((*path, i, 0), f"key {key!r:.40} appears twice")
        out[key] = _decode(pair[1], (*path, i, 1), budget)
    return out


def call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """One summarise() call's arguments as a file's `raw` field."""
    return {"args": encode(list(args)), "kwargs": encode(dict(kwargs))}


def arguments(raw: Any) -> tuple[list[Any], dict[str, Any]]:
    """A file's `raw` field back as summarise()'s positional and keyword arguments."""
    if not isinstance(raw, dict) or set(raw) != {"args", "kwargs"}:
        raise RawError((), "must be an object with exactly the keys 'args' and 'kwargs'")
    args, kwargs = decode(raw["args"]), decode(raw["kwargs"])
    if not isinstance(args, list):
        raise RawError(("args",), "must be a list")
    if not isinstance(kwargs, dict) or not all(isinstance(k, str) and k.isidentifier() for k in kwargs):
        raise RawError(("kwargs",), "must map argument names to values")
    return args, kwargs


def raw_field(c: Checker, value: Any) -> dict[str, Any] | None:
    """A file's `raw` field, read back here as make rederive will, so a file it cannot use is refused."""
    try:
        arguments(value)
    except RawError as exc:
        c.fail(("raw",), f"cannot be read back as a summary's arguments: {exc}")
        return None
    return dict(value)
