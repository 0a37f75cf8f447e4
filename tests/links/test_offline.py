"""Offline is decided apart from --timeout (issue 16): with no network, `links --timeout 1`
once read every URL as a timeout, filled every byline and exited 0. Real parts: a real git
repository, real `cudagloss links` processes, names under .invalid (which never resolve,
RFC 6761, as on a machine with no DNS) and a real slow server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("idna")

from conftest import FIXTURES, cudagloss
from cudagloss.links.network import endpoints, network_answers
from localserver import Ok, running
from scaffold import scaffold


def a_term(name: str, *urls: str) -> str:
    """The scaffold's text (every byline field pending), citing urls."""
    sources = "".join(f"  - title: Source\n    url: {url}\n" for url in urls)
    return scaffold(name, sources)


def committed(root: Path, *urls: str) -> Path:
    """root/terms with two terms citing urls, committed: history could fill every byline."""
    terms = root / "terms"
    terms.mkdir(parents=True)
    shutil.copy(FIXTURES / "good" / "_sections.yaml", terms)
    (terms / "alpha.yaml").write_text(a_term("Alpha", *urls), encoding="utf-8")
    (terms / "beta.yaml").write_text(a_term("Beta", *reversed(urls)), encoding="utf-8")
    git = ["git", "-c", "user.name=Ada Author", "-c", "user.email=a@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "terms"], cwd=root, check=True)
    return terms


def snapshot(terms: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(terms.iterdir())}


OFFLINE_URLS = ("https://docs.example.invalid/a", "https://blog.example.invalid/b", "http://cdn.example.invalid:8080/c")


@pytest.mark.parametrize("timeout", ["1", "0.2"])
def test_offline_is_exit_4_and_changes_nothing_whatever_the_timeout(tmp_path: Path, timeout: str) -> None:
    terms = committed(tmp_path, *OFFLINE_URLS)
    before = snapshot(terms)
    run = cudagloss(tmp_path, "links", "--timeout", timeout, "terms")
    assert run.returncode == 4, (run.stdout, run.stderr)
    assert run.stderr.count("\n") == 1 and "no network here" in run.stderr, run.stderr
    assert run.stdout == ""
    assert snapshot(terms) == before  # no byline filled, no stamp


class Sleepy(Ok):
    """Online but slow: no answer until the test is done (HELD is set), however long it takes."""

    def do_HEAD(self) -> None:
        HELD.wait(120)  # the bound only ends a thread a failed test left
        with contextlib.suppress(OSError):  # the checker has hung up by then
            super().do_HEAD()


HELD = threading.Event()


@pytest.fixture(scope="module")
def sleepy() -> Iterator[str]:
    with running(Sleepy) as url:
        try:
            yield url
        finally:
            HELD.set()


def test_a_slow_server_online_is_still_a_timeout_verdict(tmp_path: Path, sleepy: str) -> None:
    terms = committed(tmp_path, f"{sleepy}/one", f"{sleepy}/two", "https://gone.example.invalid/x")
    run = cudagloss(tmp_path, "links", "--timeout", "1", "--format", "json", "terms")
    assert run.returncode == 0, run.stderr  # timeouts fail nothing; the .invalid host is one URL among others
    results = {r["url"]: r["result"] for r in json.loads(run.stdout)["results"]}
    assert results[f"{sleepy}/one"] == results[f"{sleepy}/two"] == "timeout"
    alpha = (terms / "alpha.yaml").read_text(encoding="utf-8")
    assert "written_by: Ada Author" in alpha and "    checked_on" not in alpha  # online: history fills, no stamp


def test_the_probe_counts_a_refused_connection_as_an_answer() -> None:
    with socket.socket() as s:  # a port nothing listens on: the kernel answers with a reset
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    assert network_answers([f"http://127.0.0.1:{closed}/"], seconds=5)
    assert not network_answers(list(OFFLINE_URLS), seconds=5)
    assert network_answers([]) and network_answers(["ftp://x.example.invalid/", "javascript:alert(1)"])


def test_endpoints_are_each_host_and_port_once_the_most_cited_first() -> None:
    urls = ["https://a.example/1", "https://b.example/1", "https://B.example/2", "http://b.example:8080/", "nonsense"]
    assert endpoints(urls) == [("b.example", 443), ("a.example", 443), ("b.example", 8080)]
