"""Load stage: read every term file of a folder into the model, collecting all mistakes.

Files whose names start with '_' are not terms (`_sections.yaml` lists the sections).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from cudagloss.errors import Diagnostic, GlossaryError, display_path
from cudagloss.files.inside import first_link, link_diagnostic, read_link_mistake
from cudagloss.load.convert import parse_file
from cudagloss.model.corpus import LoadedTerm
from cudagloss.model.limits import NAME_MAX, TERMS_MAX
from cudagloss.model.positions import Positions
from cudagloss.model.term import SectionsFile, Term, is_slug

SECTIONS_FILE = "_sections.yaml"
MODELINE_PREFIX = "# yaml-language-server: $schema="
SCHEMA_NAME = "term.schema.json"
FILE_MAX = 256 * 1024
"""Bytes a term file may have; checked before it is read or parsed."""
SECTIONS_FILE_MAX = FILE_MAX + TERMS_MAX * (NAME_MAX + 16)
"""Bytes the sections file may have: a term file's room for its sections, and a reading-order
line ('      - slug') for every term the glossary may hold, so a glossary at TERMS_MAX loads."""
TOO_LARGE = "a term is one page: shorten the body, or split it into several terms"
SECTIONS_TOO_LARGE = "list each term once, by its slug, and keep descriptions to a sentence or two"


def term_files(folder: Path) -> list[Path]:
    """The term files of a folder, sorted by name: every '.yaml' or '.yml' name, whatever it
    is (a link, a FIFO, a folder: reading refuses those); not '_*' nor editor locks ('.#*')."""
    names = sorted(n for n in os.listdir(folder) if n.endswith((".yaml", ".yml")) and not n.startswith(("_", ".#")))
    return [folder / n for n in names if Path(n).suffix in (".yaml", ".yml")]


def shown_path(path: Path, root: Path | None) -> str:
    """path as diagnostics show it: its folder relative to root, then its own name, so that a
    link is named as the author sees it (never by where it leads, nor resolved round a loop)."""
    return shown_in(display_path(path.parent, root), path.name)


def shown_in(folder: str, name: str) -> str:
    """A file's name as shown, given its folder's (display_path)."""
    return name if folder == "." else f"{folder}/{name}"


def folder_mistake(folder: Path, root: Path | None) -> Diagnostic | None:
    """Why folder cannot be read as a terms folder: it, or a folder above it up to the root (the
    terms folder's parent without one), is a symbolic link, whose files would be read, and
    published, from anywhere (read_link_mistake, the rule writes follow too); or it is not a folder."""
    mistake = read_link_mistake(folder, root if root is not None else folder.absolute().parent, "the terms folder")
    if mistake is not None:
        return mistake
    if not folder.is_dir():
        return Diagnostic(display_path(folder, root), 1, 1, "not a folder of term files", "pass the terms/ folder")
    return None


def load_terms(folder: Path, root: Path | None = None) -> tuple[list[LoadedTerm], list[Diagnostic]]:
    """Every term file of folder read into the model, and every mistake found reading them:
    the load stage alone, as the check stage starts from it (same files, same names, same
    refusals), with nothing judged across fields or files: no claims, measurements, typed
    numbers, names or sections. What `cudagloss links` plans from. GlossaryError for a
    folder that cannot be read (folder_mistake)."""
    mistake = folder_mistake(folder, root)
    if mistake is not None:
        raise GlossaryError([mistake])
    folder_shown = display_path(folder, root)
    terms: list[LoadedTerm] = []
    diagnostics: list[Diagnostic] = []
    for path in term_files(folder):
        shown = shown_in(folder_shown, path.name)
        text, found = read_term_file(path, shown)
        if text is not None:
            loaded, found = term_from_text(path, shown, text)
            if loaded is not None:
                terms.append(loaded)
        diagnostics += found
    return terms, diagnostics


def _refused(path: Path, shown: str, what: str) -> Diagnostic | None:
    """Why path may not be read, judged without opening it: a symbolic link, wherever it leads
    (inside the repository too: the rule writes follow, cudagloss.files.inside; the folders above
    were judged once, by folder_mistake), or anything but a regular file (a FIFO would hang the
    reader; a device could be anything)."""
    if first_link(path, path.parent) is not None:
        return link_diagnostic(shown, what)
    if not stat.S_ISREG(os.lstat(path).st_mode):
        return Diagnostic(
            shown, 1, 1, "is not a regular file", "a term file is a plain YAML file: remove this one or rename it"
        )
    return None


def read_term_file(
    path: Path, shown: str, what: str = "a term file", limit: int = FILE_MAX, hint: str = TOO_LARGE
) -> tuple[str | None, list[Diagnostic]]:
    """The file's text, or why it cannot be a term file (what names it: "the sections file"):
    refused by _refused (and then never opened), unreadable, not UTF-8, or over limit bytes
    (counted before parsing, never read past)."""
    try:
        refused = _refused(path, shown, what)
        if refused:
            return None, [refused]
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since it was looked at
                return None, [Diagnostic(shown, 1, 1, "is not a regular file", "")]
            data = f.read(limit + 1)
        if len(data) > limit:
            return None, [Diagnostic(shown, 1, 1, f"the file is larger than {limit // 1024} KB", hint)]
        return data.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        return None, [
            Diagnostic(shown, 1, 1, f"not UTF-8 text ({exc.reason} at byte {exc.start})", "save the file as UTF-8")
        ]
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # made a link since it was looked at
            return None, [link_diagnostic(shown, what)]
        return None, [Diagnostic(shown, 1, 1, f"cannot read the file: {exc.strerror}", "")]


def _modeline(shown: str, text: str) -> list[Diagnostic]:
    first = text.split("\n", 1)[0].strip()
    if first.startswith(MODELINE_PREFIX) and first.endswith(SCHEMA_NAME):
        return []
    return [
        Diagnostic(
            shown,
            1,
            1,
            "the first line must be the schema modeline",
            f"start the file with '{MODELINE_PREFIX}../schema/{SCHEMA_NAME}' so editors check it",
        )
    ]


_Loaded = tuple[LoadedTerm | None, list[Diagnostic]]
_last_loaded: dict[tuple[Path, str], tuple[str, _Loaded]] = {}
"""The last text read from each file and what it loaded to: `mkdocs serve` rebuilds the
whole glossary after every edit, and this makes every unchanged file cost one read."""


def load_term(path: Path, root: Path | None = None) -> _Loaded:
    """Read one term file; return the term (None when unusable) and every mistake found."""
    shown = shown_path(path, root)
    text, diags = read_term_file(path, shown)
    if text is None:
        return None, diags
    return term_from_text(path, shown, text)


def term_from_text(path: Path, shown: str, text: str) -> _Loaded:
    """The term in text, read from path (shown as shown), and every mistake in it."""
    last = _last_loaded.get((path, shown))
    if last is not None and last[0] == text:
        return last[1][0], list(last[1][1])
    result = _parse_term(path, shown, text)
    _last_loaded[(path, shown)] = (text, (result[0], list(result[1])))
    return result


def _parse_term(path: Path, shown: str, text: str) -> _Loaded:
    diags = _modeline(shown, text)
    slug = path.stem
    if not is_slug(slug):
        diags.append(
            Diagnostic(
                shown,
                1,
                1,
                f"file name '{path.name}' is not a valid slug",
                "name term files in lower case with dashes, e.g. 'jit-compilation.yaml'",
            )
        )
    term, found, positions = parse_file(shown, text, Term)  # nothing uses a value past its bound
    if term is None:
        return None, diags + found
    return LoadedTerm(slug=slug, path=shown, file=path, term=term, positions=positions), diags + found


def load_sections(folder: Path, root: Path | None = None) -> tuple[SectionsFile | None, str, list[Diagnostic]]:
    """The sections file of folder, where it is shown, and every mistake found in it."""
    sections, shown, diags, _ = load_sections_at(folder, root)
    return sections, shown, diags


def load_sections_at(
    folder: Path, root: Path | None = None
) -> tuple[SectionsFile | None, str, list[Diagnostic], Positions]:
    path = folder / SECTIONS_FILE
    shown = shown_path(path, root)
    if not os.path.lexists(path):
        missing = Diagnostic(
            shown,
            1,
            1,
            "the sections file is missing",
            "create it with 'sections:' and one '- slug: ...' / 'title: ...' entry per section",
        )
        return None, shown, [missing], Positions()
    text, diags = read_term_file(path, shown, "the sections file", SECTIONS_FILE_MAX, SECTIONS_TOO_LARGE)
    if text is None:
        return None, shown, diags, Positions()
    sections, diags, positions = parse_file(shown, text, SectionsFile)
    return sections, shown, diags, positions
