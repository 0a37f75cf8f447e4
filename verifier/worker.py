"""Runs one step of an experiment in a fresh process: `python3 -m verifier.worker MODULE STEP ARGS_JSON`.

The parent sets the environment (CUDA_CACHE_DISABLE, CUDA_CACHE_PATH, ...) before this
process starts, so the driver sees it at cuInit. The step's result is printed as the last
line of stdout, as JSON; a CUDA error is reported the same way, never as a traceback.
"""

from __future__ import annotations

import importlib
import json
import sys
import time

from .cuda import CudaError


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    module, step, raw = argv
    fn = getattr(importlib.import_module(f"verifier.{module}"), f"step_{step}")
    try:
        result = {"ok": True, **fn(json.loads(raw))}
    except CudaError as exc:
        result = exc.as_result()
    result["process_s"] = time.perf_counter() - started
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
