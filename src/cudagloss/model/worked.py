"""A worked example in a term file: a calculation written out step by step from measured values,
reviewed facts and numbers the example chooses, placed in the body with `{{ worked("id") }}`.

Only the fields live here (the term model imports them, and the JSON Schema is generated from
them); cudagloss.model.workings computes the steps on every node and compares them with what
was measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cudagloss.model.limits import ITEMS_MAX, LINE_MAX, NAME_MAX, NOTE_MAX, REF_MAX, doc

STEP_ID = r"^[a-z][a-z0-9_]*$"
"""A step's id: what later steps write after `step.`, so a result name's form."""


@dataclass(frozen=True)
class Step:
    """One line of a worked example: the author's words, and the number they stand for."""

    says: str = field(
        metadata=doc(
            "What the step does, in words, e.g. 'Shared memory allows, rounded down'. Shown before its "
            "values; numbers about a GPU are never typed here.",
            max_length=LINE_MAX,
        )
    )
    id: str | None = field(
        default=None,
        metadata=doc(
            "Optional name by which later steps use this one's number, as step.<id>.",
            pattern=STEP_ID,
            max_length=NAME_MAX,
        ),
    )
    value: str | None = field(
        default=None,
        metadata=doc(
            "What the step computes, in the claims language: measured values as experiment.result, "
            "reviewed facts as fact.<id> (terms/_facts.yml), earlier steps as step.<id>; numbers, "
            "+ - * /, max(...), min(...), floor(...) and ceil(...). Units are worked out.",
            max_length=NOTE_MAX,
        ),
    )
    given: str | None = field(
        default=None,
        metadata=doc(
            "Instead of value: a number this example chooses, with its unit, e.g. '32 threads/block' or "
            "'12 KiB/block' (a launch configuration, a problem size; never a property of a GPU).",
            max_length=NAME_MAX,
        ),
    )
    unit: str | None = field(
        default=None,
        metadata=doc(
            "Optional: the unit to show the value in, e.g. 'TFLOP/s'; it must have the value's dimensions.",
            max_length=NAME_MAX,
        ),
    )
    per: str | None = field(
        default=None,
        metadata=doc(
            "Optional, for a value that is one measured result: the counted thing the experiment measured "
            "it for but left out of its unit, e.g. 'SM' for shared memory recorded in bytes.",
            max_length=NAME_MAX,
        ),
    )
    matches: str | None = field(
        default=None,
        metadata=doc(
            "Optional: a measured result (experiment.result) this step's number must equal on every node "
            "that measured it; a disagreement stops the build.",
            max_length=REF_MAX,
        ),
    )
    within: str | None = field(
        default=None,
        metadata=doc(
            "Optional, with matches: how far apart the two may be, as a share of the measured value, "
            "e.g. '3%'. Without it they must be equal.",
            max_length=NAME_MAX,
        ),
    )


@dataclass(frozen=True)
class WorkedExample:
    """A calculation from measured values, written out step by step on the page where the body
    places it, computed on every node and checked against what the nodes measured."""

    id: str = field(
        metadata=doc(
            "The name the body places it by: {{ worked('blocks-per-sm') }}.",
            pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$",
            max_length=NAME_MAX,
        )
    )
    title: str = field(metadata=doc("What it works out, e.g. 'How many blocks fit on one SM?'.", max_length=LINE_MAX))
    steps: list[Step] = field(metadata=doc("The steps in order; each may use those before it.", max_items=ITEMS_MAX))
