"""A worked example (cudagloss.model.worked) computed on every node: each step's number and unit
from the node's measured values, the reviewed facts and the example's given numbers, and each
step that `matches` a measured result compared with what that node measured.

Steps are read by cudagloss.model.work_rules (parsed by the claims grammar, never run as code)
and evaluated by the claims' unit algebra (cudagloss.model.claim_values), node by node: values
from two GPUs are never mixed. A step that cannot be worked out on a node leaves the steps that
use it unworked there; each mistake is told once, with the nodes it happened on where not all.
The check stage reports what this finds; the page shows the working (cudagloss.site.worked).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from cudagloss.model import units
from cudagloss.model.claim_values import quantity
from cudagloss.model.claims import ClaimTypeError, Expr, Operand, references
from cudagloss.model.corpus import FactValue
from cudagloss.model.display import format_value
from cudagloss.model.measurement import Result
from cudagloss.model.measurements import CitationError, MeasurementSet, NodeValues, by_node, resolve
from cudagloss.model.refs import Ref
from cudagloss.model.term import Term
from cudagloss.model.units import NONE, SYMBOLS, Unit
from cudagloss.model.work_rules import CITE, FACT, STEP, Quantity, Static, WorkedError, describes_a_gpu, static

EXACT = Fraction(1, 10**9)
"""How far apart two numbers called equal may be, as a share of the larger: a double's rounding."""
Fail = Callable[[str, str, str, "int | None"], None]


@dataclass(frozen=True)
class NodeWork:
    """The example worked out on one node: each step's number (None where it could not be)."""

    node: str
    gpu: str
    steps: tuple[Quantity | None, ...]
    measured: dict[Ref, Result]
    stale: bool = False
    sources: dict[Ref, str] = field(default_factory=dict)
    """The card (node name) that measured each value, where several cards stand in for one."""

    def source(self, ref: Ref) -> str:
        return self.sources.get(ref, self.node)


@dataclass(frozen=True)
class Mismatch:
    """A step whose number is not the measured result it claims to match, on one node."""

    step: int
    node: str
    gpu: str
    computed: Quantity
    ref: Ref
    measured: Result
    within: Fraction


@dataclass(frozen=True)
class Working:
    """A worked example as computed: its steps as read, each node's working, every mistake and
    every step that disagrees with its measurement; unverified says why no node worked it out."""

    static: Static
    nodes: tuple[NodeWork, ...] = ()
    errors: tuple[WorkedError, ...] = ()
    mismatches: tuple[Mismatch, ...] = ()
    unverified: str = ""
    unmeasured: tuple[str, ...] = ()


def shown(q: Quantity) -> str:
    """A step's number as a reader reads it: '17 blocks per SM', '12 KiB per block', '66.9 TFLOP/s'."""
    return format_value(Result("", q.value, str(q.unit)))


def gap(computed: Quantity, measured: Result) -> float:
    """How far the measured value is from the computed one, as a share of the computed one."""
    c = float(Fraction(computed.value) * (units.factor(computed.unit, units.read(measured.unit)) or 1))
    m = float(measured.value)  # type: ignore[arg-type]
    return 0.0 if c == m else (m - c) / c if c else float("inf")


def work(term: Term, index: int, measurements: MeasurementSet | None, facts: Sequence[FactValue] = ()) -> Working:
    """term.worked[index] on every node that measured all of its values."""
    s = static(term.worked[index], facts)
    if s.errors:
        return Working(s, errors=s.errors)
    unmeasured, errors = [], []
    for ref, where in s.measured.items():
        try:
            resolve(term, measurements, *ref, ".".join(ref))
        except CitationError as exc:
            record = measurements.get(ref[0]) if measurements else None
            if not any(c.experiment == ref[0] for c in term.measurements) or (record is not None and record.measured):
                errors.append(WorkedError(where, exc.message, exc.hint))
            unmeasured.append(ref)
    if errors:
        return Working(s, errors=tuple(errors))
    refs = list(s.measured)
    nodes = [] if unmeasured else by_node(measurements, refs)
    if not nodes:
        missing = unmeasured or refs
        reason = "no card has measured " + ", ".join(".".join(r) for r in unmeasured) if unmeasured else ""
        return Working(
            s,
            unverified=reason or "no card has measured all of its values",
            unmeasured=tuple(dict.fromkeys(e for e, _ in missing)),
        )
    found: dict[tuple[str, str, str, int | None], list[str]] = {}
    worked: list[NodeWork] = []
    mismatches: list[Mismatch] = []
    for n in nodes:

        def fail(where: str, message: str, hint: str, at: int | None, node: str = n.node) -> None:
            found.setdefault((where, message, hint, at), []).append(node)

        steps = _steps(s, n, fail)
        worked.append(NodeWork(n.node, n.gpu, steps, dict(n.values), n.stale, dict(n.sources)))
        mismatches += [m for i, q in enumerate(steps) if q is not None if (m := _compare(s, i, q, n, fail))]
    errors = [
        WorkedError(where, message + ("" if len(on) == len(nodes) else f" (on node '{', '.join(on)}')"), hint, at)
        for (where, message, hint, at), on in sorted(found.items(), key=lambda item: _order(item[0][0]))
    ]
    return Working(s, tuple(worked), tuple(errors), tuple(mismatches))


def _order(where: str) -> tuple[int, str]:
    """Mistakes in the order of the steps they are in ('steps[10].unit' after 'steps[9].value')."""
    number = where.partition("[")[2].partition("]")[0]
    return (int(number) if number.isdigit() else -1, where)


def _steps(s: Static, n: NodeValues, fail: Fail) -> tuple[Quantity | None, ...]:
    """Each step's number on node n, in order; a step that uses one that failed is not worked."""
    done: dict[str, Quantity] = {}
    out: list[Quantity | None] = []

    def lookup(experiment: str, name: str) -> Operand:
        if experiment in (STEP, FACT):
            q = done[name] if experiment == STEP else s.facts[name]
            return Operand(q.value, q.unit)
        result = n.values[(experiment, name)]
        return Operand(result.value, result.unit, result.samples)  # type: ignore[arg-type]

    for i, (step, tree, given) in enumerate(zip(s.example.steps, s.trees, s.givens, strict=True)):
        q = given
        if tree is not None and all(name in done for kind, name in references(tree) if kind == STEP):
            q = _value(s, i, tree, lookup, fail)
        if q is not None and step.id is not None:
            done[step.id] = q
        out.append(q)
    return tuple(out)


def _value(s: Static, i: int, tree: Expr, lookup: Callable[[str, str], Operand], fail: Fail) -> Quantity | None:
    """Step i's value: computed, read per a counted thing, and in the unit it is shown in."""
    where = f"steps[{i}]"
    try:
        x, computed = quantity(tree, lookup)
    except ClaimTypeError as exc:
        fail(f"{where}.value", exc.message, exc.hint, exc.offset)
        return None
    unit = computed or NONE
    if (per := s.pers[i]) is not None:
        if dict(unit.dims).get(per.powers[0][0]):
            fail(f"{where}.per", f"the value is already counted in {per}: {unit}", "remove per", None)
            return None
        try:
            unit = unit.times(per, -1)
        except units.UnitTooLarge as exc:
            fail(f"{where}.per", str(exc), "a step needs no unit past a square or a cube", None)
            return None
    target = s.shown_in[i]
    if target is None:
        if _reads_badly(unit):
            hint = "add unit: with the unit a reader expects, e.g. unit: TFLOP/s"
            fail(f"{where}.value", f"its unit works out as {unit}, which a reader cannot read", hint, None)
        return Quantity(x, unit)
    if computed is None and (why := describes_a_gpu(target)):  # numbers alone, given a unit: a given
        message = f"a number written in the step, in {target}, is {why}, which describes a GPU"
        fail(f"{where}.unit", message, CITE, None)
        return None
    by = Fraction(1) if computed is None else units.factor(unit, target)
    if by is None:
        message = f"the value works out in {unit or 'no unit'}, which is not {target}: their dimensions differ"
        fail(f"{where}.unit", message, "show it in a unit of the same kind, or correct the working", None)
        return None
    try:
        return Quantity(float(Fraction(x) * by), target)
    except OverflowError:
        fail(f"{where}.unit", f"the value is out of range in {target}", "show it in a larger unit", None)
        return None


def _reads_badly(unit: Unit) -> bool:
    """A unit the algebra made that a reader cannot read at a glance: two symbols of one dimension
    ('GB·ns/s'), a tick or ratio among other symbols ('FLOP·MHz/clock'), or a product ('W·s')."""
    if unit.written or not unit.powers:
        return False
    seen: set[str] = set()
    for symbol, _ in unit.powers:
        dims = set(SYMBOLS.get(symbol, ({symbol: 1}, Fraction(1)))[0])
        if (not dims and len(unit.powers) > 1) or dims & seen:
            return True
        seen |= dims
    return "·" in str(unit)


def _compare(s: Static, i: int, q: Quantity, n: NodeValues, fail: Fail) -> Mismatch | None:
    """The step's number against the measured result it matches, on node n."""
    ref = s.matches[i]
    if ref is None:
        return None
    where, result, name = f"steps[{i}].matches", n.values[ref], ".".join(ref)
    if isinstance(result.value, bool) or not isinstance(result.value, int | float):
        fail(where, f"{name} is not a number: {format_value(result)}", "match a result that is a number", None)
        return None
    by = units.factor(q.unit, units.read(result.unit))
    if by is None:
        message = f"the step works out in {q.unit or 'no unit'}, but {name} is in {result.unit or 'no unit'}"
        fail(where, message + ": their dimensions differ", "match a result of the same kind", None)
        return None
    try:
        c = float(Fraction(q.value) * by)
    except OverflowError:
        fail(where, f"the step's number is out of range in {result.unit}", "check the working", None)
        return None
    m = float(result.value)
    allowed = float(s.within[i]) * abs(m) + float(EXACT) * max(abs(c), abs(m))
    return None if abs(c - m) <= allowed else Mismatch(i, n.node, n.gpu, q, ref, result, s.within[i])
