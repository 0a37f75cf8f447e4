"""Units in the claims language: what `ms * ms`, `GB/s / GB/s` and `ms < µs` mean.

A unit as an experiment writes it ('GB/s', 'B/clock/SM', 'threads/warp', 'µs') is read as a
product of symbols with powers. SYMBOLS says what each symbol is in base terms: a scale (exact,
as a fraction) and base dimensions. Seconds, bytes, FLOP and watts are dimensions; so is each
thing a GPU counts (threads, warps, blocks, SMs, registers and the like: COUNTED, plural or not),
so that warps × threads/warp is threads and never blocks. A clock cycle is a count of ticks with
no dimension (cycles per ns is a frequency, B/clock × MHz is a bandwidth); '×' is a plain ratio
and '%' a hundredth of one. A symbol the table does not know is a dimension of its own, equal
only to itself.

Products and quotients multiply units (ms × ms is ms², a rate over a rate has none); sums,
differences, max, min and comparisons need one dimension, and convert by the exact ratio of the
scales (1 ms == 1000 µs). A plain number written in a claim has no unit of its own: it takes the
unit of what it is added to or compared with, and has none in a product.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from fractions import Fraction

_MILLI, _MICRO, _NANO = Fraction(1, 10**3), Fraction(1, 10**6), Fraction(1, 10**9)
_DECIMAL: dict[str, int | Fraction] = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}
_SCALED: dict[str, tuple[dict[str, int], dict[str, int | Fraction]]] = {
    "s": ({"s": 1}, {"": 1, "m": _MILLI, "µ": _MICRO, "μ": _MICRO, "u": _MICRO, "n": _NANO}),
    "Hz": ({"s": -1}, _DECIMAL),
    "B": ({"B": 1}, _DECIMAL | {"K": 10**3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}),
    "FLOP": ({"FLOP": 1}, _DECIMAL),
    "W": ({"W": 1}, _DECIMAL | {"m": _MILLI}),
}
"""Symbols that take a prefix: their dimensions, and the scale of each prefix."""
SYMBOLS: dict[str, tuple[dict[str, int], Fraction]] = {
    prefix + symbol: (dims, Fraction(scale))
    for symbol, (dims, scales) in _SCALED.items()
    for prefix, scale in scales.items()
}
SYMBOLS |= {
    "byte": ({"B": 1}, Fraction(1)),
    "bit": ({"B": 1}, Fraction(1, 8)),
    "cycle": ({}, Fraction(1)),
    "clock": ({}, Fraction(1)),
    "×": ({}, Fraction(1)),
    "%": ({}, Fraction(1, 100)),
}
COUNTED = ("thread", "warp", "block", "SM", "register", "lane", "entry", "engine", "level", "combination", "node")
"""What a GPU counts: each its own dimension, written plural ('threads', 'entries') or not."""
SYMBOLS |= {name: ({name: 1}, Fraction(1)) for name in COUNTED}
_PLURAL = {
    (name[:-1] + "ies" if name.endswith("y") else name + "s"): name
    for name in (*COUNTED, "byte", "bit", "cycle", "clock")
}
MAX_POWER = 16
"""The largest power of one symbol a unit may have, read or computed: no experiment writes more
than a square (ms², B/s²), and 16 leaves room for products of products in a claim. Past it,
ms^99999999 would make `scale` a fraction of a hundred million digits (a hang, not an error)."""


class UnitTooLarge(ValueError):
    """A unit with a power past MAX_POWER, written or reached by multiplying; str() is one line."""


def _bounded(powers: dict[str, int]) -> dict[str, int]:
    for symbol, power in powers.items():
        if abs(power) > MAX_POWER:
            shown = symbol if len(symbol) <= 20 else symbol[:17] + "..."
            raise UnitTooLarge(f"the unit has '{shown}' to the power {power}, past ±{MAX_POWER}")
    return powers


_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_WRITE_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_PLURAL_OF = {name: plural for plural, name in _PLURAL.items()}
_POWER = re.compile(r"(.+?)(?:\^(-?[0-9]+)|([⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?")


def _singular(symbol: str) -> str:
    return _PLURAL.get(symbol, symbol)


@dataclass(frozen=True)
class Unit:
    """A product of symbols with powers (('GB', 1), ('s', -1)), kept as written for the reader;
    `written` is the text it was read from, shown as is."""

    powers: tuple[tuple[str, int], ...] = ()
    written: str = field(default="", compare=False)

    @functools.cached_property
    def dims(self) -> tuple[tuple[str, int], ...]:
        """The base dimensions, powers summed: what must match to add or compare."""
        total: dict[str, int] = {}
        for symbol, power in self.powers:
            for dim, p in SYMBOLS.get(symbol, ({symbol: 1}, Fraction(1)))[0].items():
                total[dim] = total.get(dim, 0) + p * power
        return tuple(sorted((dim, p) for dim, p in total.items() if p))

    @functools.cached_property
    def scale(self) -> Fraction:
        """How many base units one of this unit is, exactly (ms: 1/1000)."""
        scale = Fraction(1)
        for symbol, power in self.powers:
            scale *= SYMBOLS.get(symbol, ({}, Fraction(1)))[1] ** power
        return scale

    def __str__(self) -> str:
        if self.written or not self.powers:
            return self.written

        def part(symbol: str, power: int, plural: bool) -> str:
            name = _PLURAL_OF.get(symbol, symbol) if plural else symbol
            return name + ("" if power == 1 else str(power).translate(_WRITE_SUPERSCRIPT))

        above = [part(s, p, True) for s, p in self.powers if p > 0]
        below = [part(s, -p, False) for s, p in self.powers if p < 0]
        return "·".join(above or ["1"]) + "".join("/" + b for b in below)

    def times(self, other: Unit, power: int = 1) -> Unit:
        """This unit times other (power 1) or over it (power -1); symbols that cancel go;
        UnitTooLarge where a power passes MAX_POWER (x * x * x ... in a claim)."""
        total = dict(self.powers)
        for symbol, p in other.powers:
            total[symbol] = total.get(symbol, 0) + p * power
        _bounded(total)
        return Unit(tuple(sorted(((s, p) for s, p in total.items() if p), key=lambda sp: sp[1] < 0)))


NONE = Unit()
"""A value with no unit: a ratio, a count of nothing in particular, a measured result without one."""


@functools.lru_cache(maxsize=1024)
def read(text: str) -> Unit:
    """The unit an experiment wrote: symbols joined by '/' (each after the first divides) or '·'
    and '*' (multiply), with powers as '²' or '^2'; plurals of counted things folded;
    UnitTooLarge where a power passes MAX_POWER."""
    if not text.strip():
        return NONE
    powers: dict[str, int] = {}
    for i, group in enumerate(text.split("/")):
        for factor in re.split(r"[·*]", group):
            match = _POWER.fullmatch(factor.strip())
            if match is None:  # an empty factor ('a//b'): the whole text is one symbol of its own
                return Unit(((text.strip(), 1),), text)
            name, caret, sup = match.groups()
            if len(caret or sup or "") > 4:  # int() of thousands of digits is itself refused
                raise UnitTooLarge(f"the unit has a power of {len(caret or sup)} digits, past ±{MAX_POWER}")
            power = int(caret or (sup or "1").translate(_SUPERSCRIPT)) * (-1 if i else 1)
            symbol = _singular(name.strip())
            powers[symbol] = powers.get(symbol, 0) + power
    return Unit(tuple((s, p) for s, p in _bounded(powers).items() if p), text)  # 'B/B' has none, as written


def unit_problem(text: str) -> str | None:
    """Why text, a unit from outside (a measurement file), cannot be read; None where it can."""
    try:
        read(text)
    except UnitTooLarge as exc:
        return str(exc)
    return None


def base(unit: Unit) -> Unit:
    """The unit of the same dimensions in base units: bytes, seconds, FLOP, watts and counts
    (KiB/block as B/block; MHz as 1/s)."""
    return Unit(tuple(sorted(unit.dims, key=lambda dp: dp[1] < 0)))


def factor(source: Unit, target: Unit) -> Fraction | None:
    """What a value in source is multiplied by to be in target; None where their dimensions differ."""
    return source.scale / target.scale if source.dims == target.dims else None


def spoken(text: str, one: bool = False) -> str:
    """A unit as a reader reads it after a number: 'threads/SM' as 'threads per SM' (a count per
    counted thing; 'GB/s' and 'B/clock/SM' stay symbols), in the singular after one ('1 entry')."""
    above, *below = text.split("/")
    if below and all(_singular(part) in COUNTED for part in below):
        return " per ".join([_singular(above) if one else above, *below])
    return _singular(text) if one else text
