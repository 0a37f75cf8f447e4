"""axe-core (Deque's accessibility engine, from npm) run in a Playwright page.

The pinned release is installed into tests/.tools by `npm ci` from a committed lockfile, its
tree checked against a pinned hash (tests/npmtools.py: skipped without npm, failed under CI),
and its script against the digest of that release before any page runs it: a registry or a
folder that hands over other code fails the test instead.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

import pytest

from npmtools import npm_package

VERSION = "4.14.1"
SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
"""Of axe.min.js in axe-core 4.14.1 as published on npm."""
WCAG_A_AA = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
"""axe's tags for the success criteria of WCAG 2.0 and 2.1 at levels A and AA."""


@functools.cache
def source() -> str:
    """The pinned axe.min.js, checked."""
    script = npm_package("axe-core", VERSION) / "axe.min.js"
    data = script.read_bytes() if script.is_file() else b""
    if hashlib.sha256(data).hexdigest() != SHA256:
        pytest.fail(
            f"{script} is not axe-core {VERSION} as published (sha256 differs): delete tests/.tools to reinstall"
        )
    return data.decode("utf-8")


def violations(page: Any) -> list[str]:
    """Every WCAG 2 A/AA violation axe finds in the page as it is now, one line per element:
    'rule (impact): selector: what to fix'."""
    page.add_script_tag(content=source())
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})",
        list(WCAG_A_AA),
    )
    found = []
    for rule in result["violations"]:
        for node in rule["nodes"]:
            summary = " ".join(str(node.get("failureSummary") or rule["help"]).split())
            found.append(f"{rule['id']} ({rule['impact']}): {' '.join(map(str, node['target']))}: {summary}")
    return found
