"""Whether a claim could fail at all: a condition that holds whatever is measured tests nothing.

`x == x`, `x * 0 == 0`, `not differ(x, x)`, `x > 0 or x <= 0` hold on every node, and a page
would publish them as checked facts. The rule, stated: the condition is evaluated again on one
node's values changed, one value at a time and all of them together, each number scaled by each
of FACTORS, shifted up and down, and replaced by each of EXTREMES (its raw samples with it, so
that differ() sees the change),
each truth value flipped and each text changed, then on MIXES seeded random mixes of those
changes; a claim that none of them makes false cannot fail, and is an author error. The same
claim always gets the same answer (the mixes are seeded). A change that makes the condition
ill-typed (a division by zero) is skipped.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from cudagloss.model.claim_values import evaluate
from cudagloss.model.claims import ClaimTypeError, Expr, Operand, references
from cudagloss.model.measurements import MeasurementSet, by_node
from cudagloss.model.refs import Ref

FACTORS = (-1.0, 0.001, 0.5, 2.0, 1000.0)
SHIFTS = (1.0, -1.0)
EXTREMES = (0.0, 1e12, -1e12, 1e-12)
"""Values put in place of a number outright: a bound far from the measured value is tested too."""
MIXES = 64
Change = Callable[[float], float]


def _scale(factor: float) -> Change:
    return lambda v: v * factor


def _shift(sign: float) -> Change:
    return lambda v: v + sign * max(1.0, abs(v))


def _set(value: float) -> Change:
    return lambda v: value


def _changes() -> list[Change]:
    return [*map(_scale, FACTORS), *map(_shift, SHIFTS), *map(_set, EXTREMES)]


def _changed(value: Operand, change: Change) -> Operand:
    if isinstance(value.value, bool):
        return Operand(not value.value, value.unit, value.samples)
    if isinstance(value.value, str):
        return Operand(value.value + " (changed)", value.unit, value.samples)
    return Operand(change(float(value.value)), value.unit, tuple(change(float(s)) for s in value.samples))


def can_fail(tree: Expr, values: dict[Ref, Operand]) -> bool:
    """Whether some change of values (the rule above) makes the condition false."""
    refs = sorted(values)
    changes = _changes()
    plans: list[dict[Ref, Change]] = [{ref: c} for ref in refs for c in changes]
    plans += [dict.fromkeys(refs, c) for c in changes]
    rng = random.Random(0)
    plans += [{ref: rng.choice(changes) for ref in refs} for _ in range(MIXES)]
    for plan in plans:

        def lookup(experiment: str, name: str, plan: dict[Ref, Change] = plan) -> Operand:
            value = values[(experiment, name)]
            change = plan.get((experiment, name))
            return value if change is None else _changed(value, change)

        try:
            if not evaluate(tree, lookup):
                return True
        except (ClaimTypeError, OverflowError, ValueError):
            continue
    return False


def cannot_fail(tree: Expr, measurements: MeasurementSet | None) -> bool:
    """True for a condition that holds on a node whatever its values were (judged on the first
    node that measured every value; False where none did: nothing to say yet)."""
    nodes = by_node(measurements, references(tree))
    for node in nodes:
        values = {ref: Operand(r.value, r.unit, r.samples) for ref, r in node.values.items() if r.value is not None}
        if len(values) == len(node.values):
            return not can_fail(tree, values)
    return False
