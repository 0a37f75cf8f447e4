"""How a measured value reads: a result as a reader sees it ('2048 threads per SM', '26 MiB',
'yes', 'not measured'), how one result varies across the cards of one GPU model, and the
command that would measure what is missing. The pages, the checks and `cudagloss values`
all word values through here, so a value reads the same everywhere."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from cudagloss.model import units
from cudagloss.model.compare import compare_timings
from cudagloss.model.measurement import Result


def verify_command(experiment: str) -> str:
    return f"make verify EXPERIMENT={experiment}"


def format_value(result: Result | None, *, exact: bool = False) -> str:
    """A result as a reader sees it: '17.3 ms', '2,048 threads per SM', '228 KiB', '1 entry',
    'yes', '75×', or 'not measured'. Capacities read in binary units, numbers from a thousand up
    with separators, three significant digits below a hundred; exact adds the value as measured
    where the unit was changed ('228 KiB (233,472 bytes)'), as the measurement page shows it."""
    if result is None or result.value is None:
        return "not measured"
    value, unit = result.value, result.unit
    shown = _number(value, unit)
    if unit in ("bytes", *SIZE_UNITS) and isinstance(value, int | float) and not isinstance(value, bool):
        size, size_unit = readable_size(value, "KiB" if unit == "bytes" else unit, bytes_=unit == "bytes")
        if size_unit != unit:
            readable = f"{_digits(size, size_unit)} {size_unit}"
            return f"{readable} ({shown})" if exact else readable
    return shown


def _digits(value: float, unit: str) -> str:
    """A converted size: whole, or to one decimal (37.5 MiB, 139.8 GiB)."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}".rstrip("0").rstrip(".")


def _number(value: object, unit: str) -> str:
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, float):
        text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    elif isinstance(value, int):
        text = f"{value:,}"
    else:
        text = str(value)
    if not unit:
        return text
    unit = units.spoken(unit, one=value == 1 and not isinstance(value, bool))
    return f"{text}{unit}" if unit in ("×", "%") else f"{text} {unit}"


SIZE_UNITS = ("KiB", "MiB", "GiB", "TiB")


def readable_size(value: float, unit: str, *, bytes_: bool = False) -> tuple[float, str]:
    """A size in the largest binary unit it fills a whole number of times (26624 KiB reads as
    26 MiB; 1025 KiB stays as it is, exact). From bytes (bytes_), any size of a KiB or more
    reads in the largest unit it fills at least once, to one decimal (150109880320 bytes:
    139.8 GiB); below a KiB it stays in bytes."""
    if bytes_:
        if abs(value) < 1024:
            return value, "bytes"
        step, value = 0, value / 1024
        while step + 1 < len(SIZE_UNITS) and abs(value) >= 1024:
            value, step = value / 1024, step + 1
        return value, SIZE_UNITS[step]
    step = SIZE_UNITS.index(unit)
    while step + 1 < len(SIZE_UNITS) and abs(value) >= 1024 and value % 1024 == 0:
        value, step = value / 1024, step + 1
    return (int(value) if float(value).is_integer() else value), SIZE_UNITS[step]


SAME_ON_EVERY_CARD = "the same on every card"
SAME_IN_EVERY_RUN = "the same in every run"


def spread(results: Sequence[Result | None], over: str = "card") -> str:
    """How one result varies across the cards of one GPU model (over='card') or across the runs
    of one card (over='run'): 'min to max unit (x% apart)', 'the same on every card', 'differs:
    a, b' for discrete values, or 'not measured on every card' where one lacks it (nothing is
    filled in)."""
    where = "on every card" if over == "card" else "in every run"
    if any(r is None or r.value is None for r in results):
        return f"not measured {where}"
    found = [r for r in results if r is not None]
    values = [r.value for r in found]
    if all(v == values[0] and type(v) is type(values[0]) for v in values) and len({r.unit for r in found}) == 1:
        return f"the same {where}"
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) != len(values) or len({r.unit for r in found}) != 1:
        return "differs: " + ", ".join(dict.fromkeys(format_value(r) for r in found))
    low = min(found, key=lambda r: float(r.value))  # type: ignore[arg-type]
    high = max(found, key=lambda r: float(r.value))  # type: ignore[arg-type]
    smaller = abs(float(low.value))  # type: ignore[arg-type]
    gap = (float(high.value) - float(low.value)) / smaller if smaller else None  # type: ignore[arg-type]
    apart = "" if gap is None else " (less than 1% apart)" if gap < 0.005 else f" ({gap:.0%} apart)"
    return f"{format_value(low)} to {format_value(high)}{apart}"


def short_gpu(name: str) -> str:
    """A GPU model as prose names it after a count: 'NVIDIA H200' as 'H200', and 'NVIDIA H100 80GB
    HBM3' as 'H100' ('on 3 H100s', not 'on 3 H100 80GB HBM3s'); the full name stays in the hover."""
    short = name.removeprefix("NVIDIA ").strip() or name
    return re.sub(r"\s+\d+\s?GB\b.*$", "", short) or short


def agreed(results: Sequence[Result | None], gpu: str) -> str:
    """The cards of one GPU model as one phrase (agreed_at's text)."""
    return agreed_at(results, gpu)[0]


def agreed_at(results: Sequence[Result | None], gpu: str) -> tuple[str, int]:
    """The cards of one GPU model as one phrase, and the index of the card whose row holds it (of a
    range, its low end): _agreed's text and card."""
    agreed = _agreed(results, gpu)
    return agreed.text, agreed.at


@dataclass(frozen=True, slots=True)
class Agreed:
    """One GPU model's cards as one phrase: its text, the card whose row holds it (a range's low
    end), and of a range its parts and the card holding its high end, so each end can link there."""

    text: str
    at: int
    ends: tuple[str, str, str] | None = None
    """(low, high, ' on N H100s…') of a range; None for one value."""
    high: int = -1


def _agreed(results: Sequence[Result | None], gpu: str) -> Agreed:
    """The cards of one GPU model as one phrase, and the index of the card whose row holds it:
    one value where they agree (equal; or not shown to differ by cudagloss.model.compare's rule,
    when the middle card's value is shown, a value on that card's own row, never a pooled
    number no row holds), a range with the count of cards where they differ ('13.4–19.8 ms on 2
    H200s'), and discrete values that differ shown as differing, never averaged."""
    present = [r for r in results if r is not None and r.value is not None]
    if len(results) == 1 or not present:
        return Agreed(format_value(results[0] if results else None), 0)
    first = next(i for i, r in enumerate(results) if r is not None and r.value is not None)
    values = [r.value for r in present]
    missing = (
        f" (not measured on {len(results) - len(present)} of {len(results)})" if len(present) < len(results) else ""
    )
    if all(type(v) is type(values[0]) and v == values[0] for v in values) and len({r.unit for r in present}) == 1:
        return Agreed(format_value(present[0]) + missing, first)
    discrete = any(r.counted for r in present) or len({r.unit for r in present}) > 1
    if discrete:
        return Agreed(
            " / ".join(dict.fromkeys(format_value(r) for r in present)) + " (differs by card)" + missing, first
        )
    ordered = sorted(present, key=lambda r: float(r.value))  # type: ignore[arg-type]
    sampled = all(r.samples for r in present)
    if sampled and all(compare_timings(a.samples, b.samples).verdict == "SAME" for a, b in combinations(ordered, 2)):
        middle = ordered[(len(ordered) - 1) // 2]
        return Agreed(format_value(middle) + missing, next(i for i, r in enumerate(results) if r is middle))
    low, high = format_value(ordered[0]), format_value(ordered[-1])
    if low == high:  # apart by less than the digits shown: one value, as precise as the page is
        return Agreed(low + missing, first)
    number, _, unit = low.partition(" ")
    if unit and high.endswith(" " + unit):
        low = number
    elif low[-1:] in ("×", "%") and high[-1:] == low[-1:]:
        low = low[:-1]
    at = {id(r): i for i, r in enumerate(results)}
    tail = f" on {len(present)} {short_gpu(gpu)}s{missing}"
    return Agreed(f"{low}–{high}{tail}", at[id(ordered[0])], (low, high, tail), at[id(ordered[-1])])


@dataclass(frozen=True, slots=True)
class OneNumber:
    """What prose shows of one result however many nodes measured it."""

    text: str
    """The value, or the range, as `agreed` words it for the reference GPU model."""
    gpu: str
    """The reference GPU model: the one most nodes share (ties by name)."""
    varies: bool
    """Other GPU models measured other values: the reader is sent to the table."""
    first: int
    """The index of the first node whose value the text speaks for (its row is the link); of a
    range, the card that holds its low end."""
    ends: tuple[str, str, str] | None = None
    """Of a range, (low, high, ' on N H100s…'): each end links to its own card's row."""
    last: int = -1
    """Of a range, the card that holds its high end; else -1."""


def one_number(values: Sequence[tuple[str, Result | None]]) -> OneNumber:
    """Every card's (GPU model, result) as the one number the page, glossary.json and the
    exports show: a value equal everywhere is that value; otherwise the reference model's
    cards, agreed, with `varies` set where other models measured it too. first is the card
    whose row holds the number shown (or the range's first card)."""
    models = Counter(gpu for gpu, _ in values)
    reference = min(models, key=lambda gpu: (-models[gpu], gpu))
    same = len({(type(r.value), r.value, r.unit) if r else None for _, r in values}) == 1
    own = list(range(len(values))) if same else [i for i, (gpu, _) in enumerate(values) if gpu == reference]
    agreed = _agreed([values[i][1] for i in own], reference)
    last = own[agreed.high] if agreed.ends else -1
    varies = len(models) > 1 and not same
    return OneNumber(agreed.text, reference, varies, first=own[agreed.at], ends=agreed.ends, last=last)
