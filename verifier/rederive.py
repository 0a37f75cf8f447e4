"""Derive committed results again from their raw samples, on the CPU: `make rederive`.

A measurement goes stale by its recipe (what reached the GPU and how it was timed) or by its
summary (the pure code that turned raw samples into results; verifier/recipe.py). When only
the summary changed and the file kept the raw samples its run handed summarise()
(verifier/rawcall.py), no GPU is needed: this calls the summary as it is now on those samples
and rewrites the file's gates, results and summary key, reporting each result as a re-run
does (SAME, CHANGED, NEW, GONE). Provenance stays the run's own: the samples were measured
then, on that card.

A node's latest run and its earlier runs are rewritten together, or none of them: a new gate
that fails, a summary that raises, or a write that fails leaves every file as it was. An
earlier run that kept no raw samples cannot follow, and is dropped as a GPU re-run with a new
summary drops it (git keeps it); the report names it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from cudagloss.boundary import guarded
from cudagloss.errors import ExitCode, GlossaryError, UsageError, complain
from cudagloss.files.atomic import write_text_atomic
from cudagloss.files.inside import first_link
from cudagloss.load.measurements import load_measurements
from cudagloss.merge.guard import Undo
from cudagloss.model.measurement import Gate, Measurement, MeasurementError, Result, readable
from cudagloss.model.raw import RawError, arguments
from verifier.experiment import ROOT
from verifier.rawcall import RUNNER_GATES
from verifier.registry import EXPERIMENTS, catalog


@dataclass
class Derived:
    """One file derived again: its new text, and each result's verdict."""

    path: Path
    text: str
    lines: list[str] = field(default_factory=list)


SUMMARY_SECONDS = 60
"""How long one file's summary may take: a committed file arrives in a pull request, and raw
samples that make a summary loop for ever must cost a line, not the run (the longest takes
well under a second)."""


class OutOfTime(Exception):
    """A summary that ran past SUMMARY_SECONDS."""


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Raise OutOfTime in the block after seconds (the main thread only: elsewhere, no limit)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise OutOfTime(f"it ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Refused(Exception):
    """Why a node's files cannot be derived again (each left as it was)."""


def verdicts(old: list[Result], new: list[Result]) -> list[str]:
    """Each result as a re-run reports it: SAME, CHANGED (old -> new), NEW, GONE."""
    before = {r.name: r for r in old}
    lines = []
    for r in new:
        was = before.pop(r.name, None)
        if was is None:
            lines.append(f"NEW      {r.name} {r.value!s:.60} {r.unit}".rstrip())
        elif (was.value, was.unit) == (r.value, r.unit):
            lines.append(f"SAME     {r.name}")
        else:
            lines.append(f"CHANGED  {r.name} {was.value!s:.60} {was.unit} -> {r.value!s:.60} {r.unit}".rstrip())
    lines += [f"GONE     {name}" for name in before]
    return lines


def derive(module: ModuleType, m: Measurement, summary: str, shown: str) -> Measurement:
    """m with its gates and results derived again by module.summarise from m's raw samples."""
    try:
        args, kwargs = arguments(m.raw)
    except RawError as exc:
        raise Refused(f"{shown}: raw samples unreadable: {exc}") from None
    try:
        with time_limit(SUMMARY_SECONDS):
            outcome = module.summarise(*args, **kwargs)
    except Exception as exc:  # the summary is the code under test here: any failure is its report
        raise Refused(f"{shown}: summarise() raised {type(exc).__name__}: {exc}") from None
    gates = [*outcome.gates, *(g for g in m.gates if g.name in RUNNER_GATES)]
    failing = [g.name for g in gates if not g.passed]
    if failing:
        raise Refused(f"{shown}: the summary now fails {len(failing)} gate(s): {'; '.join(failing)[:300]}")
    carried = {r.name: r for r in m.results}
    results = [_carry(r, carried.get(r.name), m.recorded_on) for r in outcome.results]
    return dataclasses.replace(
        m, gates=[Gate(g.name, g.passed, g.detail) for g in gates], results=results, summary=summary
    )


def _carry(new: Any, old: Result | None, day: str) -> Result:
    """A derived result, keeping the day its value was first measured where the value is unchanged."""
    same = old is not None and (old.value, old.unit) == (new.value, new.unit)
    first = old.first_measured if same and old is not None else day
    return Result(new.name, new.value, new.unit, new.description, list(new.samples), first, new.method)


def plan(folder: Path, only: str | None) -> tuple[list[tuple[str, list[Derived], list[Path]]], list[str]]:
    """Per node to derive again: the files to rewrite and the earlier runs to drop; and why
    each other node whose summary or recipe moved cannot be (no raw samples, another recipe, a
    refused derivation)."""
    modules = {m.ID: m for m in EXPERIMENTS}
    found, problems = load_measurements(folder, ROOT, catalog())
    if problems:
        raise GlossaryError(problems)
    todo: list[tuple[str, list[Derived], list[Path]]] = []
    left: list[str] = []
    for experiment, record in sorted(found.experiments.items()):
        if (only and experiment != only) or record.info is None:
            continue
        for run in record.runs:
            if run.summarised_before:
                left.append(
                    f"{run.good_path}: kept as its run summarised it (it kept no raw samples; the recipe is "
                    "today's): the card's next GPU run summarises it with today's code"
                )
                continue
            if not run.stale or run.good is None:
                continue
            if not run.rederivable:
                left.append(f"{run.good_path}: stays stale (its recipe changed): re-run it on a GPU")
                continue
            try:
                todo.append(_node(modules[experiment], run, record.info.summary, folder))
            except Refused as exc:
                left.append(str(exc))
    return todo, left


def _node(module: ModuleType, run: Any, summary: str, folder: Path) -> tuple[str, list[Derived], list[Path]]:
    derived, dropped = [], []
    for m, shown in ((run.good, run.good_path), *zip(run.earlier, run.earlier_paths, strict=True)):
        path = ROOT / shown
        if m.raw is None:
            dropped.append(path)
            continue
        new = derive(module, m, summary, shown)
        text = new.to_json()
        try:
            readable(text, shown)  # what the site will read back
        except MeasurementError as exc:
            raise Refused(f"{shown}: the derived file would be refused: {exc.message}") from None
        derived.append(Derived(path, text, verdicts(m.results, new.results)))
    return run.good_path, derived, dropped


def apply(todo: list[tuple[str, list[Derived], list[Path]]]) -> None:
    """Write every derived file and drop every earlier run that cannot follow, or restore all."""
    undo = Undo()
    try:
        for _, derived, dropped in todo:
            for d in derived:
                undo.remember(d.path)
                write_text_atomic(d.path, d.text)
            for path in dropped:
                undo.remember(path)
                path.unlink()
    except BaseException:
        undo.restore()
        raise


PROG = "make rederive"


def main(argv: list[str] | None = None) -> int:
    """_main inside the error boundary (cudagloss.boundary): a file it cannot read is reported
    at its line, never a traceback."""
    return guarded(PROG, lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--experiment", help="only this experiment")
    parser.add_argument("--dry-run", action="store_true", help="report, write nothing")
    parser.add_argument("--measurements", default="measurements", help="the folder (inside the repository)")
    args = parser.parse_args(argv)
    folder = ROOT / args.measurements
    if not folder.resolve().is_relative_to(ROOT) or first_link(folder, ROOT) is not None:
        raise UsageError(f"{args.measurements} is not a folder inside the repository")
    if args.experiment and args.experiment not in {m.ID for m in EXPERIMENTS}:
        raise UsageError(f"no experiment '{args.experiment}'; see make verify ARGS=--list")
    todo, left = plan(folder, args.experiment)
    for node_path, derived, dropped in todo:
        print(node_path)
        for d in derived:
            print(f"  {d.path.relative_to(ROOT)}", *(f"    {line}" for line in d.lines), sep="\n")
        for path in dropped:
            print(f"  dropped {path.relative_to(ROOT)}: an earlier run that kept no raw samples")
    for line in left:
        complain(PROG, line)
    if not args.dry_run:
        apply(todo)
    files = sum(len(d) for _, d, _ in todo)
    verb = "would derive" if args.dry_run else "derived"
    print(f"{verb} {files} file(s) of {len(todo)} node(s) again; {len(left)} left as they are")
    return ExitCode.OK


if __name__ == "__main__":
    sys.exit(main())
