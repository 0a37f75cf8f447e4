"""make's variables are data (issue 27, class 6): ARGS, EXPERIMENT and DEVICES reach the command
through the environment, split into words with globbing off, and never run: a `;`, backticks,
`$(shell ...)` or `$(...)` in them is text. The real Makefile and make, in a copy of the project."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from conftest import ROOT

HOSTILE = [
    "$(shell touch {p})",
    "`touch {p}`",
    "$$(touch {p})",
    "x; touch {p}",
    "x && touch {p}",
    "x\ntouch {p}",
    "$${{IFS}}touch$${{IFS}}{p}",
]


def test_args_experiment_and_devices_are_never_run(make_copy: tuple[Path, list[str]]) -> None:
    root, make = make_copy
    pwned = root.parent / "pwned"
    procs = []
    for i, template in enumerate(HOSTILE):
        value = template.format(p=f"{pwned}{i}")
        for target, assignment in (
            ("verify", f"EXPERIMENT={value}"),
            ("verify", f"DEVICES={value}"),
            ("verify", f"ARGS={value}"),
            ("links", f"ARGS=--no-stamp {value}"),
            ("collect", f"ARGS={value}"),
        ):
            extra = ["DIRS=nowhere"] if target == "collect" else []
            command = [*make, target, assignment, *extra]
            procs.append(subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for proc in procs:
        proc.communicate(timeout=120)
    assert not list(root.parent.glob("pwned*")), "a make variable ran as code"


def test_args_still_split_into_words(make_copy: tuple[Path, list[str]]) -> None:
    root, make = make_copy
    shutil.copytree(ROOT / "verifier", root / "verifier", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__"))
    run = subprocess.run(
        [*make, "verify", "ARGS=--list --repeats 3"], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0].endswith("-m verifier --list --repeats 3")
    assert "memory-bandwidth" in run.stdout
