"""Benchmark: `make verify` wall time on a GPU node, where the time goes, and what the zygote saves.

Runs every experiment twice in the same session, once making each fresh process by exec'ing
a new interpreter (VERIFY_SPAWN=exec) and once by forking it from a zygote that never
called cuInit (VERIFY_SPAWN=fork, the default). Prints each experiment's wall time both
ways, the fork run's phases (process start, imports, cuInit, compile, load, run, exit, the
runner's own work), and whether the two runs measured the same things: every result that
is not a timing must be identical, and the timings are shown side by side.

    python3 bench/verify.py [--repeats 5] [--out DIR]

Needs a CUDA GPU and the node's python3 with cuda-bindings; without one it says so and
exits 3. The fork run's measurement files are left in DIR/fork/ for committing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import ROOT, refuse_committed_links, row, save

from cudagloss.errors import ExitCode

TARGET_S = 60.0
TIMING_UNITS = {"ms", "×"}
SHOWN = ["load_jit_cache_disabled_median", "load_warm_cache_median", "load_native_sass_median", "cuinit_median"]
PHASES = [
    ("start_s", "process start"),
    ("import_s", "imports"),
    ("init_s", "cuInit+context"),
    ("compile_s", "compile"),
    ("load_s", "load"),
    ("run_s", "run"),
    ("other_step_s", "other in step"),
    ("exit_s", "process exit"),
    ("runner_s", "in the runner"),
]


def run_verifier(how: str, out: Path, repeats: int) -> dict[str, Any] | None:
    timing = out / f"{how}.json"
    env = {**os.environ, "VERIFY_SPAWN": how, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    command = [sys.executable, "-m", "verifier", "--all", "--repeats", str(repeats), "--out", str(out / how)]
    run = subprocess.run(
        [*command, "--timing", str(timing)],
        cwd=ROOT,
        env=env,
        text=True,
        capture_output=True,
        check=False,
    )
    print(run.stdout, end="", file=sys.stderr)
    if run.returncode == 3:
        print(run.stderr.strip(), file=sys.stderr)
        return None
    data: dict[str, Any] = json.loads(timing.read_text())
    data["exit"] = run.returncode
    return data


def results(folder: Path) -> dict[str, dict[str, Any]]:
    """experiment -> result name -> (value, unit), from one run's measurement files."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*/*.json")):
        if path.name.endswith(".failed.json"):
            continue
        data = json.loads(path.read_text())
        out[data["experiment"]] = {r["name"]: (r["value"], r.get("unit", "")) for r in data["results"]}
    return out


def main() -> int:
    refuse_committed_links("verifier", "measurements")  # before anything is read
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", help="keep the runs' files here (default: a temporary folder)")
    args = parser.parse_args()
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench-verify-"))
    out.mkdir(parents=True, exist_ok=True)
    runs = {}
    for how in ("exec", "fork"):
        data = run_verifier(how, out, args.repeats)
        if data is None:
            print("bench/verify.py: no usable CUDA GPU here; run it on a GPU node", file=sys.stderr)
            return int(ExitCode.NO_GPU)
        runs[how] = data
    exec_run, fork_run = runs["exec"], runs["fork"]
    print(f"make verify ARGS=--all, {args.repeats} fresh-process repeats per timing")
    print(f"{'experiment':<18} {'exec s':>8} {'fork s':>8} {'fork÷exec':>10} {'processes':>10}")
    for name, f in fork_run["experiments"].items():
        e = exec_run["experiments"][name]
        share = f["wall_s"] / e["wall_s"]
        print(f"{name:<18} {e['wall_s']:>8.1f} {f['wall_s']:>8.1f} {share:>10.2f} {f['processes']:>10}")
    ratio = fork_run["total_s"] / exec_run["total_s"]
    print(f"{'total':<18} {exec_run['total_s']:>8.1f} {fork_run['total_s']:>8.1f} {ratio:>10.2f}")
    met = fork_run["total_s"] < TARGET_S
    print(f"target: under {TARGET_S:g} s: {'met' if met else 'not met'} ({fork_run['total_s']:.1f} s)")
    for label, run in (("exec", exec_run), ("fork", fork_run)):
        sums = {key: sum(x[key] for x in run["experiments"].values()) for key, _ in PHASES}
        print(f"phases ({label}): " + ", ".join(f"{text} {sums[key]:.1f} s" for key, text in PHASES))
    # Same measurements either way?
    a, b = results(out / "exec"), results(out / "fork")
    differ = []
    compared = 0
    for experiment, values in a.items():
        for name, (value, unit) in values.items():
            if unit in TIMING_UNITS:
                continue
            compared += 1
            other = b.get(experiment, {}).get(name, (None, ""))[0]
            if other != value:
                differ.append(f"{experiment}.{name}: exec {value!r}, fork {other!r}")
    print(f"non-timing results compared: {compared}; " + ("all identical" if not differ else f"{len(differ)} differ:"))
    for line in differ:
        print(f"  {line}")
    shown = []
    for name in SHOWN:
        pe, pf = a.get("ptx-jit", {}).get(name), b.get("ptx-jit", {}).get(name)
        if pe and pf:
            shown.append(f"{name} {pe[0]:.3g} vs {pf[0]:.3g} ms")
    print("timings, exec vs fork: " + "; ".join(shown))
    gpu = json.loads(next((out / "fork").glob("ptx-jit/*.json")).read_text())["provenance"]
    where = f"{gpu.get('gpu_name', 'GPU')} ({gpu.get('node', '?')}), driver {gpu.get('driver_version', '?')}"
    save(
        "verify",
        [
            row("make verify ARGS=--all, exec'd processes", f"{exec_run['total_s']:.1f} s"),
            row(
                "make verify ARGS=--all, zygote processes (default)",
                f"{fork_run['total_s']:.1f} s ({ratio:.2f}× exec)",
                f"< {TARGET_S:g} s",
                met,
            ),
            row(
                "same non-timing results both ways",
                f"{compared - len(differ)} of {compared}",
                "all",
                not differ,
            ),
        ],
        where=where,
        notes="; ".join(shown),
    )
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
