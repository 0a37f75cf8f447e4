"""`make measure`: measure the GPU in this machine for the glossary, as a reader contributes it.

    python3 fleet/measure.py             # every experiment this GPU can run, into contributed/<node>/
    python3 fleet/measure.py --dry-run   # say which node name and folder it would use, run nothing

The node is named after the GPU's model and its card (nvidia-smi's name, then the first group
of its UUID: `nvidia-geforce-rtx-4090-3f1ceb1e`), so two readers with the same model are two
cards, and one reader running twice is two runs of one card. The folder is laid out as `make
verify` writes `measurements/`: contributed/<node>/<experiment>/<node>.json, with full
provenance. Experiments this GPU's compute capability cannot run are named with NVRTC's
refusal and skipped. Nothing is sent anywhere: the reader commits the folder and opens a pull
request; the contribution workflow checks it with `cudagloss collect` and says what it found.
Standard library only, with the machine's own python3, as `make verify`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "fleet"))

from runners import card_node_name  # noqa: E402  (fleet/runners.py, beside this file)

from cudagloss.errors import ExitCode, complain  # noqa: E402
from cudagloss.files.inside import first_link  # noqa: E402


class NoGpu(Exception):
    """No GPU to measure here: one line, exit 3 (as `make verify`)."""


FOLDER = "contributed"
PROG = "make measure"


def gpu() -> tuple[str, str]:
    """The first GPU's name and UUID, as nvidia-smi prints them; NoGpu saying why when it cannot."""
    tool = shutil.which("nvidia-smi")
    if tool is None:
        raise NoGpu("no nvidia-smi on PATH: run this on a Linux machine with an NVIDIA GPU and its driver")
    try:
        run = subprocess.run(
            [tool, "--query-gpu=name,uuid", "--format=csv,noheader"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NoGpu(f"nvidia-smi did not answer: {exc}") from None
    first = run.stdout.splitlines()[0] if run.returncode == 0 and run.stdout.strip() else ""
    name, _, uuid = first.rpartition(",")
    if not name.strip() or not uuid.strip():
        raise NoGpu(f"nvidia-smi found no GPU ({run.stderr.strip()[:200] or 'no output'})")
    return name.strip(), uuid.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print the node name and the folder; run nothing")
    args = parser.parse_args(argv)
    try:
        name, uuid = gpu()
    except NoGpu as exc:
        complain(PROG, str(exc))
        return ExitCode.NO_GPU
    node = card_node_name(name.lower(), uuid)
    out = ROOT / FOLDER / node
    if (link := first_link(out, ROOT)) is not None:
        complain(PROG, f"{link} is a symbolic link: refusing to write through it")
        return ExitCode.USAGE
    print(f"{name} ({uuid}): node {node}, writing {out.relative_to(ROOT)}/")
    if args.dry_run:
        return 0
    env = {**os.environ, "VERIFY_NODE": node, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    done = subprocess.run([sys.executable, "-m", "verifier", "--all", "--out", str(out)], cwd=ROOT, env=env)
    print(
        f"\nTo contribute this card: git checkout -b measure-{node} && git add {FOLDER}/{node} && "
        f'git commit -m "Measurements of {node}" and open a pull request. Its check runs `cudagloss collect` '
        "on the folder and comments what it found; a maintainer merges it with "
        f"`make collect DIRS={FOLDER}/{node}`."
    )
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
