"""Relative links between the site's pages, computed without touching the file system.

`posixpath.relpath` makes both paths absolute against the working directory first; the
site's URIs are already clean relative paths ('terms/ptx.md'), and a 1,000-term build
computes tens of thousands of links, so the plain string version is worth having.
"""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1 << 16)
def relative_href(to_uri: str, from_uri: str) -> str:
    """The link from the page from_uri to to_uri, both clean relative paths ('a/b.md')."""
    here = from_uri.split("/")[:-1]
    there = to_uri.split("/")
    common = 0
    while common < len(here) and common < len(there) - 1 and here[common] == there[common]:
        common += 1
    return "/".join([".."] * (len(here) - common) + there[common:])
