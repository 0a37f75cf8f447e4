"""What every experiment shares: fresh-process steps, timing summaries, gates and results."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudagloss.measurement import Gate, Result

ROOT = Path(__file__).resolve().parent.parent


class StepFailed(RuntimeError):
    """A fresh-process step that crashed or printed no result."""


SPAWN = os.environ.get("VERIFY_SPAWN", "fork")
"""How a fresh process is made: 'fork' from a zygote that never called cuInit (default),
or 'exec' a new interpreter each time (what `bench/verify.py` compares it with)."""

LEDGER: list[dict[str, Any]] = []
"""One entry per fresh process this run started: its step and where its time went."""

_zygote: Any = None


def _exec(module: str, step: str, args: dict[str, Any], env: dict[str, str], timeout: float) -> dict[str, Any]:
    full_env = {**os.environ, **env}
    full_env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT), full_env.get("PYTHONPATH", "")])
    run = subprocess.run(
        [sys.executable, "-m", "verifier.worker", module, step, json.dumps(args)],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )
    lines = run.stdout.strip().splitlines()
    if run.returncode != 0 or not lines:
        raise StepFailed(f"{module}.{step} exited {run.returncode}: {run.stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _fork(module: str, step: str, args: dict[str, Any], env: dict[str, str], timeout: float) -> dict[str, Any]:
    """A child of the zygote: multiprocessing's forkserver, a clean interpreter started once
    (so it inherits no CUDA state from this process, which has called cuInit) that imports
    the worker's modules and forks a child per step."""
    global _zygote
    import multiprocessing

    from . import worker

    if _zygote is None:
        _zygote = multiprocessing.get_context("forkserver")
        _zygote.set_forkserver_preload(["verifier.worker", "verifier.saxpy", *worker.PRELOAD])
    receive, send = _zygote.Pipe(duplex=False)
    child = _zygote.Process(target=worker.forked, args=(module, step, args, env, send), daemon=True)
    child.start()
    send.close()
    try:
        if not receive.poll(timeout):
            child.kill()
            raise StepFailed(f"{module}.{step} gave no result within {timeout:g} s")
        result: dict[str, Any] = receive.recv()
    except EOFError:
        child.join(5)
        raise StepFailed(f"{module}.{step} exited {child.exitcode} without a result") from None
    finally:
        receive.close()
    child.join(timeout)
    return result


def spawn(module: str, step: str, args: dict[str, Any], env: dict[str, str], timeout: float = 300) -> dict[str, Any]:
    """Run verifier.<module>.step_<step>(args) in a fresh process whose environment is ours
    plus env (set before that process calls cuInit); its phase times go into LEDGER."""
    begun = time.time()
    result = (_exec if SPAWN == "exec" else _fork)(module, step, args, env, timeout)
    ended = time.time()
    phases = {k: result.get(k, 0.0) for k in ("init_s", "compile_s", "load_s", "run_s")}
    LEDGER.append(
        {
            "module": module,
            "step": step,
            "wall_s": ended - begun,
            "start_s": result["started_at"] - begun,
            "import_s": result["import_s"],
            **phases,
            "other_step_s": max(0.0, result["step_s"] - sum(phases.values())),
            "exit_s": ended - result["finished_at"],
        }
    )
    return result


def failure(result: dict[str, Any]) -> str:
    """A failed step's CUDA error as one line, said plainly when it is a version mismatch."""
    if result.get("ok"):
        return ""
    text = f"{result['error_name']} ({result['error_code']}): {result['error_message']}"
    if result["error_name"] == "CUDA_ERROR_UNSUPPORTED_PTX_VERSION":
        text += (
            "; the PTX was written by an NVRTC newer than this driver understands: use an NVRTC "
            "no newer than the driver's CUDA version (both are recorded in the provenance)"
        )
    if result.get("jit_log"):
        text += f"; JIT log: {result['jit_log']}"
    return text


def timing(name: str, samples: list[float], description: str, unit: str = "ms") -> list[Result]:
    """Median, min and max of samples (seconds), in ms, each result carrying the raw samples."""
    ms = [s * 1000 for s in samples]
    return [
        Result(f"{name}_median", round(statistics.median(ms), 4), unit, f"{description} (median)", ms),
        Result(f"{name}_min", round(min(ms), 4), unit, f"{description} (fastest)"),
        Result(f"{name}_max", round(max(ms), 4), unit, f"{description} (slowest)"),
    ]


@dataclass
class Outcome:
    """What an experiment's run() returns."""

    gates: list[Gate] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    repeats: int = 0

    def gate(self, name: str, passed: bool, detail: str = "") -> bool:
        self.gates.append(Gate(name, bool(passed), detail))
        return bool(passed)

    def add(self, *results: Result) -> None:
        self.results.extend(results)
