"""Replay the staleness rules over git history: how many measurements each commit to the
verifier would have staled under the code-hash rule, and under the recipe rule (recipe.py).

    PYTHONPATH=src:. python3 -m verifier.replay [--commits 60] [--format json]

For each of the last N commits that touched verifier/, and the commit before it, the tree is
unpacked into a temporary folder (git archive: nothing of the checkout is touched) and every
experiment's two keys are read there in a fresh interpreter: the code hash by that commit's own
registry, the recipe by this checkout's recipe.py and anatomy.py, copied in (older commits have
no recipe.py; no module declared a METHOD or a VERSION then, so the replayed recipe is the
kernels and the run side's constants). A staleness event is an experiment, present before and
after, whose key moved in that commit. A commit whose tree cannot be read is counted apart.
Standard library only; needs git.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
COPIED = ("recipe.py", "anatomy.py")
READ = (
    "import json\n"
    # Trees older than the measurement page's kernel listing lack the type anatomy.py builds:
    # the same three fields, given for the replay alone.
    "import dataclasses, cudagloss.model.measurement as mm\n"
    "if not hasattr(mm, 'KernelSource'):\n"
    "    mm.KernelSource = dataclasses.make_dataclass('KernelSource', ['where', 'language', 'source'])\n"
    "from verifier.registry import EXPERIMENTS, experiment_hash\n"
    "from verifier.recipe import recipe_key\n"
    "print(json.dumps({m.ID: [experiment_hash(m), recipe_key(m)] for m in EXPERIMENTS}))\n"
)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def keys_at(commit: str, scratch: Path) -> dict[str, list[str]] | None:
    """{experiment: [code hash, recipe key]} at commit, or None when that tree cannot be read."""
    tree = scratch / commit
    tree.mkdir()
    archive = subprocess.run(["git", "archive", commit, "src", "verifier"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    for name in COPIED:
        shutil.copyfile(HERE / name, tree / "verifier" / name)
    env = os.environ | {"PYTHONPATH": f"{tree / 'src'}{os.pathsep}{tree}", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", READ], cwd=tree, env=env, capture_output=True, text=True, check=False)
    shutil.rmtree(tree)
    if done.returncode != 0:
        return None
    found: dict[str, list[str]] = json.loads(done.stdout)
    return found


@dataclass
class Replay:
    """The replay's findings: commits read, those that could not be, events per rule, and
    per commit the experiments each rule staled."""

    commits: int = 0
    unreadable: list[str] = field(default_factory=list)
    events: dict[str, int] = field(default_factory=lambda: {"code_hash": 0, "recipe": 0})
    per_commit: list[dict[str, Any]] = field(default_factory=list)


def replay(count: int) -> Replay:
    """Staleness events per rule over the last count commits that touched verifier/."""
    commits = git("log", f"-n{count}", "--format=%H", "--", "verifier/").split()
    found = Replay(commits=len(commits))
    with tempfile.TemporaryDirectory() as scratch:
        cache: dict[str, dict[str, list[str]] | None] = {}
        for commit in commits:
            parent = git("rev-parse", f"{commit}^").strip()
            for c in (commit, parent):
                if c not in cache:
                    cache[c] = keys_at(c, Path(scratch))
            after, before = cache[commit], cache[parent]
            if after is None or before is None:
                found.unreadable.append(commit[:12])
                continue
            both = sorted(before.keys() & after.keys())
            old = [e for e in both if before[e][0] != after[e][0]]
            new = [e for e in both if before[e][1] != after[e][1]]
            found.events["code_hash"] += len(old)
            found.events["recipe"] += len(new)
            found.per_commit.append({"commit": commit[:12], "code_hash": old, "recipe": new})
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m verifier.replay", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=60)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    found = replay(args.commits)
    if args.format == "json":
        print(json.dumps(asdict(found), indent=2))
        return 0
    for row in found.per_commit:
        if row["code_hash"] or row["recipe"]:
            staled = " ".join(row["recipe"])
            print(f"{row['commit']}  code hash {len(row['code_hash']):2}  recipe {len(row['recipe']):2}  {staled}")
    events = found.events
    print(
        f"{found.commits} commits ({len(found.unreadable)} unreadable): staleness events "
        f"{events['code_hash']} under the code hash, {events['recipe']} under the recipe"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
