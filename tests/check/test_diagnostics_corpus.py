"""The broken-file corpus: one mistake per file, each reported exactly, all at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, check_golden
from cudagloss.errors import GlossaryError
from cudagloss.load.corpus import load_corpus
from cudagloss.load.terms import term_files

BROKEN = FIXTURES / "broken"
# Files in the broken corpus that are correct on purpose (others clash with them).
CORRECT = {"ptx.yaml"}


def _report(in_root: Path) -> GlossaryError:
    with pytest.raises(GlossaryError) as info:
        load_corpus(BROKEN.relative_to(in_root))
    return info.value


def test_report_matches_golden(in_root: Path) -> None:
    check_golden("broken-report.txt", _report(in_root).report() + "\n")


def test_every_broken_file_reports_exactly_one_mistake(in_root: Path) -> None:
    error = _report(in_root)
    by_file: dict[str, int] = {}
    for d in error.diagnostics:
        by_file[Path(d.path).name] = by_file.get(Path(d.path).name, 0) + 1
    broken = {p.name for p in term_files(BROKEN)} - CORRECT
    assert len(broken) >= 15
    assert by_file == dict.fromkeys(sorted(broken), 1)


@pytest.mark.parametrize(
    ("file", "expected"),
    [
        ("yaml-syntax.yaml", "yaml-syntax.yaml:3:15: YAML syntax error: mapping values are not allowed here"),
        ("tabs.yaml", "tabs.yaml:7:1: tab character in indentation"),
        ("duplicate-field.yaml", "duplicate-field.yaml:6:1: duplicate field 'name' (first set on line 2)"),
        ("misspelt-field.yaml", "misspelt-field.yaml:6:1: unknown field 'alaises' (did you mean 'aliases'?)"),
        ("missing-field.yaml", "missing-field.yaml:2:1: missing required field 'title'"),
        ("wrong-type.yaml", "wrong-type.yaml:6:10: aliases: expected a list, got text"),
        ("empty-definition.yaml", "empty-definition.yaml:4:13: definition: is empty"),
        ("two-sentences.yaml", "two-sentences.yaml:4:13: definition: has 2 sentences; it must be one"),
        ("unknown-related.yaml", "unknown-related.yaml:9:5: related[0]: no term 'ptz' (did you mean 'ptx'?)"),
        (
            "duplicate-alias.yaml",
            "duplicate-alias.yaml:7:5: aliases[0]: 'ptx' is already used by tests/fixtures/broken/ptx.yaml (name)",
        ),
        ("ptx.yml", "ptx.yml:1:1: duplicate slug 'ptx' (also tests/fixtures/broken/ptx.yaml)"),
        ("not-http.yaml", "not-http.yaml:10:10: sources[0].url: 'ftp://example.com/ptx.pdf' is not an http(s) URL"),
        ("duplicate-source.yaml", "duplicate-source.yaml:11:5: sources[1]: duplicate source: same URL as sources[0]"),
        ("bad-date.yaml", "bad-date.yaml:9:15: byline.written_on: '2026-02-30' is not a real date"),
        ("python-tag.yaml", "python-tag.yaml:7:5: tag '!!python/object/apply:os.system' is not allowed"),
        ("unknown-section.yaml", "unknown-section.yaml:5:10: section: no section 'erors' (did you mean 'errors'?)"),
        ("no-modeline.yaml", "no-modeline.yaml:1:1: the first line must be the schema modeline"),
        ("undefined-value.yaml", "undefined-value.yaml:8:16: body: not a directive: '{{ missing_value }}'"),
        ("script-link.yaml", "script-link.yaml:7:16: body: link to 'javascript:alert(1)' is not allowed"),
        ("Bad_Name.yaml", "Bad_Name.yaml:1:1: file name 'Bad_Name.yaml' is not a valid slug"),
        ("yaml-alias.yaml", "yaml-alias.yaml:8:5: alias '*a' is not allowed"),
        ("not-a-question.yaml", "not-a-question.yaml:3:8: title: must be a question"),
        ("self-related.yaml", "self-related.yaml:9:5: related[0]: a term cannot be related to itself"),
        ("no-full-stop.yaml", "no-full-stop.yaml:4:13: definition: must end with a full stop"),
        (
            "lookalike-name.yaml",
            "lookalike-name.yaml:2:7: name: 'РТХ' looks like 'PTX' of tests/fixtures/broken/ptx.yaml (name)",
        ),
        (
            "mixed-script.yaml",
            "mixed-script.yaml:7:6: U+0422 CYRILLIC CAPITAL LETTER TE in 'PТX' is a Cyrillic letter that looks like"
            " a Latin one",
        ),
        (
            "bidi-override.yaml",
            "bidi-override.yaml:3:21: U+202E RIGHT-TO-LEFT OVERRIDE is a bidirectional embedding or override",
        ),
        ("zero-width.yaml", "zero-width.yaml:7:6: U+200B ZERO WIDTH SPACE is an invisible character"),
        (
            "escaped-control.yaml",
            "escaped-control.yaml:7:13: the escape '\\u2066' makes U+2066 LEFT-TO-RIGHT ISOLATE,"
            " which is not plain text",
        ),
        (
            "not-nfc.yaml",
            "not-nfc.yaml:2:19: U+0301 COMBINING ACUTE ACCENT makes this text not NFC (Unicode's composed form)",
        ),
        (
            "fullwidth.yaml",
            "fullwidth.yaml:7:5: abbreviations[0]: 'ＦＷＣ' has 'Ｆ' (U+FF26 FULLWIDTH LATIN CAPITAL LETTER F),"
            " a compatibility form of 'F'",
        ),
        ("future-date.yaml", "future-date.yaml:9:17: sources[0].checked_on: 2999-01-01 is in the future"),
        (
            "malformed-url.yaml",
            "malformed-url.yaml:8:10: sources[0].url: 'http://[::1/x' is not a well-formed URL (Invalid IPv6 URL)",
        ),
        (
            "url-credentials.yaml",
            "url-credentials.yaml:8:11: where_you_meet_this[0].link: 'https://user:secret@example.com/tool'"
            " carries a user name or password",
        ),
        (
            "email-byline.yaml",
            "email-byline.yaml:9:15: byline.written_by: holds an e-mail address, which would be published",
        ),
        ("deep-nesting.yaml", "deep-nesting.yaml:6:41: values are nested more than 32 levels deep"),
        ("too-many-aliases.yaml", "too-many-aliases.yaml:57:5: aliases: has 60 items; at most 50 are allowed"),
    ],
)
def test_exact_message(in_root: Path, file: str, expected: str) -> None:
    lines = [d.format().split("\n")[0] for d in _report(in_root).diagnostics]
    assert f"tests/fixtures/broken/{expected}" in lines


def test_every_diagnostic_has_a_hint(in_root: Path) -> None:
    assert all(d.hint for d in _report(in_root).diagnostics)


def test_python_tag_is_not_executed(in_root: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    folder = tmp_path / "terms"
    folder.mkdir()
    (folder / "_sections.yaml").write_text((BROKEN / "_sections.yaml").read_text())
    text = (BROKEN / "python-tag.yaml").read_text().replace("echo pwned", f"touch {marker}")
    (folder / "python-tag.yaml").write_text(text)
    with pytest.raises(GlossaryError):
        load_corpus(folder)
    assert not marker.exists()


def test_check_command_reports_all_and_exits_nonzero_without_traceback(in_root: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "cudagloss", "check", "tests/fixtures/broken"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().endswith(f"{len(_report(in_root).diagnostics)} errors found")
    assert run.stderr.count("tests/fixtures/broken/") >= 24


def test_check_command_passes_on_the_repository_terms() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "cudagloss", "check", "terms"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert "no errors" in run.stdout


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "cudagloss", "check", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    assert "not a folder of term files" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_libyaml_fast_path_reads_terms_exactly_as_the_python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Same terms, same line and column of every field, with and without libyaml."""
    import yaml

    from cudagloss.load.terms import load_term, term_files

    files = term_files(ROOT / "terms")
    fast = [load_term(p, ROOT) for p in files]
    monkeypatch.setattr(yaml, "__with_libyaml__", False)
    slow = [load_term(p, ROOT) for p in files]
    for (a, da), (b, db) in zip(fast, slow, strict=True):
        assert a is not None and b is not None and da == db
        assert a.term == b.term
        assert a.positions == b.positions
