"""Run by test_private_addresses.py inside a private network namespace (`unshare -n`, as root), where
PUBLIC is a public address on the namespace's own loopback: the link checker is run as an author runs
it (no local allowance) against a public server that redirects into the namespace's internal services
(loopback in every spelling, the cloud metadata address, a private address, IPv6 loopback). Prints
one JSON object: each URL's status and detail, and the paths each internal service was asked for."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from functools import partial
from http.server import ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent / "src"), str(HERE.parent)]

from cudagloss.links.checker import CheckerOptions, check_urls  # noqa: E402
from cudagloss.model.addresses import LOCAL_ENV  # noqa: E402
from localserver import Ok, Redirect  # noqa: E402

PUBLIC = "93.184.215.14"
INSIDE = {
    "127.0.0.1": ["127.0.0.1", "0x7f.0.0.1", "2130706433", "[::ffff:127.0.0.1]", "127.1", "0177.0.0.1", "localhost"],
    "169.254.169.254": ["169.254.169.254", "0xa9fea9fe", "[::ffff:a9fe:a9fe]"],
    "10.9.8.7": ["10.9.8.7", "012.9.8.7"],
    "::1": ["[::1]", "[0:0:0:0:0:0:0:1]"],
}
HITS: dict[str, list[str]] = {address: [] for address in INSIDE}


class Internal(Ok):
    def do_GET(self) -> None:
        HITS[self.server.server_address[0]].append(self.path)  # type: ignore[index]
        Ok.do_HEAD(self)  # (Ok's GET calls HEAD, which is this method here)

    do_HEAD = do_GET


class Server6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


def serve(address: str, handler: object) -> int:
    kind = Server6 if ":" in address else ThreadingHTTPServer
    httpd = kind((address, 0), handler)  # type: ignore[arg-type]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return int(httpd.server_address[1])


def main() -> None:
    os.environ.pop(LOCAL_ENV, None)  # as an author runs it: nothing counts as local
    urls = {f"http://{PUBLIC}:{serve(PUBLIC, Ok)}/page": "public page"}
    for address, spellings in INSIDE.items():
        port = serve(address, Internal)
        for spelling in spellings:
            target = f"http://{spelling}:{port}"
            urls[f"http://{PUBLIC}:{serve(PUBLIC, partial(Redirect, target=target))}/to"] = spelling
    results = check_urls(list(urls), CheckerOptions(retries=0))
    report = {urls[url]: [r.status.value, r.detail] for url, r in results.items()}
    # An intranet allowed as a source (CUDAGLOSS_LOCAL_SOURCES) is still no public page's destination;
    # a source that is itself local may lead there.
    os.environ[LOCAL_ENV] = "10.9.8.7/32"
    inside = f"http://10.9.8.7:{serve('10.9.8.7', Internal)}"
    allowed = {
        f"http://{PUBLIC}:{serve(PUBLIC, partial(Redirect, target=inside))}/to": "allowed: public to intranet",
        f"http://10.9.8.7:{serve('10.9.8.7', partial(Redirect, target=inside))}/to": "allowed: intranet to intranet",
    }
    results = check_urls(list(allowed), CheckerOptions(retries=0))
    report.update({allowed[url]: [r.status.value, r.detail] for url, r in results.items()})
    print(json.dumps({"results": report, "hits": HITS}))


if __name__ == "__main__":
    main()
