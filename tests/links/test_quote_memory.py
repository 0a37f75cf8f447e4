"""Unbounded work from a few bytes (issue 39, class 2, the link checker's part): a quoted page of
compatibility characters, whose normalised form is many times longer than the page (U+FDFA: three
bytes, eighteen characters; U+FB01: three bytes, two), must not make `cudagloss links` hold
more than a small multiple of the page's byte cap. Measured as the real command's peak resident
memory (the kernel's count for a child process, whatever the machine's speed), over a run that
quotes one small page, with two such pages at the body cap served by a real local server."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ruamel.yaml")

from cudagloss.links.checker import CheckerOptions
from cudagloss.links.page_text import _FOLD, normalise_within
from localserver import Quiet, running
from scaffold import good_glossary

QUOTE = "A warp executes one common instruction at a time"
CAP = CheckerOptions().max_page
GROWING = {
    "/fdfa": ("<html><body><p>" + "\ufdfa" * CAP).encode()[:CAP].decode("utf-8", "ignore").encode(),
    "/fdfa-spaced": ("<html><body><p>" + "\ufdfa " * CAP).encode()[:CAP].decode("utf-8", "ignore").encode(),
    "/ligatures": ("<html><body><p>" + "\ufb01" * CAP).encode()[:CAP].decode("utf-8", "ignore").encode(),
}
SMALL = f"<html><body><p>{QUOTE}.</p></body></html>".encode()
BOUND = 24
"""Peak memory past the small run's, in multiples of the byte cap, for three such pages (two
judged at once). Before issue 39 the same run peaked above 1 GB, over 120 times the cap."""
MEASURE = (
    "import resource, subprocess, sys; "
    "run = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=False); "
    "sys.stderr.write(run.stderr); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)"
)


class Site(Quiet):
    def do_GET(self) -> None:
        body = SMALL if self.path == "/small" else GROWING.get(self.path, b"")
        self.reply(200 if body else 404, body, "text/html; charset=utf-8")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running(Site) as url:
        yield url


def peak(root: Path, server: str, paths: list[str]) -> tuple[int, dict[str, dict[str, str]]]:
    """The peak resident bytes of `cudagloss links` quoting these pages, and each page's quote result."""
    sources = "sources:\n" + "".join(
        f'  - title: Page {path}\n    url: {server}{path}\n    quote: "{QUOTE}"\n' for path in paths
    )
    good_glossary(root, sources)
    command = [sys.executable, "-m", "cudagloss", "links", "terms", "--no-archive", "--report", "links.json"]
    run = subprocess.run(
        [sys.executable, "-c", MEASURE, *command], cwd=root, capture_output=True, text=True, check=False, timeout=300
    )
    assert "Traceback" not in run.stderr, run.stderr
    report = json.loads((root / "links.json").read_text())
    return int(run.stdout.strip()), {r["url"].removeprefix(server): r["quotes"][0] for r in report["results"]}


def test_a_page_that_grows_when_normalised_is_checked_in_bounded_memory(tmp_path: Path, server: str) -> None:
    assert all(len(body) > CAP - 4 for body in GROWING.values())  # at the cap, not past it
    base, _ = peak(tmp_path / "small", server, ["/small"])
    used, quotes = peak(tmp_path / "growing", server, ["/small", *GROWING])
    assert used - base < BOUND * CAP, f"{(used - base) / CAP:.1f} times the page cap"
    assert quotes["/small"]["result"] == "quote-found", quotes
    for path in ("/fdfa", "/fdfa-spaced"):  # compared up to the cap on its growth: the rest is not known
        assert quotes[path]["result"] == "quote-unverifiable" and "grows past" in quotes[path]["detail"], quotes
    assert quotes["/ligatures"]["result"] == "quote-missing", quotes  # twofold fits: read whole


@pytest.mark.parametrize(
    "text",
    [
        ("word " * 5000) + "Straße“ﬁ”",  # seams at spaces
        "\ufdfa" * 3000 + " end",  # no space for a whole piece: cut before a character that normalises alone
        ("e\u0301" * 6000) + " x",  # a combining mark after each letter: never cut between them
        ("\u1100\u1161" * 6000),  # Hangul jamo that compose: never cut between them
        ("  spaced  " * 3000) + "\n\t",
        "",
    ],
)
def test_normalising_a_piece_at_a_time_is_normalising_the_whole(text: str) -> None:
    """The pieces' seams change nothing: the whole text normalised at once, as before issue 39."""
    whole = " ".join(
        unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text.translate(_FOLD)).casefold())
        .translate(_FOLD)
        .split()
    )
    assert normalise_within(text, 10**9) == (whole, True)
    cut, complete = normalise_within(text, 1000)
    if len(whole) <= 1000:
        assert (cut, complete) == (whole, True)
    else:
        assert not complete and len(cut) <= 1000 and whole.startswith(cut)
