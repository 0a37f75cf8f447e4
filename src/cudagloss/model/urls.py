"""Every path and URL of the glossary in one place: where each page, raw file and
measurement file lives, how pages link to each other, and which addresses a reader may be
sent to.

Like MkDocs' `File` (src_uri, dest_path, url), the site's pages are named by a source URI
('terms/ptx.md'); the published URL, the link between two pages and the measurement
file's path on disk are all computed here, never spelled elsewhere.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import unicodedata
from pathlib import Path
from urllib.parse import urlsplit

from cudagloss.errors import shown
from cudagloss.text.characters import disguised, look_alike_letter
from cudagloss.text.skeleton import skeleton

TERMS_DIR = "terms"
SECTIONS_DIR = "sections"
MEASUREMENTS_DIR = "measurements"
INDEX = "index.md"
FAILED_SUFFIX = ".failed.json"
"""A node's failed run is kept beside its last good one: <node>.failed.json."""


def term_src_uri(slug: str) -> str:
    return f"{TERMS_DIR}/{slug}.md"


def section_src_uri(slug: str) -> str:
    return f"{SECTIONS_DIR}/{slug}.md"


def measurements_index_uri() -> str:
    return f"{MEASUREMENTS_DIR}/index.md"


def measurement_src_uri(experiment: str) -> str:
    return f"{MEASUREMENTS_DIR}/{experiment}.md"


RUN_MARK = "~"
"""An earlier good run of a node's card is kept beside its latest: <node>~<stamp>.json, the
stamp its recorded_at in UTC (20261204T175826Z). '~' is in no node name, and needs no escape in a URL."""
RUN_STAMP = re.compile(r"[0-9]{8}T[0-9]{6}Z")


def measurement_file_name(node: str, *, failed: bool = False, run: str = "") -> str:
    """<node>.json, <node>.failed.json for a run that failed, <node>~<run>.json for an earlier run."""
    if run:
        return f"{node}{RUN_MARK}{run}.json"
    return f"{node}{FAILED_SUFFIX if failed else '.json'}"


def raw_json_src_uri(experiment: str, node: str, *, failed: bool = False, run: str = "") -> str:
    """Where the site publishes a measurement file (the same path as in the repository)."""
    return f"{MEASUREMENTS_DIR}/{experiment}/{measurement_file_name(node, failed=failed, run=run)}"


def measurement_path(folder: Path, experiment: str, node: str, *, failed: bool = False, run: str = "") -> Path:
    """A measurement file under a measurements folder: folder/<experiment>/<node>.json (or an earlier run's)."""
    return folder / experiment / measurement_file_name(node, failed=failed, run=run)


def review_path(folder: Path, experiment: str, node: str) -> Path:
    """Where a re-run whose discrete results changed waits for review: <node>.json.new beside
    the committed file, a name the site's loader does not read (it reads only '.json')."""
    return measurement_path(folder, experiment, node).with_suffix(".json.new")


def result_anchor(node: str, name: str) -> str:
    """The id of a result's row on its measurement page."""
    return re.sub(r"[^a-z0-9_-]+", "-", f"{node}-{name}".lower())


def page_path(src_uri: str) -> str:
    """Where a page or file is published, relative to the site's root, as MkDocs' directory
    URLs place it: '' for the home page, 'terms/ptx/' for 'terms/ptx.md', a raw file as it is."""
    if src_uri == INDEX:
        return ""
    return src_uri[: -len(".md")] + "/" if src_uri.endswith(".md") else src_uri


def page_url(site_url: str | None, src_uri: str) -> str | None:
    """The published address of a page, or None without a site URL."""
    return site_url + page_path(src_uri) if site_url else None


def site_address(base: str, src_uri: str) -> str:
    """Where a page or file ('terms/ptx.md#x') is published under base (the site's URL, or ''
    for an address relative to the site's root, './' for the home page): what the exports
    and glossary.json print."""
    path, _, anchor = src_uri.partition("#")
    url = (base + page_path(path)) or "./"
    return f"{url}#{anchor}" if anchor else url


@functools.lru_cache(maxsize=1 << 16)
def relative_href(to_uri: str, from_uri: str) -> str:
    """The link from the page from_uri to to_uri, both clean relative paths ('a/b.md').

    `posixpath.relpath` makes both paths absolute against the working directory first; a
    1,000-term build computes tens of thousands of links, so the plain string version."""
    here = from_uri.split("/")[:-1]
    there = to_uri.split("/")
    common = 0
    while common < len(here) and common < len(there) - 1 and here[common] == there[common]:
        common += 1
    return "/".join([".."] * (len(here) - common) + there[common:])


# -- addresses outside the site -----------------------------------------------------------

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
"""The schemes a link in author text may use (mailto is refused separately: it publishes an address)."""

MAX_URL_LENGTH = 2048
"""Longer than any URL worth citing (sitemaps stop at 2,048 too); a longer one, from an
author or a server's Location header, is refused before it reaches a request line."""

_LABEL = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
_HOST = re.compile(rf"(?:{_LABEL}\.)*{_LABEL}\.?")
"""Labels of letters, digits, '-' and '_' (not first or last), any script, 63 at most."""


def _bad_char(url: str) -> bool:
    """A character no URL may hold literally: spaces, controls and invisible formatting
    (bidi overrides, zero-width), which would hide what is really requested."""
    if url.isascii():  # the same test, at C speed: ASCII's controls are the unprintable, its space ' '
        return not url.isprintable() or " " in url
    return any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in url)


@functools.lru_cache(maxsize=1 << 14)
def url_problem(url: str) -> str | None:
    """Why url is not an http(s) address to check or to send a reader to (None when it is),
    worded to follow the URL in an author's error or a checker's report. The one predicate
    of validation, the link checker and the page escaper. Never raises, whatever the text."""
    if not isinstance(url, str) or len(url) > MAX_URL_LENGTH:
        return f"is longer than {MAX_URL_LENGTH} characters" if isinstance(url, str) else "is not a URL"
    if _bad_char(url):
        return "contains a space or a control character (write a space as %20)"
    if "\\" in url:
        return "contains a backslash (browsers read it as '/')"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"is not a well-formed URL ({shown(str(exc), 100)})"
    if parts.scheme not in ("http", "https"):
        return "is not an http(s) URL"
    if "@" in parts.netloc:
        return "carries a user name or password"
    host = parts.hostname
    if not host:
        return "has no host name"
    if port == 0:
        return "has port 0"
    if "[" in parts.netloc:
        try:
            ipaddress.IPv6Address(host.split("%", 1)[0])
        except ValueError:
            return "has a malformed IPv6 address"
    elif len(host) > 253 or not _HOST.fullmatch(host):
        return "has a malformed host name"
    return lookalike_host(host)


def lookalike_host(host: str) -> str | None:
    """Why a host name passes for another, or None: a label (punycode decoded first, as a
    browser shows it) that mixes scripts, or one wholly in letters of another script that
    look like Latin ones ('аррӏе' in Cyrillic reads 'apple'). Names' own look-alike rule."""
    if host.isascii() and "xn--" not in host:
        return None
    for raw in host.split("."):
        label = raw
        if raw.startswith("xn--"):
            try:
                label = raw.encode("ascii").decode("idna")
            except UnicodeError:
                return f"has a punycode label that does not decode ({shown(raw, 40)})"
        if label.isascii():
            continue
        if look_alike_letter(label) is not None:
            return f"has a host label '{shown(label, 40)}' that mixes scripts, as a look-alike of another name does"
        if disguised(label) and (plain := skeleton(label)).isascii():
            return f"has a host label '{shown(label, 40)}' in letters that look like the Latin '{plain}'"
    return None
