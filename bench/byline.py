"""Benchmark: bylines for 1,000 term files from git history, in one git process.

Builds a temporary repository (with `git fast-import`, so building it is quick) holding N
term files, each added by its own commit from one of several authors, with a Reviewed-by
trailer on some later commits. Then it times, in the same run:
- ours: `read_history`, one `git log` pass for every file (counting the git processes);
- the baseline it replaces: one `git log` per file;
- filling the byline fields into every file (`stamp_file`, which writes the values in place),
  and the same again when nothing is left to fill.

    python bench/byline.py [--terms 1000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import refuse_committed_links, row, save

from cudagloss.links import history
from cudagloss.links.stamp import stamp_file

AUTHORS = ["Ada Author", "Brook Writer", "Casey Editor", "Dana Reviewer"]
TERM = """# yaml-language-server: $schema=../schema/term.schema.json
name: Term {i}
title: What is term {i}?
definition: The {i}th synthetic term, one sentence long.
section: compilation
body: |
  A body that mentions term {j}.
sources:
  - title: A source
    url: https://example.com/{i}
byline:
  written_by: pending
  reviewed_by: pending
  written_on: pending
  last_checked_on: pending
"""


def build_repo(root: Path, n: int) -> None:
    """n commits adding one term each, then n // 4 edits with a Reviewed-by trailer."""
    stream: list[bytes] = []
    stamp = 1_700_000_000

    def commit(author: str, message: str, path: str, text: str) -> None:
        nonlocal stamp
        stamp += 60
        data, msg = text.encode(), message.encode()
        email = author.split()[0].lower() + "@example.com"
        stream.append(b"commit refs/heads/main\n")
        stream.append(f"author {author} <{email}> {stamp} +0000\n".encode())
        stream.append(f"committer {author} <{email}> {stamp} +0000\n".encode())
        stream.append(f"data {len(msg)}\n".encode() + msg + b"\n")
        stream.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")

    for i in range(n):
        commit(AUTHORS[i % 3], f"Add term {i}", f"terms/t{i:05d}.yaml", TERM.format(i=i, j=(i + 1) % n))
    for i in range(0, n, 4):
        text = TERM.format(i=i, j=(i + 2) % n)
        commit(AUTHORS[(i + 1) % 3], f"Edit term {i}\n\nReviewed-by: {AUTHORS[3]}", f"terms/t{i:05d}.yaml", text)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=b"".join(stream), check=True)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=root, check=True)


def main() -> int:
    refuse_committed_links()  # before anything is read
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--terms", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-byline-") as tmp:
        root = Path(tmp)
        build_repo(root, args.terms)
        files = sorted((root / "terms").glob("*.yaml"))
        calls = 0
        real_git = history._git

        def counting(*a: object, **k: object) -> str:
            nonlocal calls
            calls += 1
            return real_git(*a, **k)  # type: ignore[arg-type]

        history._git = counting
        t0 = time.perf_counter()
        found = history.read_history(root, "terms")
        ours = time.perf_counter() - t0
        history._git = real_git
        log_calls = calls - 1  # one of them asks whether the clone is shallow
        sample = files[:100]  # the baseline is slow: time a sample and scale it
        t0 = time.perf_counter()
        for path in sample:
            subprocess.run(
                ["git", "log", "--diff-filter=A", "--format=%an %aI", "--", path.relative_to(root).as_posix()],
                cwd=root,
                capture_output=True,
                check=True,
            )
        per_file = (time.perf_counter() - t0) * len(files) / len(sample)
        t0 = time.perf_counter()
        changed = 0
        for path in files:
            h = found[path.relative_to(root).as_posix()]
            fill = {"written_by": h.written_by, "written_on": h.written_on, "reviewed_by": h.reviewed_by}
            changed += stamp_file(path, {}, fill).changed
        fill_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = sum(stamp_file(p, {}, {"written_by": "x"}).changed for p in files)
        again_s = time.perf_counter() - t0
    reviewed = sum(1 for h in found.values() if h.reviewed_by)
    print(f"{args.terms} term files, {args.terms + args.terms // 4} commits; {reviewed} with a Reviewed-by trailer")
    print(f"history, one pass:   {ours:.3f} s, {calls} git processes ({log_calls} git log)")
    scaled = f"{per_file:.3f} s for {len(files)} git processes, scaled from 100"
    print(f"history, per file:   {scaled} ({per_file / ours:.0f}× ours)")
    print(f"fill every byline:   {fill_s:.3f} s ({changed} files written in place, each checked by re-parsing)")
    print(f"fill again (no-op):  {again_s:.3f} s ({again} files written)")
    met = ours < 1.0 and log_calls == 1
    print(f"target: one git process, < 1 s: {'met' if met else 'not met'} (history {ours:.3f} s)")
    save(
        "byline",
        [
            row(f"byline history for {args.terms} files", f"{ours:.3f} s, 1 git log", "one git process, < 1 s", met),
            row("the same, one git log per file (scaled from 100)", f"{per_file:.2f} s ({per_file / ours:.0f}× ours)"),
            row("filling again when nothing is pending", f"{again_s:.3f} s", "< 1 s", again_s < 1.0),
            row(
                f"writing {changed} filled bylines (in place, each re-parsed to check)",
                f"{fill_s:.2f} s",
                "< 1 s",
                fill_s < 1.0,
            ),
            row(
                "history and filling together",
                f"{ours + fill_s:.2f} s",
                "< 1 s",
                ours + fill_s < 1.0,
            ),
        ],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
