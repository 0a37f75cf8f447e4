"""Fresh processes for experiment steps: fork from a zygote that never called cuInit, or
exec a new interpreter, each with the step's own environment set before CUDA starts.

Every step that must see the driver start from nothing (a cache setting, a new context)
goes through spawn(); the runner and the experiments never fork by themselves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from verifier import compiled
from verifier.experiment import ROOT

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""


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

    from verifier import worker

    if _zygote is None:
        _zygote = multiprocessing.get_context("forkserver")
        _zygote.set_forkserver_preload(["verifier.worker", "verifier.kernels.saxpy", *worker.PRELOAD])
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
    compiled.noted(*result.pop(compiled.KEY, []))  # the child's compiles count as the run's (contract.py)
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
