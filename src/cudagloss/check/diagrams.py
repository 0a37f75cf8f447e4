"""A term's diagrams as the check stage reports them: mistakes in the term file at their field
(two diagrams of one id, one the body never shows, no text alternative, a file outside
diagrams/), and mistakes in the SVG file at its own line and column: what the page sanitiser
would remove (cudagloss.text.svg), a measured label the term cannot cite, and a number about a
GPU typed into the drawing's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from cudagloss.check.charts import at
from cudagloss.check.typed_numbers import allowed, find
from cudagloss.errors import Diagnostic
from cudagloss.files.inside import read_link_mistake
from cudagloss.model.corpus import Facts, LoadedTerm
from cudagloss.model.directives import scan
from cudagloss.model.measurements import CitationError, MeasurementSet, resolve
from cudagloss.text.svg import MEASURED, problems

SIZE_MAX = 256 * 1024
_FILE = re.compile(r"diagrams/[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+)?\.svg")
_TAG = re.compile(r"<[^>]*>")
GUIDE = "AUTHORING.md, 'Draw a diagram'"


def diagrams_root(t: LoadedTerm) -> Path:
    """Where a term's diagram paths start: its own folder (terms/), so diagrams/ travels with it."""
    return t.file.parent


def diagram_diagnostics(t: LoadedTerm, measurements: MeasurementSet | None, facts: Facts) -> Iterator[Diagnostic]:
    shown = {d.args[0] for d in scan(t.term.body)[0] if d.name == "diagram"}
    seen: dict[str, int] = {}
    for i, diagram in enumerate(t.term.diagrams):
        where = f"diagrams[{i}]"
        if (first := seen.setdefault(diagram.id, i)) != i:
            yield at(t, f"{where}.id", f"'{diagram.id}' is also the id of diagrams[{first}]", "give each its own id")
        if diagram.id not in shown:
            yield at(
                t,
                where,
                f"the body never shows diagram '{diagram.id}'",
                f'write {{{{ diagram("{diagram.id}") }}}} on a line of its own where it belongs, or remove it',
            )
        if not diagram.alt.strip():
            yield at(t, f"{where}.alt", "is empty", "say what the diagram shows, for readers who cannot see it")
        for field, file in ((f"{where}.file", diagram.file), (f"{where}.dark", diagram.dark)):
            if file:
                yield from _file(t, field, file, measurements, facts)


def _file(
    t: LoadedTerm, field: str, file: str, measurements: MeasurementSet | None, facts: Facts
) -> Iterator[Diagnostic]:
    if not _FILE.fullmatch(file):
        yield at(t, field, f"'{file}' is not a file under diagrams/", "name it diagrams/<name>.svg")
        return
    path = diagrams_root(t) / file
    link = read_link_mistake(path.parent, diagrams_root(t), "the diagrams folder")  # its files: from anywhere
    if link is not None:
        yield Diagnostic(str(Path(t.path).parent / link.path), 1, 1, f"{link.message} (used by {t.path})", link.hint)
        return
    if path.is_symlink():  # a link as the file itself is refused here, at the term's field, never followed
        yield at(
            t,
            field,
            f"'{file}' is a symbolic link; a drawing is a plain file",
            f"add the drawing under diagrams/ ({GUIDE})",
        )
        return
    try:
        data = path.read_bytes() if path.is_file() else None
    except OSError:
        data = None
    if data is None or len(data) > SIZE_MAX:
        said = "cannot be read (a plain file is needed)" if data is None else f"is over {SIZE_MAX:,} bytes"
        yield at(t, field, f"'{file}' {said}", f"add the drawing under diagrams/ ({GUIDE})")
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        yield at(t, field, f"'{file}' is not UTF-8 text", "save it as UTF-8")
        return
    shown = str(Path(t.path).parent / file)
    hint = f"the page sanitiser keeps shapes, text and classes only ({GUIDE})"
    for line, col, message in problems(text):
        yield Diagnostic(shown, line, col, f"{message} (used by {t.path})", hint)
    for match in MEASURED.finditer(text):
        try:
            resolve(t.term, measurements, match.group(1), match.group(2))
        except CitationError as exc:
            line = text.count("\n", 0, match.start()) + 1
            col = match.start() - text.rfind("\n", 0, match.start())
            yield Diagnostic(shown, line, col, exc.message, exc.hint)
    for n, raw in enumerate(text.splitlines(), start=1):
        fragments = _TAG.split(MEASURED.sub(" ", raw))  # each element's text on its own, as prose
        for found in (f for fragment in fragments for f in find(" ".join(fragment.split()))):
            if allowed(found, t.slug, facts.entries) is None:
                yield Diagnostic(
                    shown, n, 1, f"'{found.text}' is a number about a GPU typed by hand", "label it with measured(...)"
                )
