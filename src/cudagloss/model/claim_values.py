"""A condition of the claims language (cudagloss.model.claims) evaluated on one node's values.

Types and ranges (no inf, nan or underflow to 0) are checked on real values, every part evaluated,
so that a mistake shows on the first node rather than on the one whose values take another branch.
Units follow cudagloss.model.units: products multiply them, sums and comparisons need one
dimension and convert exactly; a number written in the claim takes the unit of what it meets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from operator import add, eq, ge, gt, le, lt, mul, ne, sub, truediv

from cudagloss.model import units
from cudagloss.model.claims import CONDITION, RANGE, ROUNDING, ClaimTypeError, Expr, Lookup, show, written
from cudagloss.model.compare import compare_timings
from cudagloss.model.units import Unit

_COMPARE = {"<": lt, "<=": le, ">": gt, ">=": ge, "==": eq, "!=": ne}
_ARITH = {"+": add, "-": sub, "*": mul, "/": truediv}
_VERBS = {"+": "added to", "-": "minus"}


@dataclass(frozen=True)
class _Value:
    """A part's value; unit None for a number written in the claim (or made of such numbers only)."""

    value: float | int | str | bool
    unit: Unit | None = None
    samples: Sequence[float] = ()


def _format(value: _Value) -> str:
    return written(value.value, str(value.unit or ""))


def _kind(value: object) -> str:
    return "a truth value" if isinstance(value, bool) else "text" if isinstance(value, str) else "a number"


def _named(unit: Unit) -> str:
    return str(unit) or "no unit"


def _scaled(x: float, by: Fraction, at: int, what: str) -> float:
    """x times an exact unit ratio, rounded once; ClaimTypeError where it leaves a double's range."""
    if by == 1:
        return x
    try:
        return float(Fraction(x) * by)
    except OverflowError:
        raise ClaimTypeError(f"{what} is out of range in another unit", at, RANGE) from None


def _common(pairs: Sequence[tuple[Expr, _Value]], verb: str, at: int) -> tuple[Unit | None, list[Fraction]]:
    """The first unit among the values that have one, and what each value is multiplied by to be
    in it; ClaimTypeError where two have different dimensions."""
    first = next(((node, value.unit) for node, value in pairs if value.unit is not None), None)
    if first is None:
        return None, [Fraction(1)] * len(pairs)
    factors = []
    for node, value in pairs:
        by = Fraction(1) if value.unit is None else units.factor(value.unit, first[1])
        if by is None:
            message = f"{show(first[0])} ({_named(first[1])}) {verb} {show(node)} ({_named(value.unit or units.NONE)})"
            raise ClaimTypeError(message, at, "use one kind of unit; a plain number fits any")
        factors.append(by)
    return first[1], factors


def _check(value: _Value, node: Expr, op: str, at: int, want: type[float] | type[bool]) -> float:
    """value as a number (want float) or a truth value (want bool); ClaimTypeError when it is not."""
    if isinstance(value.value, str) or isinstance(value.value, bool) != (want is bool):
        needs = "conditions" if want is bool else "numbers"
        raise ClaimTypeError(f"'{op}' needs {needs}, but {show(node)} is {_kind(value.value)}", at)
    return want(value.value)


def _product(a: _Value, b: _Value, op: str, r: float, at: int, what: str) -> _Value:
    """r, the value of a * b or a / b, in their units' product; units of one dimensionless kind
    that cancel (ms / µs) leave a plain ratio, their scale folded into the number."""
    if a.unit is None and b.unit is None:
        return _Value(r)
    try:
        unit = (a.unit or units.NONE).times(b.unit or units.NONE, 1 if op == "*" else -1)
    except units.UnitTooLarge as exc:
        raise ClaimTypeError(f"{what}: {exc}", at, "a claim needs no unit past a square or a cube") from None
    if unit.dims or unit.scale == 1:
        return _Value(r, unit)
    return _Value(_scaled(r, unit.scale, at, what), units.NONE)


def _rounded(node: Expr, pair: tuple[Expr, _Value]) -> _Value:
    """floor() or ceil() of a number, in base units (bytes, seconds, counts): floor(x / y) of
    bytes per SM over KiB per block is a whole number of blocks per SM, whatever the prefixes."""
    part, value = pair
    x = _check(value, part, f"{node.text}()", part.offset, float)
    unit = value.unit
    if unit is not None and (unit.scale != 1 or unit.powers != unit.dims):
        x, unit = _scaled(x, unit.scale, node.offset, show(part)), units.base(unit)
    return _Value(float(math.floor(x) if node.text == "floor" else math.ceil(x)), unit)


def _value(node: Expr, lookup: Lookup) -> _Value:
    """The value of node, its types and units checked."""
    kind, parts = node.kind, node.parts
    if kind == "value":
        return _Value(node.value)
    if kind == "ref":
        found = lookup(*node.text.split("."))
        read = found.unit if isinstance(found.unit, Unit) else units.read(found.unit)
        return _Value(found.value, read, found.samples)
    pairs = [(part, _value(part, lookup)) for part in parts]
    if kind in ("not", "and", "or"):
        truths = [_check(value, part, kind, part.offset, bool) for part, value in pairs]
        return _Value(not truths[0] if kind == "not" else all(truths) if kind == "and" else any(truths))
    if node.text == "differ":
        for part in (part for part, value in pairs if not value.samples):
            raise ClaimTypeError(f"differ() needs results with raw samples: {part.text} has none", part.offset)
        _, (_, by) = _common(pairs, "compared with", node.offset)
        second = [_scaled(s, by, node.offset, show(parts[1])) for s in pairs[1][1].samples]
        return _Value(compare_timings(pairs[0][1].samples, second).verdict != "SAME")
    if node.text in ROUNDING:
        return _rounded(node, pairs[0])
    if kind in ("-", "call"):
        op = "-" if kind == "-" else f"{node.text}()"
        numbers = [_check(value, part, op, part.offset, float) for part, value in pairs]
        unit, factors = _common(pairs, f"in {op} with", node.offset)
        numbers = [
            _scaled(x, by, node.offset, show(part)) for x, by, (part, _) in zip(numbers, factors, pairs, strict=True)
        ]
        return _Value(-numbers[0] if kind == "-" else max(numbers) if node.text == "max" else min(numbers), unit)
    (left, a) = pairs[0]
    for i, ((op, at), (right, b)) in enumerate(zip(node.ops, pairs[1:], strict=True), 1):
        left = left if i == 1 else Expr(kind, node.offset, parts=parts[:i], ops=node.ops[: i - 1])
        kinds = (_kind(a.value), _kind(b.value))
        if op in ("==", "!=") and kinds[0] != kinds[1]:
            message = f"{show(left)} ({kinds[0]}) compared with {show(right)} ({kinds[1]})"
            raise ClaimTypeError(message, at, "compare text with text and numbers with numbers")
        if op in ("==", "!=") and kinds[0] != "a number":
            return _Value(_COMPARE[op](a.value, b.value))
        x, y = _check(a, left, op, at, float), _check(b, right, op, at, float)
        if op == "/" and y == 0:
            raise ClaimTypeError(f"division by zero: {show(right)} is 0", at)
        if op in ("*", "/"):
            r = _ARITH[op](x, y)
            a = _product(a, b, op, r, at, f"{show(left)} {op} {show(right)}")
        else:
            unit, (_, by) = _common(((left, a), (right, b)), _VERBS.get(op, "compared with"), at)
            y = _scaled(y, by, at, show(right))
            r = _COMPARE[op](x, y) if op in _COMPARE else _ARITH[op](x, y)
            a = _Value(r, None if op in _COMPARE else unit)
        if not abs(r) < float("inf") or (not r and op in "*/" and x and y):  # overflowed, or underflowed to 0
            raise ClaimTypeError(f"{show(left)} {op} {show(right)} is out of range ({r:g})", at, RANGE)
    return a


def evaluate(tree: Expr, lookup: Lookup) -> bool:
    """Whether the condition holds on the values lookup gives; ClaimTypeError where they do not fit."""
    if not isinstance(value := _value(tree, lookup).value, bool):
        raise ClaimTypeError(CONDITION, tree.offset, f"{show(tree)} is {_kind(value)}")
    return value


def quantity(tree: Expr, lookup: Lookup) -> tuple[float, Unit | None]:
    """The number a worked example's step computes, and its unit (None where it is made of numbers
    written in it alone); ClaimTypeError where its values do not fit, or it is not a number."""
    value = _value(tree, lookup)
    if isinstance(value.value, bool | str):
        raise ClaimTypeError("a step computes a number", tree.offset, f"{show(tree)} is {_kind(value.value)}")
    if not abs(float(value.value)) < float("inf"):
        raise ClaimTypeError(f"{show(tree)} is not a finite number", tree.offset, RANGE)
    return float(value.value), value.unit


def explain(tree: Expr, lookup: Lookup) -> str:
    """The condition with its values, to say why it fails: 'a.x = 148 ms > max(20.6 ms, 17.8 ms) = 20.6 ms'."""

    def value(node: Expr) -> str:
        return _format(_value(node, lookup))

    def part(node: Expr) -> str:  # a part of and/or/not: a comparison or a chain says whether it holds
        text = explain(node, lookup)
        return text if node.kind in ("ref", "value", "call", "not") else f"({text}) is {value(node)}"

    if tree.kind == "cmp":  # each side, then its value
        sides = [(side, side.text if side.kind == "ref" else show(side, value)) for side in tree.parts]
        return f" {tree.ops[0][0]} ".join(text if p.kind == "value" else f"{text} = {value(p)}" for p, text in sides)
    if tree.kind in ("and", "or", "not"):
        parts = [f"({part(p)})" if tree.kind == "not" and p.kind in ("ref", "call") else part(p) for p in tree.parts]
        return f"not {parts[0]}" if tree.kind == "not" else f" {tree.kind} ".join(parts)
    text = show(tree, lambda ref: f"{ref.text} = {value(ref)}")
    return text if tree.kind in ("ref", "value") else f"{text} = {value(tree)}"
