"""Runs one step of an experiment in a fresh process.

Two ways to get that process, the same to CUDA: `python3 -m verifier.worker MODULE STEP
ARGS_JSON` execs a new interpreter (VERIFY_SPAWN=exec), or `forked` runs in a child of a
zygote process that has imported Python and numpy but never touched the driver
(VERIFY_SPAWN=fork, the default: it skips interpreter start and imports, most of a step's
cost). Either way the step's environment (CUDA_CACHE_DISABLE, CUDA_CACHE_PATH, ...) is set
before the step calls cuInit, and the driver starts from nothing in that process.

A step's result is a JSON object; a CUDA error is reported the same way, never as a
traceback. Each result carries its phase times (started_at, import_s, step_s, finished_at)
so that the runner can say where a run's time went.
"""

from __future__ import annotations

import time

STARTED_AT = time.time()  # before any other import: the exec'd interpreter's start is measured from here

import importlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

from verifier import compiled  # noqa: E402
from verifier.cuda import CudaError  # noqa: E402

PRELOAD = ("numpy", "cuda.bindings.driver", "cuda.bindings.nvrtc")
"""What the zygote imports once. Importing these loads no CUDA library state: the driver
starts at cuInit, NVRTC at its first call, both in the child."""


def run_step(module: str, step: str, args: dict[str, Any], started_at: float) -> dict[str, Any]:
    """verifier.<module>.step_<step>(args), with how long imports and the step took."""
    t0 = time.perf_counter()
    for name in PRELOAD:
        importlib.import_module(name)
    fn = getattr(importlib.import_module(f"verifier.{module}"), f"step_{step}")
    t1 = time.perf_counter()
    with compiled.recording() as sources:
        try:
            result = {"ok": True, **fn(args)}
        except CudaError as exc:
            result = exc.as_result()
    result.update(started_at=started_at, import_s=t1 - t0, step_s=time.perf_counter() - t1, finished_at=time.time())
    result[compiled.KEY] = sources  # what the step compiled, for the parent's contract check (spawn.py takes it off)
    return result


def forked(module: str, step: str, args: dict[str, Any], env: dict[str, str], conn: Any) -> None:
    """The body of a zygote's child: set the step's environment, run it, send the result."""
    started_at = time.time()
    os.environ.update(env)
    conn.send(run_step(module, step, args, started_at))
    conn.close()


def main(argv: list[str]) -> int:
    module, step, raw = argv
    print(json.dumps(run_step(module, step, json.loads(raw), STARTED_AT)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
