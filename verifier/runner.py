"""Run the chosen experiments on this node and record each one's measurement file.

Each experiment runs with the node's provenance collected first, its gates checked, and
the user's own JIT cache compared before and after; its results are compared with the
node's committed file (verifier/rerun.py), and its file is written through the same checks
the site reads it with (cudagloss.model.measurement.record), beside the committed one when a
discrete result changed.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from cudagloss.errors import Diagnostic, ExitCode, GlossaryError, UsageError, complain
from cudagloss.files.atomic import write_text_atomic
from cudagloss.merge.undeclared import summary
from cudagloss.model.compare import RULE
from cudagloss.model.measurement import Measurement
from cudagloss.model.measurement_rules import is_node_name
from verifier import cachedir
from verifier.contract import run_checked
from verifier.cuda import CudaError, Device
from verifier.experiment import ROOT
from verifier.rawcall import RUNNER_GATES, fitting, keeping
from verifier.recipe import recipe_key, summary_key
from verifier.registry import CONTRACTS, EXPERIMENTS, experiment_hash
from verifier.rerun import Rerun, report_json
from verifier.settle import claiming_terms, passed, settle
from verifier.spawn import LEDGER, SPAWN
from verifier.targets import not_for


def _open_device() -> Device | str:
    try:
        import cuda.bindings  # noqa: F401
    except ImportError as exc:
        return f"cuda-python is not installed ({exc.name})"
    try:
        return Device()
    except CudaError as exc:
        return f"{exc.name}: {exc.message}"
    except (OSError, RuntimeError) as exc:  # no driver: cuda.bindings cannot dlopen libcuda.so.1
        return str(exc)


def cited_experiments(terms: Path) -> list[str]:
    """The experiment ids the term files cite; GlossaryError with every file that cannot be
    read, at its line. Only each file's own fields are read: a body citing values not
    measured yet must not stop their measuring."""
    from cudagloss.load.terms import load_term, term_files

    if not terms.is_dir():
        raise UsageError(f"no terms folder at {terms}")
    cited: set[str] = set()
    unreadable: list[Diagnostic] = []
    for path in term_files(terms):
        loaded, found = load_term(path, ROOT)
        if loaded is None:
            unreadable += [d for d in found if not d.warning]
            continue
        cited.update(c.experiment for c in loaded.term.measurements)
    if unreadable:
        raise GlossaryError(unreadable)
    return sorted(cited)


def choose(args: argparse.Namespace) -> list[ModuleType]:
    """The experiments to run: one by id, all, or (by default) those a term cites;
    UsageError for an id or a citation of an experiment that does not exist."""
    if args.experiment:
        chosen = [m for m in EXPERIMENTS if args.experiment == m.ID]
        if not chosen:
            raise UsageError(f"no experiment '{args.experiment}'; see make verify ARGS=--list")
        return chosen
    if args.all:
        return list(EXPERIMENTS)
    cited = cited_experiments(Path(args.terms))
    unknown = sorted(set(cited) - {m.ID for m in EXPERIMENTS})
    if unknown:
        raise UsageError(f"terms cite experiments that do not exist: {', '.join(unknown)}")
    return [m for m in EXPERIMENTS if m.ID in cited]


def run_all(chosen: list[ModuleType], args: argparse.Namespace) -> int:
    """Run the chosen experiments, with CUDA_CACHE_PATH pointing at a private folder for as
    long as they run: the user's own JIT cache is never used."""
    with tempfile.TemporaryDirectory(prefix="verify-cache-") as private:
        # Set before this process's first NVRTC call or cuInit; children inherit it unless
        # an experiment gives them a fresh folder of their own.
        os.environ["CUDA_CACHE_PATH"] = private
        return _run_chosen(chosen, args)


def _run_chosen(chosen: list[ModuleType], args: argparse.Namespace) -> int:
    # Hashed before any CUDA call: the code as imported, and out of reach of a library that
    # writes into a Python bytes object (the syntax tree's one-byte constants are shared).
    hashes = {module.ID: experiment_hash(module) for module in chosen}
    keys = {module.ID: (recipe_key(module), summary_key(module)) for module in chosen}
    user_cache_before = cachedir.listing(cachedir.user_cache())
    device = _open_device()
    if isinstance(device, str):
        complain("make verify", f"no usable CUDA GPU on this machine ({device}); run it on a GPU node")
        return ExitCode.NO_GPU
    from verifier.provenance import CHANGING, clock_event_ns, clock_events_during, collect, gpu_state, node_name

    if not is_node_name(node_name()):
        complain(
            "make verify",
            f"{node_name()!r} cannot name a node (it becomes measurements/<experiment>/<node>.json); "
            "set VERIFY_NODE to letters, digits, '.', '-' or '_'",
        )
        return ExitCode.USAGE
    # With --format json the report is stdout's one document, and the progress goes to stderr.
    say = functools.partial(print, file=sys.stderr if args.format == "json" else sys.stdout, flush=True)
    terms = claiming_terms(Path(args.terms), say)
    failed = 0
    capability = device.describe()["compute_capability"]
    contracts = {c.id: c for c in CONTRACTS}
    not_here: list[str] = []
    started_all = time.perf_counter()
    timings: dict[str, dict[str, float]] = {}
    reruns: list[Rerun] = []
    for i, module in enumerate(chosen, 1):
        say(f"[{i}/{len(chosen)}] {module.ID}: {module.PURPOSE}")
        if module.ID in contracts and (why := not_for(module, contracts[module.ID].kernels(), capability)):
            say(f"    not for this GPU (compute capability {capability}): {why}")
            not_here.append(module.ID)
            continue
        started = time.perf_counter()
        first_process = len(LEDGER)
        provenance = collect(device)
        events_before = clock_event_ns(device)
        error = None
        with tempfile.TemporaryDirectory(prefix=f"verify-{module.ID}-") as tmp:
            try:
                with keeping(module) as kept:
                    outcome = run_checked(module, device, args.repeats, Path(tmp))  # fails a compile undeclared
            except Exception as exc:
                outcome, error = None, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
                say(f"    crashed: {type(exc).__name__}: {exc}")
        provenance["duration_s"] = round(time.perf_counter() - started, 3)
        provenance.update(clock_events_during(events_before, clock_event_ns(device)))
        end = gpu_state(device)  # clocks and limits move while the GPU works: the state after, too
        provenance.update({f"{key}_end": end[key] for key in CHANGING if key in end})
        provenance["repeats"] = outcome.repeats if outcome is not None else 0
        if outcome is not None:
            outcome.gate(
                RUNNER_GATES[0],
                cachedir.listing(cachedir.user_cache()) == user_cache_before,
                str(cachedir.user_cache()),
            )
        gates = outcome.gates if outcome else []
        ok = outcome is not None and bool(gates) and all(g.passed for g in gates)
        measurement = Measurement(
            experiment=module.ID,
            purpose=module.PURPOSE,
            code_hash=hashes[module.ID],
            recipe=keys[module.ID][0],
            summary=keys[module.ID][1],
            status="ok" if ok else "failed",
            provenance=provenance,
            gates=gates,
            results=outcome.results if outcome else [],
            error=error,
            raw=kept.raw,
        )
        if kept.problem and hasattr(module, "summarise"):
            say(f"    no raw samples kept: {kept.problem}")
        measurement = fitting(measurement, say)
        rerun = settle(measurement, Path(args.out), say, terms)
        if rerun is None:
            failed += 1
            continue
        reruns.append(rerun)
        timings[module.ID] = phase_totals(LEDGER[first_process:], provenance["duration_s"])
        say(f"    time: {describe_phases(timings[module.ID])}")
        failed += not passed(measurement, rerun)
    total = time.perf_counter() - started_all
    say(f"timings compared by {RULE}")
    if moved := summary(r.undeclared for r in reruns):
        say(moved)
    ran = len(chosen) - len(not_here)
    skipped = f"; {len(not_here)} not for compute capability {capability}: {', '.join(not_here)}" if not_here else ""
    say(f"{ran - failed} of {ran} experiments passed in {total:.1f} s{skipped}")
    if args.format == "json":
        print(report_json(reruns), flush=True)
    if args.timing:
        report = {"spawn": SPAWN, "repeats": args.repeats, "total_s": round(total, 3), "experiments": timings}
        write_text_atomic(Path(args.timing), json.dumps(report, indent=2) + "\n")
    return ExitCode.FAILED if failed else ExitCode.OK


PHASES = ("start_s", "import_s", "init_s", "compile_s", "load_s", "run_s", "other_step_s", "exit_s")
PHASE_LABELS = {
    "start_s": "process start",
    "import_s": "imports",
    "init_s": "cuInit+context",
    "compile_s": "compile",
    "load_s": "load",
    "run_s": "run",
    "other_step_s": "other",
    "exit_s": "process exit",
    "runner_s": "in the runner",
}


def phase_totals(entries: list[dict[str, Any]], duration_s: float) -> dict[str, float]:
    """Seconds per phase over an experiment's fresh processes, plus what the runner itself
    spent (building images, listing caches) outside them."""
    totals = {phase: round(sum(e[phase] for e in entries), 3) for phase in PHASES}
    totals["runner_s"] = round(max(0.0, duration_s - sum(e["wall_s"] for e in entries)), 3)
    totals["processes"] = len(entries)
    totals["wall_s"] = duration_s
    return totals


def describe_phases(totals: dict[str, float]) -> str:
    parts = [f"{PHASE_LABELS[k]} {totals[k]:.1f} s" for k in (*PHASES, "runner_s") if totals[k] >= 0.05]
    return f"{int(totals['processes'])} processes; " + ", ".join(parts)
