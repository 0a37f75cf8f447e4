"""Benchmark: how long the checks take on the inputs built to make them slow.

The tests assert what these inputs get (a diagnostic, a refusal, no soft 404), never how long it
took, so a loaded machine cannot fail them; the time is measured here, against the bound each
test once asserted. In one process, the fastest of --repeats runs of each:
- 5,000 terms of three names each and one look-alike (the look-alike check is bucketed);
- YAML nested 10,000 deep in five shapes, and a billion laughs (refused, never expanded);
- a 250 KB term file of non-Latin words scanned for invisible and look-alike characters;
- a measurement file of 100,000 problems (the first fifty reported, and a count);
- response heads and chunk lines trickled one byte at a time (aiohttp's parser, as links/client.py sets it);
- soft-404 titles searched in hostile bodies (links/wire.py).

    python bench/hostile.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["CUDAGLOSS_CACHE"] = "off"  # every repeat reads and checks its files again (the check cache would answer)

from common import ROOT, refuse_committed_links, row, save

from cudagloss.check.entries import entry_of
from cudagloss.check.names import name_diagnostics
from cudagloss.errors import GlossaryError
from cudagloss.links.client import MAX_HEADERS, MAX_LINE
from cudagloss.links.wire import looks_not_found
from cudagloss.load.corpus import load_corpus
from cudagloss.load.measurements import load_measurements
from cudagloss.model.corpus import LoadedTerm
from cudagloss.model.positions import Positions
from cudagloss.model.term import Term
from cudagloss.text.characters import scan_text

HEAD = "# yaml-language-server: $schema=../schema/term.schema.json\n"
SECTIONS = HEAD.replace("term.schema", "sections.schema") + "sections:\n  - slug: basics\n    title: Basics\n"
CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


def _best(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def _look_alikes() -> None:
    terms = [
        LoadedTerm(
            f"t{i}",
            f"terms/t{i}.yaml",
            Path(f"t{i}.yaml"),
            Term(f"Kernel {i}", "What?", "A term.", "basics", "Body.", aliases=[f"K{i} alias", f"Ядро {i}"]),
            Positions(),
        )
        for i in range(5000)
    ]
    evil = Term("Кеrnеl 7", "?", "A.", "basics", "B.")
    terms.append(LoadedTerm("evil", "terms/evil.yaml", Path("evil.yaml"), evil, Positions()))
    assert len(list(name_diagnostics([entry_of(t) for t in terms]))) == 1


def _refused(extra: str, work: Path) -> Callable[[], None]:
    """A one-term glossary whose term carries extra YAML, loaded until it is refused."""
    folder = work / "terms"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "_sections.yaml").write_text(SECTIONS, encoding="utf-8")
    text = f"{HEAD}name: Deep\ntitle: What is it?\ndefinition: A term.\nsection: basics\nbody: |\n  A body.\n{extra}"
    (folder / "a.yaml").write_text(text, encoding="utf-8")

    def load() -> None:
        try:
            load_corpus(folder, work, cache=False)
        except GlossaryError:
            return
        raise AssertionError("the glossary was not refused")

    return load


NESTED = {
    "flow lists": "aliases: " + "[" * 10_000 + "]" * 10_000 + "\n",
    "unclosed": "aliases: " + "[" * 10_000 + "\n",
    "flow maps": "aliases: " + "{a: " * 5_000 + "b" + "}" * 5_000 + "\n",
    "block indents": "aliases:\n" + "".join("  " * (i + 1) + "- \n" for i in range(300)) + "  " * 301 + "x\n",
    "dashes": "aliases:\n  - " + "- " * 10_000 + "x\n",
}
LAUGHS = "aliases: &a0 [lol, lol]\n" + "".join(f"error_strings{i}: &a{i} [*a{i - 1}, *a{i - 1}]\n" for i in range(1, 9))


def _many_problems(work: Path) -> Callable[[], None]:
    data = json.loads((ROOT / "measurements" / "ptx-jit" / "h200-lent.json").read_text(encoding="utf-8"))
    data["provenance"]["node"] = "node-a"
    text = json.dumps(data, indent=2)
    first = next(r for r in data["results"] if r["samples"])
    sample = json.dumps(first["samples"][0])
    trues = 100_000 - len(first["samples"])  # the most items a list may hold, nearly all of them wrong
    text = text.replace(f"[\n        {sample},", "[\n        " + "true, " * trues + f"{sample},", 1)
    folder = work / "measurements" / "ptx-jit"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "node-a.json").write_text(text, encoding="utf-8")

    def load() -> None:
        _, diags = load_measurements(work / "measurements", work)
        assert len(diags) == 51, [d.format() for d in diags]

    return load


class _Transport:
    """Just enough of a transport for aiohttp's response protocol to be fed by hand."""

    def get_extra_info(self, name: str, default: object = None) -> object:
        return default

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        pass


def _trickled(data: bytes) -> Callable[[], None]:
    """aiohttp's response protocol (the C parser) fed one byte at a time, with the checker's limits."""
    import asyncio

    from aiohttp.client_proto import ResponseHandler

    async def feed() -> None:
        protocol = ResponseHandler(asyncio.get_running_loop())
        protocol.connection_made(_Transport())  # type: ignore[arg-type]
        protocol.set_response_params(
            auto_decompress=False, max_line_size=MAX_LINE, max_field_size=MAX_LINE, max_headers=MAX_HEADERS
        )
        for i in range(len(data)):
            protocol.data_received(data[i : i + 1])
            if protocol.exception() is not None:
                return
        raise AssertionError("the response was not refused")

    def read() -> None:
        asyncio.run(feed())

    return read


MAX_HEAD = 100 * 1024
TRICKLED = {
    "a head that never ends": b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * (MAX_HEAD // 8),
    "chunks and trailers": CHUNKED
    + b"1\r\na\r\n" * (MAX_HEAD // 6)
    + b"0\r\n"
    + b"X-T: y\r\n" * (MAX_HEAD // 6 + 1)
    + b"\r\n",
}
BODIES = [
    b"<title>" + b"404" * 30_000,
    b"<title" * 20_000,
    b"<title>" + b"x" * 100_000 + b"</title>",
    (b"<title>" + b"not found" * 50) * 300,
]


def main() -> int:
    refuse_committed_links("measurements/ptx-jit/h200-lent.json")  # before anything is read
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = []

    def measured(what: str, work: Callable[[], object], bound: float) -> None:
        took = _best(work, args.repeats)
        print(f"{what}: {took:.3f} s (bound {bound:g} s)")
        rows.append(row(what, f"{took:.3f} s", f"< {bound:g} s", took < bound))

    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        work = Path(tmp)
        measured("look-alike names among 5,000 terms (15,001 names)", _look_alikes, 2.0)
        for i, (shape, text) in enumerate(NESTED.items()):
            measured(f"YAML nested 10,000 deep ({shape}): refused", _refused(text, work / f"nested-{i}"), 5.0)
        measured("a billion laughs: refused at its first alias", _refused(LAUGHS, work / "laughs"), 2.0)
        words = ("Москва and 東京 and naïve μs " * 8_000) + "\n"
        measured("scanning 250 KB of non-Latin words", lambda: scan_text("f", words), 2.0)
        measured("a measurement file of 100,000 problems: fifty and a count", _many_problems(work), 5.0)
        for what, data in TRICKLED.items():
            measured(f"a response trickled byte by byte ({what}): refused", _trickled(data), 3.0)
        measured("soft-404 search in four hostile bodies", lambda: [looks_not_found(b) for b in BODIES], 2.0)
    save("hostile", rows, notes=f"Each figure is the fastest of {args.repeats} runs, in one process.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
