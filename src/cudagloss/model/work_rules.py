"""A worked example read before any value is looked up: each step's expression parsed, its given
number read, every name it uses found, and each field's form checked, with every mistake at
its place. What needs a node's values is cudagloss.model.workings'.

Names in a step's value: `step.<id>` is an earlier step, `fact.<id>` a reviewed value of the facts
file, anything else `experiment.result`. A given is a number the example chooses (threads per
block, bytes a block asks for); a number per SM, a rate or a count per clock describes a GPU, so
it is cited or listed as a fact, never given.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from cudagloss.errors import did_you_mean
from cudagloss.model import units
from cudagloss.model.claims import ClaimError, Expr, parse, references
from cudagloss.model.corpus import FactValue
from cudagloss.model.refs import Ref, read_ref
from cudagloss.model.units import COUNTED, Unit
from cudagloss.model.worked import STEP_ID, WorkedExample

STEP, FACT = "step", "fact"
"""The two names a worked example's values use besides experiments: no experiment may have them."""
_NUMBER = r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_UNIT = r"[A-Za-zµμ%×][A-Za-z0-9µμ%×/·*^⁰¹²³⁴⁵⁶⁷⁸⁹⁻_-]{0,39}"
_QUANTITY = re.compile(rf"(?P<number>{_NUMBER})(?:[ \t]+(?P<unit>{_UNIT}))?")
_WITHIN = re.compile(r"(?P<number>[0-9]{1,3}(?:\.[0-9]{1,6})?)[ \t]*%")
_TICKS = {"clock", "cycle"}
CITE = "cite the measured value in a value:, or list it under values: in terms/_facts.yml with the reason"


class WorkedError(Exception):
    """A mistake in a worked example: where (a field path within it, 'steps[2].value'), and an
    offset into that field's text where the mistake is in an expression."""

    def __init__(self, where: str, message: str, hint: str = "", offset: int | None = None) -> None:
        super().__init__(message)
        self.where, self.message, self.hint, self.offset = where, message, hint, offset


@dataclass(frozen=True)
class Quantity:
    """A number with its unit, as a step shows it."""

    value: float
    unit: Unit


def read_unit(text: str) -> Unit:
    """A unit an author wrote ('threads/block', 'TFLOP/s'); ValueError where it is not one."""
    if re.fullmatch(_UNIT, text) is None:
        raise ValueError(f"'{text[:40]}' is not a unit")
    return units.read(text)


def read_quantity(text: str) -> Quantity:
    """'12 KiB/block' or '2' as a number and its unit; ValueError where it is neither."""
    match = _QUANTITY.fullmatch(text.strip(" \t"))
    if match is None:
        raise ValueError(f"'{text[:60]}' is not a number and a unit")
    number = float(match.group("number"))
    if number and not 1e-300 <= number <= 1e300:
        raise ValueError(f"'{match.group('number')[:40]}' is out of range")
    return Quantity(number, units.read(match.group("unit") or ""))


def describes_a_gpu(unit: Unit) -> str:
    """Why a number in unit is a property of a GPU ('' where it is not): per SM, a rate, per clock."""
    dims = dict(unit.dims)
    if "SM" in dims:
        return "a number per SM"
    if dims.get("s", 0) < 0:
        return "a rate"
    if any(symbol in _TICKS for symbol, _ in unit.powers):
        return "a count per clock"
    return ""


@dataclass(frozen=True)
class Static:
    """What can be known of an example without values: per step, its parsed value (None for a
    given), its given number, the counted thing it is per, the unit to show it in, the measured
    result it matches and how closely; the facts by id; each measured value with where it is named."""

    example: WorkedExample
    trees: tuple[Expr | None, ...]
    givens: tuple[Quantity | None, ...]
    pers: tuple[Unit | None, ...]
    shown_in: tuple[Unit | None, ...]
    matches: tuple[Ref | None, ...]
    within: tuple[Fraction, ...]
    facts: dict[str, Quantity]
    measured: dict[Ref, str]
    errors: tuple[WorkedError, ...] = ()


def fact_values(facts: Sequence[FactValue]) -> dict[str, Quantity]:
    """Each fact's number by id (those that cannot be read are left out: the facts file's check reports them)."""
    out: dict[str, Quantity] = {}
    for fact in facts:
        try:
            out.setdefault(fact.id, read_quantity(fact.value))
        except ValueError:
            continue
    return out


class _Reader:
    """Reads one example's steps in order, collecting mistakes."""

    def __init__(self, example: WorkedExample, facts: dict[str, Quantity]) -> None:
        self.example, self.facts = example, facts
        self.errors: list[WorkedError] = []
        self.measured: dict[Ref, str] = {}
        self.ids = {s.id: i for i, s in reversed(list(enumerate(example.steps))) if s.id is not None}
        self.deps: list[set[Ref]] = []

    def fail(self, where: str, message: str, hint: str = "", offset: int | None = None) -> None:
        self.errors.append(WorkedError(where, message, hint, offset))

    def names(self, i: int, tree: Expr) -> set[Ref]:
        """Check each name in step i's value; the measured values it depends on, through earlier steps too."""
        where, deps = f"steps[{i}].value", set[Ref]()
        for ref in references(tree):
            kind, name = ref
            if kind == STEP and name not in self.ids:
                self.fail(where, f"no step 'step.{name}'{did_you_mean(name, self.ids)}", "give the step an id: first")
            elif kind == STEP and self.ids[name] >= i:
                later = "is this step" if self.ids[name] == i else f"comes later (steps[{self.ids[name]}])"
                self.fail(where, f"step.{name} {later}", "a step may use only the steps before it")
            elif kind == STEP:
                deps |= self.deps[self.ids[name]]
            elif kind == FACT and name not in self.facts:
                hint = "the values a worked example may name are listed under values: in terms/_facts.yml"
                self.fail(where, f"no fact 'fact.{name}'{did_you_mean(name, self.facts)}", hint)
            elif kind != FACT:
                deps.add(ref)
                self.measured.setdefault(ref, where)
        return deps

    def step(self, i: int) -> tuple[Expr | None, Quantity | None, Unit | None, Unit | None, Ref | None, Fraction]:
        step, at = self.example.steps[i], f"steps[{i}]"
        tree = given = per = shown = ref = None
        within, deps = Fraction(0), set[Ref]()
        if step.id is not None and not re.fullmatch(STEP_ID, step.id):
            self.fail(f"{at}.id", f"'{step.id[:40]}' is not a step id", "lower case, digits and '_', e.g. by_shared")
        elif step.id is not None and self.ids[step.id] != i:
            self.fail(f"{at}.id", f"'{step.id}' is also the id of steps[{self.ids[step.id]}]", "give each its own")
        if (step.value is None) == (step.given is None):
            what = "both value and given" if step.value is not None else "neither value nor given"
            self.fail(at, f"has {what}", "a step computes a value, or gives a number the example chooses")
        if step.given is not None:
            given = self._given(at, step.given)
            for name in ("unit", "per"):
                if getattr(step, name) is not None:
                    self.fail(f"{at}.{name}", f"a given carries its own unit: {name} belongs to a value", "remove it")
        if step.value is not None:
            try:
                tree = parse(step.value)
            except ClaimError as exc:
                self.fail(f"{at}.value", exc.message, exc.hint, exc.offset)
            else:
                deps = self.names(i, tree)
        if step.unit is not None:
            shown = self._unit(f"{at}.unit", step.unit)
        if step.per is not None:
            per = self._per(at, step.per, tree)
        if step.matches is not None:
            ref = self._matches(at, step.matches, deps)
        if step.within is not None:
            within = self._within(at, step.within, step.matches)
        self.deps.append(deps)
        return tree, given, per, shown, ref, within

    def _given(self, at: str, text: str) -> Quantity | None:
        try:
            given = read_quantity(text)
        except ValueError as exc:
            self.fail(f"{at}.given", str(exc), "write a number and its unit, e.g. 32 threads/block")
            return None
        if why := describes_a_gpu(given.unit):
            self.fail(f"{at}.given", f"'{text}' is {why}, which describes a GPU", CITE)
        return given

    def _unit(self, where: str, text: str) -> Unit | None:
        try:
            return read_unit(text)
        except ValueError as exc:
            self.fail(where, str(exc), "write a unit as results are written, e.g. TFLOP/s or blocks/SM")
            return None

    def _per(self, at: str, text: str, tree: Expr | None) -> Unit | None:
        unit = self._unit(f"{at}.per", text)
        if unit is not None and (len(unit.powers) != 1 or unit.powers[0][1] != 1 or unit.powers[0][0] not in COUNTED):
            self.fail(f"{at}.per", f"'{text}' is not a thing a GPU counts", "one of " + ", ".join(COUNTED))
            return None
        if tree is not None and (tree.kind != "ref" or tree.text.split(".")[0] in (STEP, FACT)):
            hint = "give per on a step whose value is one experiment.result"
            self.fail(f"{at}.per", "per reads one measured result's unit; this value is not one", hint)
        return unit

    def _matches(self, at: str, text: str, deps: set[Ref]) -> Ref | None:
        ref = read_ref(text)
        if ref is None or ref[0] in (STEP, FACT):
            self.fail(f"{at}.matches", f"'{text[:60]}' does not name a measured result", "write experiment.result")
            return None
        if ref in deps:
            hint = "check the working against a value it does not start from"
            self.fail(f"{at}.matches", f"the working uses {text} itself, so it would match whatever was measured", hint)
        self.measured.setdefault(ref, f"{at}.matches")
        return ref

    def _within(self, at: str, text: str, matches: str | None) -> Fraction:
        match = _WITHIN.fullmatch(text.strip())
        if matches is None:
            self.fail(f"{at}.within", "says how close to matches, but there is no matches", "add matches, or remove it")
        elif match is None or Fraction(match.group("number")) > 100:
            self.fail(f"{at}.within", f"'{text[:40]}' is not a share", "write a percentage from 0% to 100%, e.g. 3%")
        else:
            return Fraction(match.group("number")) / 100
        return Fraction(0)


def static(example: WorkedExample, facts: Sequence[FactValue]) -> Static:
    """example read without values: its steps parsed, its names found, every mistake in errors."""
    reader = _Reader(example, fact_values(facts))
    read = [reader.step(i) for i in range(len(example.steps))]
    if not example.steps:
        reader.fail("steps", "has no steps", "write the calculation one step a line")
    elif not reader.measured and not reader.errors:
        reader.fail("steps", "uses no measured value", "a worked example works from what a GPU measured")
    columns = list(zip(*read, strict=True)) if read else [()] * 6
    return Static(
        example,
        tuple(columns[0]),
        tuple(columns[1]),
        tuple(columns[2]),
        tuple(columns[3]),
        tuple(columns[4]),
        tuple(columns[5]),
        reader.facts,
        reader.measured,
        tuple(reader.errors),
    )
