"""Edges of the quote check found in review, end to end on local servers: what a server names its
body (its Content-Type) never reaches the terminal raw; a page whose coding cannot be undone
leaves its quote unverifiable, not silently unjudged; and a quote that cannot be verified (a PDF)
does not keep its URL due on every run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("ruamel.yaml")

from conftest import cudagloss
from localserver import Quiet, running
from scaffold import good_glossary

QUOTE = "A warp executes one common instruction at a time"
KINDS = {
    "/esc": "application/x-\x1b[31mRED",  # ESC: a terminal's escape sequence
    "/c1": "application/x-\xc2\x9b31mRED",  # UTF-8 of U+009B, the one-byte CSI
    "/lone": "application/x-\x9b31mRED",  # a lone 0x9B byte
    "/pdf": "application/pdf",
}


class Site(Quiet):
    def do_GET(self) -> None:
        body = b"%PDF-1.4 not text"
        self.send_response(200)
        if self.path == "/br":  # a coding we never asked for: the body cannot be read
            body = b"\x1b\x00\x00\x00not-really-brotli"
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Encoding", "br")
        else:
            self.send_header("Content-Type", KINDS[self.path].encode("latin-1").decode("latin-1"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def glossary(tmp_path: Path, url: str) -> Path:
    return good_glossary(tmp_path, f'sources:\n  - title: T\n    url: {url}\n    quote: "{QUOTE}"\n')


@pytest.fixture(scope="module")
def server() -> object:
    with running(Site) as url:
        yield url


@pytest.mark.parametrize("path", ["/esc", "/c1", "/lone"])
def test_a_servers_content_type_never_reaches_the_terminal_raw(tmp_path: Path, server: str, path: str) -> None:
    run = cudagloss(glossary(tmp_path, f"{server}{path}"), "links", "terms", "--no-archive")
    assert run.returncode == 0, run.stderr
    assert "[quote-unverifiable]" in run.stdout
    assert "\x1b" not in run.stdout and "\x9b" not in run.stdout


def test_a_page_whose_coding_cannot_be_undone_leaves_its_quote_unverifiable(tmp_path: Path, server: str) -> None:
    run = cudagloss(glossary(tmp_path, f"{server}/br"), "links", "terms", "--no-archive", "--format", "json")
    report = json.loads(run.stdout)
    assert report["quote_counts"]["quote-unverifiable"] == 1
    assert report["results"][0]["quotes"][0]["result"] == "quote-unverifiable"


def test_a_quote_that_cannot_be_verified_lets_its_url_rest(tmp_path: Path, server: str) -> None:
    root = glossary(tmp_path, f"{server}/pdf")
    first = json.loads(cudagloss(root, "links", "terms", "--no-archive", "--format", "json").stdout)
    assert first["quote_counts"]["quote-unverifiable"] == 1 and first["checked"] == 1
    second = json.loads(cudagloss(root, "links", "terms", "--no-archive", "--format", "json").stdout)
    assert second["skipped_fresh"] == 1 and second["checked"] == 0  # checked again once it is due, or --force
