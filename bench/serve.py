"""Benchmark: the edit loop under `mkdocs serve` at 1,000 and 5,000 terms.

It writes the synthetic corpus of bench/build.py, starts a real `mkdocs serve` on it, then
edits one term file's body several times. Each time it measures the wall time from the
file being saved to the edited page, with the edit, being served over HTTP. Two ways, in
the same run:
- dirty: what `make serve` runs (`--dirty`): MkDocs rebuilds only the pages the glossary
  hooks report as changed;
- full: plain `mkdocs serve`, which rebuilds every page after every edit.

    python bench/serve.py [--sizes 1000,5000] [--edits 5] [--full-max 1000]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.error import URLError
from urllib.request import urlopen

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from build import FIXTURE_MEAS, config, write_corpus
from common import refuse_committed_links, row, save

CACHE = tempfile.mkdtemp(prefix="bench-serve-cache-")
"""The preview's check cache: a folder of its own, as a user's is (one beside the terms, in
their repository, would not be used: see cudagloss.load.cache)."""
START_S = 600.0
EDIT_S = 120.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> str:
    try:
        with urlopen(url, timeout=10) as response:
            return str(response.read().decode("utf-8"))
    except (URLError, ConnectionError, TimeoutError):
        return ""


def _wait(url: str, marker: str, limit_s: float, server: subprocess.Popen[bytes]) -> float:
    """Poll url every 10 ms until it holds marker; return when that happened."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"mkdocs serve exited with {server.returncode}")
        if marker in _get(url):
            return time.monotonic()
        time.sleep(0.01)
    raise SystemExit(f"{url} did not show {marker!r} within {limit_s:g} s")


def edit_loop(work: Path, terms: Path, *, dirty: bool, edits: int) -> tuple[list[float], float]:
    """Latencies of `edits` saves of one term, and the time the first build took."""
    folder = work / ("dirty" if dirty else "full")
    folder.mkdir()
    cfg = config(folder, hooks=True, nav=None, terms=terms)
    cfg.write_text(cfg.read_text(encoding="utf-8") + f"\nwatch:\n  - {terms}\n", encoding="utf-8")
    port = _free_port()
    command = [sys.executable, "-m", "mkdocs", "serve", "-q", "-f", str(cfg), "--dev-addr", f"127.0.0.1:{port}"]
    started = time.monotonic()
    server = subprocess.Popen(
        [*command, "--livereload", *(["--dirty"] if dirty else [])],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "CUDAGLOSS_CACHE_DIR": CACHE},
    )
    slug = "t00500"
    page = f"http://127.0.0.1:{port}/terms/{slug}/"
    path = terms / f"{slug}.yaml"
    latencies: list[float] = []
    try:
        first = _wait(page, "synthetic term number 500", START_S, server) - started
        time.sleep(1.0)  # let the watcher take its first look at every file
        for k in range(edits):
            marker = f"edited-{'dirty' if dirty else 'full'}-{k}"
            text = re.sub(r"(body: \|\n  )", rf"\1{marker} ", path.read_text(encoding="utf-8"), count=1)
            saved = time.monotonic()
            path.write_text(text, encoding="utf-8")
            latencies.append(_wait(page, marker, EDIT_S, server) - saved)
            time.sleep(1.0)  # the next edit starts from a quiet server
    finally:
        server.terminate()
        server.wait(timeout=30)
    return latencies, first


def main() -> int:
    refuse_committed_links("mkdocs.yml", "docs", "overrides", "templates", str(FIXTURE_MEAS))  # before anything is read
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,5000")
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--full-max", type=int, default=1000, help="the plain full-rebuild loop only up to this size")
    args = parser.parse_args()
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        found: dict[str, tuple[list[float], float]] = {}
        with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
            work = Path(tmp)
            for dirty in (True, False) if n <= args.full_max else (True,):
                terms = work / f"terms-{'dirty' if dirty else 'full'}"
                write_corpus(terms, n)
                found["dirty" if dirty else "full"] = edit_loop(work, terms, dirty=dirty, edits=args.edits)
                shutil.rmtree(terms)
        print(f"{n} terms, {args.edits} edits of one term's body; save → edited page served")
        print(f"{'mode':>6} {'first build s':>14} {'median s':>9} {'max s':>7}  every edit")
        for mode, (lat, first) in found.items():
            every = " ".join(f"{x:.2f}" for x in lat)
            print(f"{mode:>6} {first:>14.1f} {statistics.median(lat):>9.2f} {max(lat):>7.2f}  {every}")
        dirty_s = statistics.median(found["dirty"][0])
        rows.append(
            row(
                f"edit loop, {n} terms (make serve, --dirty): save → page served, median of {args.edits}",
                f"{dirty_s:.2f} s (max {max(found['dirty'][0]):.2f} s)",
                "≤ 1 s at 5,000" if n >= 5000 else "≤ 1 s",
                dirty_s <= 1.0,
            )
        )
        if "full" in found:
            full_s = statistics.median(found["full"][0])
            rows.append(
                row(
                    f"{n} terms, every page rebuilt (plain mkdocs serve)",
                    f"{full_s:.2f} s ({dirty_s / full_s:.2f}× of it with --dirty)",
                )
            )
    shutil.rmtree(CACHE, ignore_errors=True)
    save("serve", rows, notes=f"The plain full-rebuild loop runs only up to {args.full_max} terms.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
