"""Sources and redirects into the checker's own network (issue 27, class 4): loopback, private,
link-local and unspecified addresses in every spelling are refused by make check, never
followed by a redirect, and never connected to when a name resolves there. Real servers on
127.0.0.1 (allowed, as the tests' own) and 127.0.0.2 (the internal service nobody may reach)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from conftest import ROOT, cudagloss
from cudagloss.links.checker import CheckerOptions, check_urls
from cudagloss.links.client import PrivateAddress, public_addresses
from cudagloss.links.network import answers
from cudagloss.links.status import LinkStatus
from cudagloss.model.addresses import LOCAL_ENV
from localserver import Ok, Redirect

SPELLINGS = ["127.0.0.2", "0x7f.0.0.2", "2130706434", "[::ffff:127.0.0.2]", "127.0.2"]
"""One internal address as a URL may spell it; the C resolver reads every one as 127.0.0.2."""


class Internal(Ok):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Internal.hits.append(self.path)
        super().do_GET()


@contextmanager
def serving(address: str, handler: object) -> Iterator[int]:
    httpd = ThreadingHTTPServer((address, 0), handler)  # type: ignore[arg-type]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield int(httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_public_page_that_redirects_inside_is_not_followed_in_any_spelling() -> None:
    Internal.hits.clear()
    with serving("127.0.0.2", Internal) as inside:
        urls = {}
        servers = []
        try:
            for spelling in SPELLINGS:
                server = serving("127.0.0.1", partial(Redirect, target=f"http://{spelling}:{inside}"))
                servers.append(server)
                urls[spelling] = f"http://127.0.0.1:{server.__enter__()}/secret"
            results = check_urls(list(urls.values()), CheckerOptions(retries=0))
        finally:
            for server in servers:
                server.__exit__(None, None, None)
        with socket.create_connection(("127.0.0.2", inside), timeout=5):
            pass  # the internal service is there and answers: only the checker never reached it
    for spelling, url in urls.items():
        result = results[url]
        assert result.status is LinkStatus.INVALID, (spelling, result)
        assert "127.0.0.2, a loopback address" in result.detail, (spelling, result.detail)
    assert Internal.hits == [], "the checker reached the internal service"


def test_a_name_that_resolves_inside_is_not_connected_to(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOCAL_ENV)
    with pytest.raises(PrivateAddress, match="localhost resolves to no public address"):

        async def resolve() -> object:
            return await public_addresses("localhost", 80)

        asyncio.run(resolve())
    with serving("127.0.0.1", Ok) as port:
        assert not answers("localhost", port, time.monotonic() + 5), "the offline probe knocked on it"
        monkeypatch.setenv(LOCAL_ENV, "127.0.0.1/32")
        assert answers("127.0.0.1", port, time.monotonic() + 60)  # the deadline only ends a hang


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "0x7f.1",
        "2130706433",
        "[::ffff:127.0.0.1]",
        "[::1]",
        "169.254.169.254",
        "10.1.2.3",
        "192.168.0.10",
        "0.0.0.0",
        "localhost",
        "metadata.localhost",
    ],
)
def test_make_check_refuses_a_source_inside_the_network(tmp_path: Path, host: str) -> None:
    terms = tmp_path / "terms"
    terms.mkdir()
    shutil.copy(ROOT / "terms" / "_sections.yaml", terms)
    text = (ROOT / "terms" / "ptx.yaml").read_text(encoding="utf-8")
    first = text.index("url: ") + len("url: ")
    end = text.index("\n", first)
    (terms / "ptx.yaml").write_text(text[:first] + f"http://{host}:8080/admin" + text[end:], encoding="utf-8")
    env_run = cudagloss  # the CLI as an author runs it, without the tests' local allowance
    import os

    saved = os.environ.pop(LOCAL_ENV)
    try:
        run = env_run(tmp_path, "check", "--no-cache", "terms")
    finally:
        os.environ[LOCAL_ENV] = saved
    assert run.returncode == 1, run.stdout
    assert "a source is a public page" in run.stderr and "Traceback" not in run.stderr, run.stderr


@pytest.mark.netns
def test_in_a_private_network_a_public_host_cannot_redirect_the_checker_inside() -> None:
    """The checker as an author runs it (no local allowance), in a network namespace of its own where a
    public address answers: its redirects into loopback (every spelling), the metadata address, a private
    address and IPv6 loopback are refused, and no internal service is ever asked for anything."""
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs root, unshare and ip to make a private network namespace")
    setup = (
        "ip link set lo up && ip addr add 93.184.215.14/32 dev lo && ip addr add 169.254.169.254/32 dev lo"
        ' && ip addr add 10.9.8.7/32 dev lo && exec "$0" "$1"'
    )
    run = subprocess.run(
        ["unshare", "-n", "sh", "-c", setup, sys.executable, str(Path(__file__).with_name("netns_probe.py"))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if run.returncode != 0 and "Operation not permitted" in run.stderr:
        pytest.skip(f"no network namespace here: {run.stderr.strip()}")
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout)
    results = found["results"]
    assert results.pop("public page")[0] == "ok", found  # the checker does reach a public host here
    assert results.pop("allowed: intranet to intranet")[0] == "redirected", found  # a local source may lead inside
    status, detail = results.pop("allowed: public to intranet")
    assert status == "invalid" and "a public page redirects to a host that" in detail, detail
    assert found["hits"]["10.9.8.7"] == ["/to"], found["hits"]  # only the intranet source's own redirect
    found["hits"]["10.9.8.7"] = []
    assert len(results) == 14  # every spelling in netns_probe.INSIDE
    for spelling, (status, detail) in results.items():
        assert status == "invalid" and "which is invalid: leads to a host that" in detail, (spelling, status, detail)
    assert all(hits == [] for hits in found["hits"].values()), found["hits"]


@pytest.mark.parametrize(
    ("current", "target", "refused"),
    [
        ("https://docs.nvidia.com/a", "http://10.0.0.5/b", True),
        ("https://docs.nvidia.com/a", "http://127.0.0.1:8000/b", True),
        ("https://docs.nvidia.com/a", "http://[::1]/b", True),
        ("https://docs.nvidia.com/a", "http://localhost/b", True),
        ("https://docs.nvidia.com/a", "https://developer.nvidia.com/b", False),
        ("http://127.0.0.1:8000/a", "http://127.0.0.1:8001/b", False),  # a local source may lead inside
        ("http://10.0.0.5/a", "https://docs.nvidia.com/b", False),
    ],
)
def test_a_public_page_may_not_redirect_inward_even_where_local_sources_are_allowed(
    current: str, target: str, refused: bool
) -> None:
    from cudagloss.model.addresses import redirect_inward

    assert (redirect_inward(current, target) is not None) is refused
