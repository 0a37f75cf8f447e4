"""Keep what an experiment's run() hands its summarise(): the raw samples a summary can be
derived from again on the CPU (make rederive, verifier/rederive.py).

The runner, not the experiment, does the keeping: while run() runs, the module's `summarise`
name is bound to a recorder that writes the call's arguments down (model.raw) and then calls
the real function. The experiments are untouched, so no recipe or summary key moves
(verifier/recipe.py reads their code), and an experiment that never calls summarise() simply
keeps no raw samples.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from cudagloss.model.measurement import Measurement, MeasurementError, readable
from cudagloss.model.raw import RawError, call
from verifier.contract import GATE as COMPILED_GATE

RUNNER_GATES = ("the user's own JIT cache was not touched", COMPILED_GATE)
"""Gates the runner adds after summarise(): a summary derived again keeps them as they were."""


@dataclass
class Kept:
    """What one run handed summarise(): the file's `raw` field, or why there is none."""

    raw: dict[str, Any] | None = None
    calls: int = 0
    problem: str = ""


@contextmanager
def keeping(module: ModuleType) -> Iterator[Kept]:
    """Record the summarise() call made while the block runs (one call: a second leaves no raw
    samples, as no one file could re-derive both)."""
    kept = Kept()
    original: Callable[..., Any] | None = getattr(module, "summarise", None)
    if original is None:
        kept.problem = "the experiment has no summarise()"
        yield kept
        return

    def recorder(*args: Any, **kwargs: Any) -> Any:
        kept.calls += 1
        try:  # written down before the call: nothing summarise does to its arguments leaks in
            kept.raw = call(args, kwargs) if kept.calls == 1 else None
        except RawError as exc:
            kept.raw, kept.problem = None, f"its raw samples cannot be kept: {exc}"
        if kept.calls == 2:
            kept.problem = "run() called summarise() more than once"
        return original(*args, **kwargs)

    module.summarise = recorder  # type: ignore[attr-defined]
    try:
        yield kept
    finally:
        module.summarise = original  # type: ignore[attr-defined]


def fitting(m: Measurement, say: Callable[[str], object]) -> Measurement:
    """m, or m without its raw samples where with them the file would be refused (too large,
    too many values): a run's results are never lost for the samples kept beside them."""
    if m.raw is None:
        return m
    try:
        readable(m.to_json(), f"{m.experiment}/{m.node}.json")
    except MeasurementError as exc:
        say(f"    no raw samples kept: with them the file would be refused ({exc.diagnostics[0].message:.200})")
        return dataclasses.replace(m, raw=None)
    return m
