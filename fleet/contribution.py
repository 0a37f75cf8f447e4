"""The check a contributed measurement folder gets in its pull request (.github/workflows/contribution.yml).

    python3 fleet/contribution.py BASE HEAD > verdict.md

Run in a checkout of the base branch: this code and `cudagloss collect` are the base's, never the
pull request's. The pull request's commits are read as data only, through git (`git diff`,
`git ls-tree`, `git cat-file`): nothing of it is checked out, imported or run. It must add or
change files under one folder, contributed/<node>/, laid out as `make measure` writes it
(<experiment>/<node>.json, or <node>~<stamp>.json for an earlier run of the card), each a plain
file of at most MAX_FILE bytes; those files are copied out to a private folder and `cudagloss
collect --dry-run` checks them against measurements/ as a merge would (the card's identity, the
recipe, every value, against the card's own last run). The verdict is Markdown for the pull
request's comment, the report in a code block; exit 0 when collect would merge the folder.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from cudagloss.model.measurement_rules import is_node_name  # noqa: E402

FOLDER = "contributed"
MAX_FILE = 4 << 20
"""The largest measurement file taken (the committed ones are at most a few hundred KiB)."""
MAX_FILES = 400
MAX_REPORT = 60_000
"""Characters of collect's report put in the comment (GitHub takes 65,536)."""
TIMEOUT_S = 600
SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
PATH = re.compile(r"contributed/([^/]{1,100})/([a-z0-9]+(?:-[a-z0-9]+){0,9})/([^/]{1,140})\.json")


REPO = ROOT
"""The repository the pull request's commits are read from: this checkout (--repo for a test's)."""


def git(*args: str) -> bytes:
    """A git command's output in REPO; RuntimeError with its first error line."""
    run = subprocess.run(["git", *args], cwd=REPO, capture_output=True, timeout=TIMEOUT_S)
    if run.returncode != 0:
        raise RuntimeError(f"git {args[0]} failed: {run.stderr.decode(errors='replace').strip()[:300]}")
    return run.stdout


def problems_of(changed: list[tuple[str, str]]) -> tuple[str | None, list[str]]:
    """The one node the changes are under, and every change that is not a contributed run of it."""
    nodes: set[str] = set()
    problems = []
    for status, path in changed[:MAX_FILES]:
        found = PATH.fullmatch(path)
        node = found[1] if found else ""
        run = found[3] if found else ""
        if not found or not is_node_name(node) or run.split("~", 1)[0] != node:
            problems.append(f"{path!r}: not a file of contributed/<node>/<experiment>/<node>.json")
        elif status not in ("A", "M"):
            problems.append(
                f"{path!r}: {'deleted' if status == 'D' else 'changed as ' + status}; only adding is checked"
            )
        nodes.add(node)
    if len(changed) > MAX_FILES:
        problems.append(f"{len(changed):,} files changed; a contribution is at most {MAX_FILES}")
    if len(nodes) > 1:
        problems.append(f"files of {len(nodes)} nodes ({', '.join(sorted(nodes)[:5])}); one pull request, one card")
    return (next(iter(nodes)) if len(nodes) == 1 else None), problems


def copy_out(head: str, node: str, into: Path) -> list[str]:
    """The head's contributed/<node>/ files, plain files only, written under into; the problems."""
    problems = []
    listing = git("ls-tree", "-r", "-z", "--long", head, "--", f"{FOLDER}/{node}/").split(b"\0")
    for entry in (e.decode("utf-8", errors="replace") for e in listing[: MAX_FILES + 1] if e):
        meta, _, path = entry.partition("\t")
        mode, kind, sha, size = meta.split()
        if not PATH.fullmatch(path) or mode != "100644" or kind != "blob" or not SHA.fullmatch(sha):
            problems.append(f"{path!r}: mode {mode} {kind}; only plain files (100644) are taken")
            continue
        if not size.isdigit() or int(size) > MAX_FILE:
            problems.append(f"{path!r}: {size} bytes, more than {MAX_FILE:,}")
            continue
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(git("cat-file", "blob", sha))
    return problems


def fence(text: str) -> str:
    """text in a Markdown code block whose fence no backtick run in it can close."""
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}text\n{text}\n{ticks}"


def check(base: str, head: str) -> tuple[bool, str]:
    """(passed, the verdict in Markdown)."""
    for sha in (base, head):
        if not SHA.fullmatch(sha):
            return False, f"**Contribution check: not run.** {sha[:80]!r} is not a commit id."
    raw = git("diff", "--name-status", "-z", "--no-renames", f"{base}...{head}").split(b"\0")
    fields = [f.decode("utf-8", errors="replace") for f in raw if f]
    node, problems = problems_of(list(zip(fields[0::2], fields[1::2], strict=False)))
    with tempfile.TemporaryDirectory(prefix="cudagloss-contribution-") as private:
        if node is not None and not problems:
            problems = copy_out(head, node, Path(private))
        if node is None or problems:
            said = "\n".join(f"- {p}" for p in problems[:50]) or "- no contributed files"
            return False, f"**Contribution check: not taken.** A maintainer reviews it by hand.\n\n{fence(said)}"
        run = subprocess.run(
            [sys.executable, "-m", "cudagloss", "collect", "--dry-run", str(Path(private) / FOLDER / node)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    report = (run.stdout + run.stderr).replace(private, "<contributed>")[:MAX_REPORT]
    passed = run.returncode == 0
    word = "collect would merge it" if passed else f"collect refused it (exit {run.returncode})"
    head_line = f"**Contribution check: {word}.** Node `{node}`; the report of `cudagloss collect --dry-run`:"
    return passed, f"{head_line}\n\n{fence(report)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fleet/contribution.py", description=__doc__.split("\n")[0])
    parser.add_argument("base")
    parser.add_argument("head")
    parser.add_argument("--repo", type=Path, default=ROOT, help="the git repository holding both commits (this one)")
    args = parser.parse_args(argv)
    global REPO
    REPO = args.repo
    try:
        passed, verdict = check(args.base, args.head)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        passed, verdict = False, f"**Contribution check: not run.** {fence(str(exc))}"
    print(verdict)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
