"""A chart axis: its scale (linear, or logarithmic where the data spans a decade or more), its
range and its ticks, computed from the values it must show and nothing else.

Pure arithmetic on floats, bounded whatever the values: at most MAX_TICKS ticks however many
decades the data spans, a range of one value widened so it has a middle, and no value that
cannot be placed (zero or below on a log axis is never asked: such an axis is linear).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from cudagloss.model.display import readable_size

MAX_TICKS = 7
LOG_SPAN = 10.0
"""An axis whose values are all above zero and whose largest is at least this many times its
smallest is logarithmic: a latency curve over footprints of 8 KiB to 1 GiB, strides 1 to 128."""
LIMIT = 1e300
"""Values past it are not placed (the loader refuses measurements past 2^53 anyway): any two
that are left differ by a finite amount."""
TINY = 1 / LIMIT
"""Values nearer zero than it (subnormal ones, 5e-324) are placed at zero: a range or a tick step
between two of them would underflow to zero and leave nothing to divide or take the log of."""
PAD = 1.15
"""A log axis reaches this factor past its smallest and largest value, so no mark sits on its edge."""


@dataclass(frozen=True)
class Axis:
    low: float
    high: float
    log: bool
    ticks: tuple[float, ...]
    labels: tuple[str, ...]

    def fraction(self, value: float) -> float:
        """Where value lies along the axis, 0 at low and 1 at high."""
        if self.log:
            low, high, value = math.log2(self.low), math.log2(self.high), math.log2(value)
        else:
            low, high = self.low, self.high
        return (value - low) / (high - low)

    def shows(self, value: float) -> bool:
        return math.isfinite(value) and (value > 0 or not self.log) and self.low <= value <= self.high


def categories(labels: list[str]) -> Axis:
    """An axis of named categories, one tick in the middle of each: bars, not a scale."""
    return Axis(-0.5, len(labels) - 0.5, False, tuple(float(i) for i in range(len(labels))), tuple(labels))


def number(value: float) -> str:
    """A tick's number: '8,000', '250', '0.5', '1e-05'; at most three significant digits."""
    if value == 0:
        return "0"
    if abs(value) >= 1e6 or abs(value) < 1e-3:
        return f"{value:.2g}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{float(f'{value:.3g}'):g}"


def size(value: float) -> str:
    shown, unit = readable_size(value, "bytes", bytes_=True)
    return f"{shown:,.0f} {unit}" if float(shown).is_integer() else f"{shown:,.1f} {unit}"


def make_axis(
    values: Iterable[float], *, binary: bool, zero: bool, label: Callable[[float], str] = number, log: bool = True
) -> Axis:
    """The axis for values (those not finite or past LIMIT left out, those under TINY at zero): binary
    log ticks at powers of two (sweeps that double), decimal ones at powers of ten;
    zero: a linear axis starts at 0; log=False: linear whatever the span (bars start at zero)."""
    found = sorted(0.0 if abs(v) < TINY else v for v in values if math.isfinite(v) and abs(v) <= LIMIT) or [0.0, 1.0]
    low, high = found[0], found[-1]
    if log and low > 0 and high >= low * LOG_SPAN:
        low, high = low / PAD, high * PAD
        ticks = _log_ticks(low, high, 2.0 if binary else 10.0)
        return Axis(low, high, True, ticks, tuple(label(t) for t in ticks))
    if zero and low >= 0:
        low = 0.0
    elif zero and high <= 0:
        high = 0.0
    if low == high:
        low, high = (low - 1, high + 1) if low == 0 else sorted((0.0, 2 * low))
    step = _nice_step((high - low) / (MAX_TICKS - 2))
    low, high = math.floor(low / step) * step, math.ceil(high / step) * step
    count = round((high - low) / step)
    ticks = tuple(low + i * step for i in range(count + 1))
    return Axis(low, high, False, ticks, tuple(label(t) for t in ticks))


def _nice_step(raw: float) -> float:
    """The 1, 2 or 5 times a power of ten at or above raw."""
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw * (1 - 1e-9))


def _log_ticks(low: float, high: float, base: float) -> tuple[float, ...]:
    """Powers of base inside [low, high], every k-th one so that there are at most MAX_TICKS;
    in base ten with under two decades, the 2s and 5s between them too."""
    first, last = math.ceil(math.log(low, base) - 1e-9), math.floor(math.log(high, base) + 1e-9)
    span = last - first + 1
    step = max(1, math.ceil(span / MAX_TICKS))
    ticks = [base**e for e in range(first, last + 1, step)]
    if base == 10 and span <= 2:
        ticks = sorted(t * m for t in [ticks[0] / 10, *ticks] for m in (1, 2, 5) if low <= t * m <= high)
    return tuple(ticks)
