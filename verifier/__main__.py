"""`make verify`: run the experiments on this GPU node and write measurements/.

    python3 -m verifier --list
    python3 -m verifier [--experiment ID] [--repeats N] [--out measurements]

Exit codes: 0 all experiments passed their gates; 1 some failed (their failure is
written beside the last good file); 2 usage; 3 no GPU (or no cuda-python) here.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from pathlib import Path

from cudagloss.measurement import Measurement, record

from .cuda import CudaError, Device
from .experiment import ROOT, StepFailed
from .registry import EXPERIMENTS, experiment_hash

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_GPU = 0, 1, 2, 3


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make verify", description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="list the experiments, one line each")
    parser.add_argument("--experiment", help="run only this experiment id")
    parser.add_argument("--repeats", type=int, default=5, help="fresh-process repeats per timing (default 5)")
    parser.add_argument("--out", default=str(ROOT / "measurements"), help="measurements folder")
    args = parser.parse_args(argv)
    if args.list:
        for module in EXPERIMENTS:
            print(f"{module.ID:<20} {module.PURPOSE}")
        return EXIT_OK
    chosen = [m for m in EXPERIMENTS if args.experiment in (None, m.ID)]
    if not chosen:
        print(f"make verify: no experiment '{args.experiment}'; see make verify --list", file=sys.stderr)
        return EXIT_USAGE
    device = _open_device()
    if isinstance(device, str):
        print(f"make verify: no usable CUDA GPU on this machine ({device}); run it on a GPU node", file=sys.stderr)
        return EXIT_NO_GPU
    from .provenance import collect

    failed = 0
    started_all = time.perf_counter()
    for i, module in enumerate(chosen, 1):
        print(f"[{i}/{len(chosen)}] {module.ID}: {module.PURPOSE}", flush=True)
        started = time.perf_counter()
        provenance = collect(device)
        error = None
        with tempfile.TemporaryDirectory(prefix=f"verify-{module.ID}-") as tmp:
            try:
                outcome = module.run(device, args.repeats, Path(tmp))
            except (CudaError, StepFailed, OSError, ValueError) as exc:
                outcome, error = None, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
        provenance["duration_s"] = round(time.perf_counter() - started, 3)
        provenance["repeats"] = args.repeats
        gates = outcome.gates if outcome else []
        ok = outcome is not None and bool(gates) and all(g.passed for g in gates)
        measurement = Measurement(
            experiment=module.ID,
            purpose=module.PURPOSE,
            code_hash=experiment_hash(module),
            status="ok" if ok else "failed",
            provenance=provenance,
            gates=gates,
            results=outcome.results if outcome else [],
            error=error,
        )
        path = record(measurement, Path(args.out))
        for gate in gates:
            print(f"    {'pass' if gate.passed else 'FAIL'}  {gate.name}  {gate.detail}".rstrip())
        print(f"    -> {path} ({provenance['duration_s']} s)" + ("" if ok else "  FAILED"), flush=True)
        failed += not ok
    print(f"{len(chosen) - failed} of {len(chosen)} experiments passed in {time.perf_counter() - started_all:.1f} s")
    return EXIT_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
