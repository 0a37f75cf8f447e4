"""What the benchmarks share: where results go, what machine they ran on, and the table.

Each benchmark prints its own figures and also writes bench/results/<name>.json (atomic).
`python bench/report.py` turns the latest of those into bench/RESULTS.md, the table the
README links to, so a figure is never copied by hand.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(os.path.abspath(__file__)).parent.parent
"""The checkout, as named: never resolved through a committed bench link (refuse_committed_links)."""
RESULTS = Path(os.environ.get("BENCH_RESULTS") or ROOT / "bench" / "results")
sys.path.insert(0, str(ROOT / "src"))

from cudagloss.files.atomic import write_text_atomic  # noqa: E402
from cudagloss.files.inside import first_link, first_link_in, link_diagnostic, refuse_links  # noqa: E402


def refuse_committed_links(*names: str) -> None:
    """Exit with one line (status 1) where bench/, or a file or folder of the repository that a
    benchmark reads or copies (names, from ROOT), a folder above it or anything below it, is a
    symbolic link a pull request may have committed: its files would be read, measured and
    published from anywhere. The rule every read follows (cudagloss.files.inside)."""
    for name in ("bench", *names):
        shown = first_link(ROOT / name, ROOT) if name == "bench" else first_link_in(ROOT / name, ROOT)
        if shown is not None:
            print(link_diagnostic(shown, "what a benchmark reads").format(), file=sys.stderr)
            raise SystemExit(1)


def machine() -> str:
    """'2 CPUs, Linux 6.1 x86_64, Python 3.11.7' and the CPU model where Linux says it."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cpus = f"{os.cpu_count()} CPUs" + (f" ({model})" if model else "")
    return f"{cpus}, {platform.system()} {platform.release()} {platform.machine()}, Python {platform.python_version()}"


def git_commit() -> str:
    """VERIFY_GIT_COMMIT where set (a copy on a GPU node may carry a stale .git), else git's."""
    if os.environ.get("VERIFY_GIT_COMMIT"):
        return os.environ["VERIFY_GIT_COMMIT"][:7]
    run = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False)
    return run.stdout.strip() or "unknown"


def save(name: str, rows: list[dict[str, Any]], *, notes: str = "", where: str | None = None) -> Path:
    """Write bench/results/<name>.json: the rows (each: what, figure, target, met), with
    the date, machine and commit."""
    data = {
        "benchmark": name,
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": where or machine(),
        "commit": git_commit(),
        "rows": rows,
        "notes": notes,
    }
    path = RESULTS / f"{name}.json"
    refuse_links(path, ROOT)  # never through a committed link
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return path


def row(what: str, figure: str, target: str = "", met: bool | None = None) -> dict[str, Any]:
    return {"what": what, "figure": figure, "target": target, "met": met}
