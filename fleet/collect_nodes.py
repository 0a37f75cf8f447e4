"""Merge the node folders a fleet run brought back, and write the report a reviewer reads.

    python3 fleet/collect_nodes.py NODES [--report report.md] [--repo .] [--cudagloss .venv/bin/cudagloss]

NODES holds one folder per node (CI artifacts downloaded side by side, a cluster's run
folder). `cudagloss collect` refuses the whole merge for one failed run, which is right for
a file but wrong for a fleet: one GPU with a broken gate would hold back every other card's
results. So a node folder holding a failed run (<node>.failed.json) is left out whole, named
in the report with its failed experiments, and the others are merged; every other reason to
refuse (a stale run, a bad file, one node from two folders) still refuses everything.

The report is Markdown (the verify workflow's pull request body and its step summary): how
many experiments had GPU times move under an unchanged recipe (issue 40: an undeclared method
change, or the environment's), the nodes left out, then collect's own report and messages
verbatim in a code block. Exit codes: collect's (0 merged, 1 refused), 1 when no folder could
be merged, 2 usage.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 60_000  # GitHub refuses a pull request body over 65,536 characters
METHOD_MARK = "undeclared method change?"
ENVIRONMENT_MARK = "environment changed?"
"""How collect's per-experiment lines start (cudagloss.merge.undeclared; a test holds them equal):
this script runs with any python3, so it counts collect's text rather than importing it."""


def fenced(text: str) -> str:
    """`text` as a Markdown code block that no run of backticks inside it can close."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}\n"


def split(nodes: Path) -> tuple[list[Path], list[str]]:
    """The node folders to merge, and a line for each one left out (and why)."""
    take: list[Path] = []
    left: list[str] = []
    for folder in sorted(nodes.iterdir()):
        if folder.is_symlink() or not folder.is_dir():
            continue  # collect would refuse it; a download holds only folders
        failed = sorted(p.relative_to(folder).as_posix() for p in folder.glob("*/*.failed.json"))
        if failed:
            left.append(f"{folder.name}: a failed run in {', '.join(repr(f) for f in failed)}")
        else:
            take.append(folder)
    return take, left


def undeclared(output: str) -> str | None:
    """A sentence counting collect's undeclared-method and environment lines; None without any."""
    lines = [line.strip() for line in output.splitlines()]
    method = sum(line.startswith(METHOD_MARK) for line in lines)
    environment = sum(line.startswith(ENVIRONMENT_MARK) for line in lines)
    if not method + environment:
        return None
    return (
        f"GPU-timed results moved under an unchanged recipe in {method + environment} experiment(s): "
        f"{method} an undeclared method change? (bump METHOD or VERSION if the code changed how it measures), "
        f"{environment} with the environment changed. Their lines below start '{METHOD_MARK}' or "
        f"'{ENVIRONMENT_MARK}'.\n"
    )


def report(heading: str, left: list[str], output: str) -> str:
    """The Markdown body, cut to what GitHub takes (the whole one stays in the artifact)."""
    parts = [heading.strip() + "\n"]
    if moved := undeclared(output):
        parts.append(moved)
    if left:
        parts.append("Left out (a failed gate or a crash; the node's artifact and job log say which):\n")
        parts.append(fenced("\n".join(left)))
    parts.append(fenced(output or "(collect printed nothing)"))
    body = "\n".join(parts)
    if len(body) > LIMIT:
        body = fenced(body[: LIMIT - 200].rstrip("`")) + "\n(cut: the whole report is the collect-report artifact)\n"
    return body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="collect_nodes.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("nodes", type=Path, help="the folder holding one measurements folder per node")
    parser.add_argument("--report", type=Path, default=Path("report.md"), help="where to write the Markdown report")
    parser.add_argument("--repo", type=Path, default=ROOT, help="the checkout to merge into (its measurements/)")
    parser.add_argument("--cudagloss", default=str(ROOT / ".venv" / "bin" / "cudagloss"), help="the cudagloss to run")
    parser.add_argument("--heading", default="Measurements from the GPU fleet.", help="the report's first line")
    args = parser.parse_args(argv)
    if not args.nodes.is_dir():
        print(f"collect_nodes.py: {args.nodes} is not a folder (no node uploaded anything?)", file=sys.stderr)
        args.report.write_text(report(args.heading, [], f"{args.nodes}: no node folders"), encoding="utf-8")
        return 1
    take, left = split(args.nodes)
    if not take:
        status, output = 1, "no node folder to merge: every node failed or none uploaded its files"
    else:
        command = [args.cudagloss, "collect", "--format", "text", *(str(f.resolve()) for f in take)]
        try:
            run = subprocess.run(command, cwd=args.repo, capture_output=True, text=True, timeout=600, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            status, output = 1, f"cannot run {args.cudagloss}: {exc}"
        else:
            status, output = run.returncode, (run.stdout + run.stderr).replace(str(args.nodes.resolve()) + "/", "")
    body = report(args.heading, left, output)
    args.report.write_text(body, encoding="utf-8")
    print(body)
    return status


if __name__ == "__main__":
    sys.exit(main())
