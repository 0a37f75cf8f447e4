"""The link checkers bench/links.py compares against (lychee, LinkChecker, linkinator): installed
into bench/.tools from what bench/pins/ pins by hash, and checked before each is run (issue 39).

A pull request cannot get a file it committed run as one of them: bench/.tools is refused when
it, or a folder above it, is a symbolic link, or when git tracks anything under it (one line
each, nothing installed or run). Each tool gets its own folder, made afresh from its pins (pip
--require-hashes --only-binary, npm ci from a lock file with integrity hashes, no install
scripts); a seal beside it records the digest of the pins and of every file of the folder as
installed. verified() runs nothing whose folder no longer matches its seal, or whose executable
lies outside it; a tool not installed is reported as such by the benchmark, not faked.

    python3 bench/tools.py     (make bench-tools) install what is missing or no longer as pinned
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from cudagloss.files.inside import first_link  # noqa: E402

TOOLS = ROOT / "bench" / ".tools"
PINS = ROOT / "bench" / "pins"
PIP = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--require-hashes", "--no-deps"]


@dataclass(frozen=True)
class Tool:
    """One tool: its folder under bench/.tools, its executable in it, the pin files it comes from."""

    name: str
    exe: str
    pins: tuple[str, ...]

    @property
    def folder(self) -> Path:
        return TOOLS / self.name

    @property
    def seal(self) -> Path:
        return TOOLS / f"{self.name}.sealed.json"


NPM = ("linkinator/package.json", "linkinator/package-lock.json")
KNOWN = {
    "lychee": Tool("lychee", "bin/lychee", ("lychee.txt",)),
    "linkchecker": Tool("linkchecker", "bin/linkchecker", ("linkchecker.txt",)),
    "linkinator": Tool("linkinator", "node_modules/.bin/linkinator", NPM),
}


def refusal() -> str | None:
    """Why nothing under bench/.tools may be installed or run: a link at it or above it, or files
    the repository commits there (a pull request's); None when it is the project's own."""
    shown = first_link(TOOLS, ROOT)
    if shown is not None:
        return f"{shown} is a symbolic link: refusing to install or run tools through it; remove it (git rm)"
    try:
        tracked = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", "--", "bench/.tools"], capture_output=True, check=True
        ).stdout.split(b"\0")[0]
    except (OSError, subprocess.CalledProcessError):
        return None  # not a git checkout: nothing a pull request committed
    if tracked:
        return (
            f"{os.fsdecode(tracked)}: the repository commits files under bench/.tools; refusing to install or run "
            "tools there (make bench-tools installs them from bench/pins): git rm -r --cached bench/.tools"
        )
    return None


def pins_digest(tool: Tool) -> str:
    """The digest of the pin files the tool is installed from."""
    digest = hashlib.sha256()
    for name in tool.pins:
        digest.update(name.encode() + b"\0" + (PINS / name).read_bytes() + b"\0")
    return digest.hexdigest()


def tree_digest(folder: Path) -> str:
    """The digest of every entry under folder, no link followed: its path, kind, executable bit,
    and its bytes (a file) or its target (a link)."""
    digest = hashlib.sha256()
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted([*files, *(d for d in dirs if os.path.islink(os.path.join(top, d)))]):
            path = os.path.join(top, name)
            st = os.lstat(path)
            digest.update(os.path.relpath(path, folder).encode("utf-8", "surrogateescape") + b"\0")
            if os.path.islink(path):
                digest.update(b"L" + os.readlink(path).encode("utf-8", "surrogateescape"))
            elif os.path.isfile(path):
                file = hashlib.sha256()
                with open(path, "rb", buffering=0) as handle:
                    while chunk := handle.read(1 << 20):
                        file.update(chunk)
                digest.update(b"F" + bytes([bool(st.st_mode & 0o111)]) + file.digest())
            else:
                digest.update(b"?")
            digest.update(b"\0")
    return digest.hexdigest()


@functools.cache
def verified(name: str) -> str | None:
    """The tool's executable, when bench/.tools is the project's own, the tool's folder is as its
    seal records it, installed from the pins committed now, and the executable (links resolved)
    is a file in that folder; None otherwise, said on standard error."""
    tool = KNOWN[name]
    if (why := refusal()) is None:
        why = _mismatch(tool)
    if why is None:
        return str(tool.folder / tool.exe)
    print(f"{name}: not run: {why}", file=sys.stderr)
    return None


def _mismatch(tool: Tool) -> str | None:
    """Why the tool's folder is not what make bench-tools installed from the pins; None when it is."""
    if not tool.seal.is_file() or tool.seal.is_symlink() or not tool.folder.is_dir() or tool.folder.is_symlink():
        return "not installed (make bench-tools)"
    try:
        seal = json.loads(tool.seal.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "its seal cannot be read (make bench-tools installs it again)"
    if seal.get("pins") != pins_digest(tool):
        return "installed from other pins than bench/pins holds now (make bench-tools installs it again)"
    real, inside = os.path.realpath(tool.folder / tool.exe), os.path.realpath(tool.folder)
    if not (real.startswith(inside + os.sep) and os.path.isfile(real) and os.access(real, os.X_OK)):
        return f"{tool.exe} is not an executable file in bench/.tools/{tool.name}"
    if seal.get("tree") != tree_digest(tool.folder):
        return f"bench/.tools/{tool.name} changed since it was installed (make bench-tools installs it again)"
    return None


def install(tool: Tool) -> None:
    """Make the tool's folder afresh from its pins and seal it; CalledProcessError where it fails."""
    shutil.rmtree(tool.folder, ignore_errors=True)  # never follows a link in it; bench/.tools is none
    tool.seal.unlink(missing_ok=True)
    TOOLS.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if tool.exe.startswith("bin/"):
        subprocess.run([sys.executable, "-m", "venv", str(tool.folder)], check=True)
        pins = [arg for name in tool.pins for arg in ("-r", str(PINS / name))]
        python = str(tool.folder / "bin" / "python")
        subprocess.run([python, *PIP, "--only-binary", ":all:", *pins], check=True, env=env)
    else:
        tool.folder.mkdir()
        for name in tool.pins:
            shutil.copyfile(PINS / name, tool.folder / Path(name).name)
        npm = ["npm", "ci", "--prefix", str(tool.folder), "--ignore-scripts", "--no-audit", "--no-fund", "--silent"]
        subprocess.run(npm, check=True, env=env)
    seal = {"pins": pins_digest(tool), "tree": tree_digest(tool.folder)}
    tool.seal.write_text(json.dumps(seal, indent=1) + "\n", encoding="utf-8")


def main() -> int:
    """Install each tool that is missing or not as pinned; one that fails is reported, not fatal."""
    if (why := refusal()) is not None:
        print(f"make bench-tools: {why}", file=sys.stderr)
        return 2
    for name, tool in KNOWN.items():
        if _mismatch(tool) is None:
            continue
        print(f"installing {name} into bench/.tools/{name} from bench/pins", file=sys.stderr)
        try:
            install(tool)
        except (OSError, subprocess.CalledProcessError) as exc:
            shutil.rmtree(tool.folder, ignore_errors=True)
            print(f"make bench-tools: {name} not installed ({exc}); the benchmark reports it so", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
