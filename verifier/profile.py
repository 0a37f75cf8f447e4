"""Hardware counters as a cross-check: an experiment's kernels run once each under Nsight Compute.

Which cache level served a kernel is built into the kernel (the loads' cache operators and the
footprints); where `ncu` runs on the node, this module runs the experiment's `profile(device)`
(each kernel launched once, nothing timed) in a fresh interpreter under
`ncu --clock-control none` (the card's clocks are left as they are found) and reads back the
counters asked for, per launch in launch order. Where ncu is not there or cannot read the
counters (no permission, a sandboxed runtime), the reason comes back instead, and the page says
"not cross-checked".

    python3 -m verifier.profile_cli <experiment-id>    (what ncu runs: verifier/profile_cli.py)
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.experiment import ROOT, Outcome

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

TIMEOUT_S = 300
NCU_PATHS = ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu")

Launch = tuple[str, dict[str, float]]
"""One profiled launch: the kernel's name and its counters (base units: bytes, %, cycles)."""


def ncu() -> str | None:
    """The ncu executable on this node, or None."""
    found = shutil.which("ncu")
    if found:
        return found
    return next((p for p in NCU_PATHS if Path(p).is_file()), None)


def parse_csv(text: str, metrics: Sequence[str]) -> list[Launch]:
    """ncu --csv output (its own '==PROF==' lines and the program's output around the table) as
    launches in order, each with the asked metrics as numbers."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    by_id: dict[str, Launch] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        if row.get("Metric Name") not in metrics or not row.get("ID", "").isdigit():
            continue
        try:
            value = float(row.get("Metric Value", "").replace(",", ""))
        except ValueError:
            continue
        name = row.get("Kernel Name", "")
        by_id.setdefault(row["ID"], (name, {}))[1][row["Metric Name"]] = value
    return [by_id[k] for k in sorted(by_id, key=int)]


def counters(experiment: str, metrics: Sequence[str]) -> list[Launch] | str:
    """The counters of each launch experiment's profile() makes, or why there are none."""
    exe = ncu()
    if exe is None:
        return "not cross-checked: Nsight Compute (ncu) is not on this node"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    command = [exe, "--clock-control", "none", "--csv", "--print-units", "base", "--metrics", ",".join(metrics)]
    command += [sys.executable, "-m", "verifier.profile_cli", experiment]
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, env=env, cwd=ROOT, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"not cross-checked: ncu did not run ({type(exc).__name__})"
    launches = parse_csv(run.stdout, metrics)
    if run.returncode != 0 or not launches:
        said = [line for line in (run.stdout + run.stderr).splitlines() if "ERR" in line or "rror" in line]
        reason = said[0].strip()[:200] if said else f"exit {run.returncode}, no counters read"
        return f"not cross-checked: ncu could not read the counters ({reason})"
    return launches


def launches(outcome: Outcome, counters: Any, expected: int, what: str, gate: str) -> list[dict[str, float]] | None:
    """Each profiled launch's counters, when counters (what counters() returned, filtered to the
    cases' launches) holds one per case; otherwise None, said: why none were read (a text
    result, 'info') or a failed gate."""
    if not isinstance(counters, list):
        why = str(counters or "not cross-checked: the counters were not asked for")
        outcome.add(Result("counters", why, "", f"Nsight Compute cross-check of {what}", method="info"))
        return None
    if not outcome.gate(gate, len(counters) == expected, f"{len(counters)} for {expected} cases"):
        return None
    return [found for _, found in counters]
