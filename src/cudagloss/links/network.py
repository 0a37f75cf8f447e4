"""Is there a network here at all? Decided once, before any URL is checked, apart from --timeout.

Judging from the checks' results cannot tell "offline" from "slow": with `--timeout 1` and no
network, the retries after each failed DNS lookup outlast the second, every URL reads as a
timeout (which fails nothing), and the run would go on to stamp. So the run asks first, on
its own clock: does any cited host resolve and answer on its port? An answer is a TCP
connection accepted or refused (a reset comes from a host, so packets go and come back); a
slow server accepts the connection before it is slow, and stays a 'timeout' verdict. Hosts
are asked concurrently (most cited first) and the first answer ends the probe, so online it
costs one round trip; offline it costs at most PROBE_SECONDS.

The lookups run on daemon threads: getaddrinfo cannot be cancelled, and a resolver that never
answers must not hold the run (or the interpreter's exit) past the deadline.
"""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterable
from urllib.parse import urlsplit

from cudagloss.model.addresses import address_problem
from cudagloss.model.urls import url_problem

PROBE_SECONDS = 10.0
"""How long the probe waits for any host to answer; independent of --timeout."""
PROBE_WORKERS = 16
ADDRESSES_PER_HOST = 2


def endpoints(urls: Iterable[str]) -> list[tuple[str, int]]:
    """(host, port) of every valid http(s) URL, the most cited first."""
    counts: Counter[tuple[str, int]] = Counter()
    for url in urls:
        if url_problem(url) is not None:
            continue
        try:
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:  # a port out of range or not a number
            continue
        if parts.hostname:
            counts[(parts.hostname.lower(), port)] += 1
    return [endpoint for endpoint, _ in counts.most_common()]


def answers(host: str, port: int, deadline: float) -> bool:
    """host resolves and one of its first addresses accepts or refuses a TCP connection
    before deadline (a time.monotonic() value)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError):  # gaierror is an OSError
        return False
    public = [info for info in infos if address_problem(str(info[4][0])) is None]  # never probe a private one
    for family, kind, proto, _name, address in public[:ADDRESSES_PER_HOST]:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.settimeout(left)
                sock.connect(address)
            return True
        except ConnectionRefusedError:
            return True
        except OSError:  # unreachable, timed out, no such family here
            continue
    return False


def network_answers(urls: Iterable[str], seconds: float = PROBE_SECONDS) -> bool:
    """False only when no host of urls answers within seconds: there is no network here.
    True at once when there is nothing to ask (no valid URL)."""
    todo = endpoints(urls)
    if not todo:
        return True
    deadline = time.monotonic() + seconds
    work: queue.SimpleQueue[tuple[str, int]] = queue.SimpleQueue()
    for endpoint in todo:
        work.put(endpoint)
    answered, settled = threading.Event(), threading.Event()
    left = [len(todo)]
    lock = threading.Lock()

    def worker() -> None:
        while not answered.is_set() and time.monotonic() < deadline:
            try:
                host, port = work.get_nowait()
            except queue.Empty:
                return
            if answers(host, port, deadline):
                answered.set()
                settled.set()
            with lock:
                left[0] -= 1
                if left[0] == 0:
                    settled.set()

    for _ in range(min(PROBE_WORKERS, len(todo))):
        threading.Thread(target=worker, name="cudagloss-probe", daemon=True).start()
    settled.wait(max(0.0, deadline - time.monotonic()))
    return answered.is_set()
