"""Addresses a source may not lead to: this machine, its private networks, link-local ones.

A source URL is public by definition; one on loopback, a private network or a link-local
address (169.254.169.254 answers with a cloud machine's credentials) would have the link
checker probe the network it runs in, and a public page that redirects there would have it
fetch and stamp an internal service. So a host is refused in every spelling: a name that is
this machine (`localhost`), an IPv4 address however written (`127.1`, `0x7f.1`, `2130706433`,
as the C resolver reads them), an IPv6 one (`::1`, `::ffff:127.0.0.1`, 6to4), and, when the
checker connects, every address a name resolves to. Where the sources really are local (the
tests' servers), CUDAGLOSS_LOCAL_SOURCES names the networks that are allowed, say
`127.0.0.0/8`; nothing else turns the rule off. Standard library only.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from urllib.parse import urlsplit

LOCAL_ENV = "CUDAGLOSS_LOCAL_SOURCES"
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_NUMERIC = re.compile(r"[0-9a-fA-FxX.]+")
"""What the C resolver may read as an IPv4 address (hex, octal and dotless forms too)."""


def local_networks() -> tuple[Network, ...]:
    """The networks CUDAGLOSS_LOCAL_SOURCES allows (comma-separated; a bad entry allows nothing)."""
    found = []
    for entry in os.environ.get(LOCAL_ENV, "").split(","):
        try:
            found.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            continue
    return tuple(found)


def _inner(ip: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 one carries (mapped, 6to4), or ip itself."""
    if isinstance(ip, ipaddress.IPv6Address):
        return ip.ipv4_mapped or ip.sixtofour or ip
    return ip


def address_problem(text: str, local: tuple[Network, ...] | None = None) -> str | None:
    """Why a connection to this IP address is refused, or None (a public address, or one in local)."""
    try:
        ip = _inner(ipaddress.ip_address(text.split("%", 1)[0]))
    except ValueError:
        return None
    if any(ip in net for net in (local_networks() if local is None else local)):
        return None
    for test, words in (
        (ip.is_loopback, "a loopback address (this machine)"),
        (ip.is_link_local, "a link-local address"),
        (ip.is_unspecified, "the unspecified address"),
        (ip.is_multicast, "a multicast address"),
        (ip.is_private, "a private network's address"),
        (ip.is_reserved, "a reserved address"),
    ):
        if test:
            return f"is {ip}, {words}"
    return None


def host_problem(host: str, local: tuple[Network, ...] | None = None) -> str | None:
    """Why a URL's host is refused without resolving it, or None: a name of this machine, or an
    IP address in any spelling that address_problem refuses."""
    name = host.strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        if any(ipaddress.ip_address("127.0.0.1") in net for net in (local_networks() if local is None else local)):
            return None
        return "names this machine (localhost)"
    if ":" in name:
        return address_problem(name, local)
    if _NUMERIC.fullmatch(name):
        try:
            return address_problem(socket.inet_ntoa(socket.inet_aton(name)), local)
        except OSError:
            return None
    return None


def url_host_problem(url: str, local: tuple[Network, ...] | None = None) -> str | None:
    """Why a valid URL's host is refused before any lookup, worded to follow the URL in an
    author's error or a checker's report; None for a public host (local: as host_problem)."""
    problem = host_problem(urlsplit(url).hostname or "", local)
    return f"leads to a host that {problem}: a source is a public page" if problem else None


def redirect_inward(current: str, target: str, local_page: bool = False) -> str | None:
    """Why a redirect from current to target is refused though both pass url_host_problem: a
    public page may not send the checker to a local address, even one that CUDAGLOSS_LOCAL_SOURCES
    allows (an intranet mirror is allowed as a source, not as a public page's destination).
    Only a source that is itself local (its host a local address, or local_page: it was served
    from one) may lead to local addresses. This judges the target's host as written; a name is
    judged on what it resolves to when connected (links.client, public_only)."""
    try:
        here, there = urlsplit(current).hostname or "", urlsplit(target).hostname or ""
    except ValueError:
        return None
    if not local_page and host_problem(here, ()) is None and (problem := host_problem(there, ())) is not None:
        return f"a public page redirects to a host that {problem}"
    return None
