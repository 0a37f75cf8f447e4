"""The rules every value in a measurement file meets, checked where it stands in the text.

A measurement file is machine data, but anyone can edit or forge one in a pull request, and
what it holds reaches pages, file names and anchors. So each value is typed and bounded:
names are identifiers, units come from a small alphabet, text has a length limit and no
control, invisible or direction-changing characters, numbers are finite and in range, and
provenance holds single values. Each problem comes back with the offset of the value (or key)
at fault. This module says what each field must be; cudagloss.model.value_checks checks one
value. Standard library only: the verifier imports this on GPU nodes.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from cudagloss.model.limits import EXPERIMENT_ID_MAX, NAME_MAX, RESULTS_MAX
from cudagloss.model.raw import raw_field
from cudagloss.model.refs import EXPERIMENT_ID, RESULT_NAME
from cudagloss.model.units import unit_problem
from cudagloss.model.value_checks import MISSING, PROVENANCE_KEY, Checker, Issue, kind, shown
from cudagloss.text.emails import redact_email
from cudagloss.text.strictjson import Key, Where

FORMAT_VERSION = 4
READS = (1, 2, 3, FORMAT_VERSION)
"""The versions this tool reads: 2 added each result's first_measured and the file's drift
(in a version 1 file they are unknown fields); 3 added each result's method."""
METHODS = {
    "gpu-queued": "GPU time: CUDA events around work queued behind a wait kernel (no host time in it)",
    "graph-replay": "GPU time: CUDA events around the replay of a CUDA graph",
    "in-kernel": "GPU time read inside the kernel (clock64, %globaltimer)",
    "host": "a host cost: time the host (its CPU, the driver, the Python binding) spends or paces",
    "info": "recorded for information, not compared on re-runs (it varies for reasons outside the GPU)",
}
"""How a result was measured (a version 3 result's method): a closed set, so a page can say it
in words and a re-run knows what not to compare. A result without one is counted, read or
derived from others."""
METHOD_LABELS = {
    "gpu-queued": "GPU time",
    "graph-replay": "GPU time, graph replay",
    "in-kernel": "read in the kernel",
    "host": "host cost",
    "info": "information",
}
"""The same, as a page's short column label."""
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 24
"""The format nests four deep (file, results, one result, its samples); a run's raw samples
(model.raw) nest as the experiment's own values do, tags included."""
MAX_VALUES = 500_000
LABEL_MAX = 200
"""Names, units, gate names and provenance text."""
DESCRIPTION_MAX = 1_000
TEXT_MAX = 20_000
"""A gate's detail, a text result (a JIT log) and a crash's error (a short traceback)."""
MAX_GATES, MAX_RESULTS, MAX_SAMPLES, MAX_PROVENANCE, MAX_DRIFT = 1_000, RESULTS_MAX, 100_000, 64, 16
FUTURE_SLACK = dt.timedelta(days=1)
"""How far past now (UTC) a recorded_at may be: clocks drift, but a run is never from tomorrow."""

NODE_NAME = re.compile(r"[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+){0,31}")
GATE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 '’,.;:()/_+=%×-]{0,199}")
UNIT = re.compile(r"[A-Za-z0-9 %/·×µμ^°²³._()-]{0,40}")
CODE_HASH = re.compile(r"[a-z0-9]{1,16}:[A-Za-z0-9]{1,128}")
DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
LIKE_DAY = "a date like '2026-12-03'"
STATUSES = ("ok", "failed", "skipped")

_TOP = ("experiment", "purpose", "code_hash", "status", "provenance", "gates", "results", "error", "format_version")
_KEYS = ("recipe", "summary")
"""Version 4: the keys a measurement goes stale by (verifier/recipe.py), beside code_hash."""
_GATE = ("name", "passed", "detail")
_RESULT = ("name", "value", "unit", "description", "samples")
_DRIFT = ("name", "old", "new")


def is_experiment_id(name: str) -> bool:
    return len(name) <= EXPERIMENT_ID_MAX and EXPERIMENT_ID.fullmatch(name) is not None


def is_node_name(name: str) -> bool:
    """A node name (it becomes the file name <node>.json): 'h200-3f1ceb1e', 'gpu01.example.org'."""
    return len(name) <= 64 and NODE_NAME.fullmatch(name) is not None and not name.endswith(".failed")


def fit_text(text: str, limit: int = TEXT_MAX) -> str:
    """Text made to pass the rules: unseen characters written as escapes, e-mail addresses
    replaced by a marker, the middle of anything too long cut out (a crash's error is worth
    keeping even when it is odd)."""
    text = redact_email("".join(ch if ch.isprintable() or ch in "\n\t" else ascii(ch)[1:-1] for ch in text))
    if len(text) <= limit:
        return text
    cut = "\n[… cut …]\n"
    head = (limit - len(cut)) // 2
    return text[:head] + cut + text[len(text) - (limit - len(cut) - head) :]


def check(data: Any, where: Where, duplicates: list[tuple[int, str]]) -> tuple[dict[str, Any] | None, list[Issue]]:
    """The file's fields, checked (None when any is wrong), and every issue found (keys
    repeated in one object among them)."""
    c = Checker(where)
    if not isinstance(data, dict):
        c.fail((), f"must be a JSON object, not {kind(data)}")
        return None, c.issues
    version = data.get("format_version")
    if type(version) is not int or version not in READS:
        told = (
            shown(version)
            if isinstance(version, str)
            else kind(version)
            if isinstance(version, dict | list)
            else version
        )
        reads = " and ".join(str(v) for v in READS)
        message = f"measurement format version {told} is not known (this tool reads {reads})"
        return None, [Issue(0, message, "update cudagloss, or re-run the experiment with `make verify`")]
    c.issues += [Issue(offset, f"key {shown(key)} appears twice in one object") for offset, key in duplicates]
    v2, v4 = version >= 2, version >= 4
    allowed = _TOP + ("drift",) * v2 + (*_KEYS, "raw") * v4
    c.fields(data, (), allowed, tuple(k for k in _TOP if k != "error") + _KEYS * v4)
    provenance = _provenance(c, data.get("provenance", MISSING))
    out: dict[str, Any] = {
        "experiment": c.name(
            data.get("experiment", MISSING), ("experiment",), is_experiment_id, "an experiment id like 'ptx-jit'"
        ),
        "purpose": c.text(data.get("purpose", MISSING), ("purpose",), DESCRIPTION_MAX),
        "code_hash": c.text(
            data.get("code_hash", MISSING), ("code_hash",), 160, pattern=CODE_HASH, like="a hash like 'sha256:…'"
        ),
        **{
            key: c.text(data.get(key, MISSING), (key,), 160, pattern=CODE_HASH, like="a hash like 'sha256:…'")
            for key in _KEYS
            if v4
        },
        "status": c.text(data.get("status", MISSING), ("status",), 10),
        "provenance": provenance,
        "gates": [
            _gate(c, g, ("gates", i)) for i, g in enumerate(c.array(data.get("gates", MISSING), ("gates",), MAX_GATES))
        ],
        "results": _results(c, data.get("results", MISSING), version, recorded_day(provenance)),
        "error": None if data.get("error") is None else c.text(data["error"], ("error",), TEXT_MAX, multiline=True),
        "drift": _drift(c, data.get("drift", []), provenance) if v2 else [],
        "raw": raw_field(c, data["raw"]) if v4 and "raw" in data else None,
    }
    if out["status"] is not None and out["status"] not in STATUSES:
        c.fail(("status",), f"{shown(out['status'])} is not one of {', '.join(STATUSES)}")
    return (None if c.issues else out), c.issues


def _provenance(c: Checker, value: Any) -> dict[str, Any]:
    path: tuple[Key, ...] = ("provenance",)
    if value is MISSING:
        return {}
    if not isinstance(value, dict):
        c.fail(path, f"must be an object, not {kind(value)}")
        return {}
    if len(value) > MAX_PROVENANCE:
        c.fail(path, f"holds {len(value)} entries; the limit is {MAX_PROVENANCE}")
        return {}
    out = {}
    for key, item in value.items():
        if not (len(key) <= 64 and PROVENANCE_KEY.fullmatch(key)):
            c.fail(path, f"{shown(key)} is not a name like 'gpu_name'", key=key)
            continue
        out[key] = c.scalar(item, (*path, key), LABEL_MAX)
    node = value.get("node")
    if isinstance(node, str) and out.get("node") is not None and not is_node_name(node):
        c.fail((*path, "node"), f"{shown(node)} is not a node name like 'h200-3f1ceb1e' (set VERIFY_NODE to one)")
    stamp = out.get("recorded_at")
    if isinstance(stamp, str):
        try:
            when = dt.datetime.fromisoformat(stamp)
        except ValueError:
            c.fail((*path, "recorded_at"), f"{shown(stamp)} is not an ISO 8601 date and time")
        else:
            if when.tzinfo is None:  # make verify writes UTC; a time without a zone is read so
                when = when.replace(tzinfo=dt.UTC)
            if when > dt.datetime.now(dt.UTC) + FUTURE_SLACK:
                c.fail((*path, "recorded_at"), f"{shown(stamp)} is in the future")
    return out


def _gate(c: Checker, value: Any, path: tuple[Key, ...]) -> dict[str, Any]:
    gate = c.fields(value, path, _GATE, ("name", "passed"))
    if gate is None:
        return {}
    passed = gate.get("passed")
    if "passed" in gate and not isinstance(passed, bool):
        c.fail((*path, "passed"), f"must be true or false, not {kind(passed)}")
    like = "a gate name in letters, digits, spaces and plain punctuation"
    return {
        "name": c.text(gate.get("name", MISSING), (*path, "name"), LABEL_MAX, pattern=GATE_NAME, like=like),
        "passed": passed,
        "detail": c.text(gate.get("detail", ""), (*path, "detail"), TEXT_MAX, multiline=True),
    }


def _results(c: Checker, value: Any, version: int, recorded: dt.date | None) -> list[dict[str, Any]]:
    """Results; a version 1 file has no first_measured, one before 3 no method, and recorded
    is the run's day."""
    v2, v3 = version >= 2, version >= 3
    out = []
    seen: set[str] = set()
    known = _RESULT + ("first_measured",) * v2 + ("method",) * v3
    for i, item in enumerate(c.array(value, ("results",), MAX_RESULTS)):
        path: tuple[Key, ...] = ("results", i)
        result = c.fields(item, path, known, ("name", "value"))
        if result is None:
            continue
        like = "a result name like 'load_warm_cache_median'"
        name = c.text(result.get("name", MISSING), (*path, "name"), NAME_MAX, pattern=RESULT_NAME, like=like)
        if name is not None and name in seen:
            c.fail((*path, "name"), f"result {shown(name)} appears twice")
        seen.add(name or "")
        samples = c.array(result.get("samples", []), (*path, "samples"), MAX_SAMPLES)
        first = result.get("first_measured", MISSING)
        unit = c.text(result.get("unit", ""), (*path, "unit"), 40, pattern=UNIT, like="a unit like 'ms'")
        if unit and (problem := unit_problem(unit)) is not None:
            c.fail((*path, "unit"), problem)
        value = c.scalar(result.get("value", MISSING), (*path, "value"), TEXT_MAX, multiline=True)
        numbers = [c.number(s, (*path, "samples", j)) for j, s in enumerate(samples)]
        for where, number in [((*path, "value"), value), *(((*path, "samples", j), n) for j, n in enumerate(numbers))]:
            if (problem := out_of_bounds(number, unit)) is not None:
                c.fail(where, problem)
        out.append(
            {
                "name": name,
                "value": value,
                "unit": unit,
                "description": c.text(result.get("description", ""), (*path, "description"), DESCRIPTION_MAX),
                "samples": numbers,
                "first_measured": _first_measured(c, first if v2 else MISSING, path, recorded),
                "method": _method(c, result.get("method", ""), (*path, "method")) if v3 else "",
            }
        )
    return out


DURATIONS = frozenset({"s", "ms", "µs", "μs", "us", "ns", "cycles"})
"""Units of a duration (as cudagloss.model.compare.TIME_UNITS): a time taken is positive."""


def out_of_bounds(value: Any, unit: str | None) -> str | None:
    """Why a number cannot be a value of its kind, or None: a duration is positive, a rate (a
    unit per second) never negative, a percentage within 0-100."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not unit:
        return None
    if unit in DURATIONS and value <= 0:
        return f"is {value:g} {unit}: a duration is positive"
    if unit.endswith("/s") and value < 0:
        return f"is {value:g} {unit}: a rate is never negative"
    if unit == "%" and not 0 <= value <= 100:
        return f"is {value:g}%: a percentage lies within 0-100"
    return None


def _method(c: Checker, value: Any, path: tuple[Key, ...]) -> str:
    if isinstance(value, str) and (value == "" or value in METHODS):
        return str(value)
    c.fail(
        path, f"{shown(value) if isinstance(value, str) else kind(value)} is not a method; one of {', '.join(METHODS)}"
    )
    return ""


def recorded_day(provenance: dict[str, Any]) -> dt.date | None:
    """The day recorded_at names, as written (its zone's date), or None without a valid one."""
    stamp = provenance.get("recorded_at")
    try:
        return dt.datetime.fromisoformat(stamp).date() if isinstance(stamp, str) else None
    except ValueError:
        return None


def _first_measured(c: Checker, value: Any, path: tuple[Key, ...], recorded: dt.date | None) -> str:
    """A day like '2026-12-03', not in the future and not after the run that confirmed it."""
    path = (*path, "first_measured")
    text = c.text(value, path, 10, pattern=DAY, like=LIKE_DAY)
    if text is None:
        return ""
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        c.fail(path, f"{shown(text)} is not {LIKE_DAY}")
        return ""
    if day > (dt.datetime.now(dt.UTC) + FUTURE_SLACK).date():
        c.fail(path, f"{shown(text)} is in the future")
    elif recorded is not None and day > recorded:
        c.fail(path, f"{shown(text)} is after this run's recorded_at ({recorded.isoformat()}), which confirmed it")
    return text


def _drift(c: Checker, value: Any, provenance: dict[str, Any]) -> list[dict[str, Any]]:
    """The environment keys that changed since the node's previous good run, each once: a change
    to a value the run's provenance records is to that value, and no entry changes nothing."""
    out: list[dict[str, Any]] = []
    for i, item in enumerate(c.array(value, ("drift",), MAX_DRIFT)):
        path: tuple[Key, ...] = ("drift", i)
        if c.fields(item, path, _DRIFT, _DRIFT) is None:
            continue
        like = "a provenance key like 'driver_version'"
        name = c.text(item.get("name", MISSING), (*path, "name"), 64, pattern=PROVENANCE_KEY, like=like)
        if name is not None and any(d["name"] == name for d in out):
            c.fail((*path, "name"), f"{shown(name)} appears twice")
        count = len(c.issues)
        old, new = (c.scalar(item.get(k, MISSING), (*path, k), LABEL_MAX) for k in ("old", "new"))
        now = provenance.get(name or "", new)  # a key the run does not record may have been dropped
        if name is not None and len(c.issues) == count and (old, type(old)) == (new, type(new)):
            c.fail(path, f"{shown(name)} did not change: old and new are the same")
        elif name is not None and len(c.issues) == count and (new, type(new)) != (now, type(now)):
            c.fail((*path, "new"), f"is not {now!a}, what this run's provenance says {name} is")
        out.append({"name": name, "old": old, "new": new})
    return out
