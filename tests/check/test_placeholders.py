"""The scaffold `cudagloss new` writes fails the check until its placeholders are replaced:
each one left is an error at its place, all at once; the same words in lower case are prose."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import FIXTURES
from cudagloss.commands.new import new_term
from cudagloss.errors import GlossaryError
from cudagloss.load.corpus import load_corpus
from scaffold import filled

LEFT = "placeholder text left from make new: replace it"


def _errors(terms: Path) -> list[str]:
    try:
        load_corpus(terms, terms.parent)
    except GlossaryError as exc:
        return [f"{d.path}:{d.line}:{d.col}: {d.message}" for d in exc.diagnostics]
    return []


def _folder(tmp_path: Path) -> Path:
    terms = tmp_path / "terms"
    terms.mkdir()
    shutil.copy(FIXTURES / "good" / "_sections.yaml", terms)
    return terms


def test_every_placeholder_of_a_new_term_is_an_error_until_replaced(tmp_path: Path) -> None:
    terms = _folder(tmp_path)
    path = new_term("Memory fence", terms)
    assert _errors(terms) == [
        f"terms/memory-fence.yaml:5:3: definition: {LEFT}",
        f"terms/memory-fence.yaml:13:3: body: {LEFT}",
        f"terms/memory-fence.yaml:18:12: where_you_meet_this[0].label: {LEFT}",
        f"terms/memory-fence.yaml:20:11: where_you_meet_this[0].note: {LEFT}",
        f"terms/memory-fence.yaml:22:12: sources[0].title: {LEFT}",
        f"terms/memory-fence.yaml:23:10: sources[0].url: {LEFT}",
    ]
    path.write_text(filled(path.read_text(encoding="utf-8")), encoding="utf-8")
    assert _errors(terms) == []


def test_a_placeholder_copied_anywhere_is_found_and_lower_case_words_are_prose(tmp_path: Path) -> None:
    terms = _folder(tmp_path)
    path = new_term("Memory fence", terms)
    text = filled(path.read_text(encoding="utf-8")).replace("aliases: []", "aliases: [fence, FILL IN]")
    text = text.replace("body: |\n", "body: |\n  Fill in the form; fill-in text is fine.\n  Then FILL-IN.\n")
    path.write_text(text, encoding="utf-8")
    assert _errors(terms) == [
        f"terms/memory-fence.yaml:8:18: aliases[1]: {LEFT}",
        f"terms/memory-fence.yaml:14:8: body: {LEFT}",
    ]
