"""A public page that redirects to a name resolving inside (issue 39, class 5): where
CUDAGLOSS_LOCAL_SOURCES allows an intranet and loopback as sources, a public page still may not
send the checker there, through a name any more than through an address. Judged on what the
name resolves to when connected, through the real `cudagloss links` (the archive lookup too), in
a network and mount namespace of its own whose /etc/hosts names the addresses
(tests/links/netns_names_probe.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cudagloss.model.addresses import redirect_inward

PROBE = Path(__file__).with_name("netns_names_probe.py")


def probe(tmp_path: Path) -> dict[str, Any]:
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs root, unshare and ip to make a private network namespace")
    sys.path.insert(0, str(PROBE.parent))
    try:
        from netns_names_probe import HOSTS, INTRANET, METADATA, PUBLIC
    finally:
        sys.path.remove(str(PROBE.parent))
    hosts = tmp_path / "hosts"
    hosts.write_text(HOSTS, encoding="utf-8")
    setup = (
        f'mount --bind "{hosts}" /etc/hosts && ip link set lo up'
        f" && ip addr add {PUBLIC}/32 dev lo && ip addr add {INTRANET}/32 dev lo && ip addr add {METADATA}/32 dev lo"
        ' && exec "$0" "$1"'
    )
    run = subprocess.run(
        ["unshare", "-n", "-m", "sh", "-c", setup, sys.executable, str(PROBE)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if run.returncode != 0 and "Operation not permitted" in run.stderr:
        pytest.skip(f"no network or mount namespace here: {run.stderr.strip()}")
    assert run.returncode == 0, run.stderr
    found: dict[str, Any] = json.loads(run.stdout)
    return found


@pytest.mark.netns
def test_a_public_page_cannot_send_the_checker_inside_through_a_name(tmp_path: Path) -> None:
    found = probe(tmp_path)
    results, stamped = found["results"], found["checked_on"]
    assert "Traceback" not in str(found["stderr"]), found["stderr"]
    for label in ("public to intranet name", "public to loopback name", "public name to intranet name"):
        status, detail = results[label]
        assert status == "invalid", (label, status, detail)
        assert "a public page redirects to" in detail and "resolves to no public address" in detail, detail
        assert stamped[label] is False, label
    status, detail = results["public to metadata name"]
    assert status == "invalid" and "169.254.169.254" in detail, detail  # never allowed at all
    status, detail = results["public, public name, intranet name"]
    assert status == "invalid" and "intranet.example" in detail, detail  # a public hop between changes nothing
    # what may go on does: public to public by name, and local pages (by address or by name) to local ones
    assert results["public page"][0] == "ok" and results["public to a public name"][0] == "redirected"
    for label in ("intranet by name", "intranet by name to intranet literal", "intranet literal to intranet name"):
        assert results[label][0] in ("ok", "redirected"), (label, results[label])
        assert stamped[label] is True, label
    # no internal service was asked for anything a public page sent the checker to (the archive's
    # redirect neither), though the intranet answered its own sources
    hits: dict[str, list[str]] = found["hits"]
    assert not [path for paths in hits.values() for path in paths if path.startswith("/from-public")], hits
    assert sorted(hits["10.9.8.7"]) == ["/own", "/own-via-literal", "/own-via-name", "/to-literal", "/to-name"]
    assert not any(found["archived"].values()), found["archived"]


def test_a_page_served_from_a_local_address_counts_as_local_whatever_its_name() -> None:
    assert redirect_inward("http://intranet.example/a", "http://10.9.8.7/b") is not None  # by its name: public
    assert redirect_inward("http://intranet.example/a", "http://10.9.8.7/b", local_page=True) is None
