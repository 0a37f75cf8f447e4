"""Hostile term files: look-alike names, hidden characters, deep nesting, huge files, future
dates, malformed URLs and e-mail addresses, from YAML and from git history.

Each case asserts the exact diagnostic (path:line:col and message start) and that nothing
but a GlossaryError comes out: no RecursionError, no ValueError, no hang.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

from cudagloss.check.entries import entry_of
from cudagloss.check.fields import utc_today
from cudagloss.check.names import name_diagnostics
from cudagloss.errors import GlossaryError
from cudagloss.links.history import clean_name, read_history
from cudagloss.load.corpus import load_corpus
from cudagloss.load.terms import SECTIONS_FILE_MAX
from cudagloss.load.yamlnodes import compose
from cudagloss.model.corpus import LoadedTerm
from cudagloss.model.measurement_rules import fit_text
from cudagloss.model.positions import Positions
from cudagloss.model.term import Term
from cudagloss.model.urls import url_problem
from cudagloss.text.characters import scan_text
from cudagloss.text.emails import has_email, redact_email, without_email

HEAD = "# yaml-language-server: $schema=../schema/term.schema.json\n"
SECTIONS = (
    "# yaml-language-server: $schema=../schema/sections.schema.json\nsections:\n  - slug: basics\n    title: Basics\n"
)


def term(name: str = "Plain term", extra: str = "", *, title: str = "", body: str = "A body.") -> str:
    """A valid term file: name on line 2, title 3, definition 4, body text on line 7, extra from line 8."""
    return (
        f"{HEAD}name: {name}\ntitle: {title or 'What is it?'}\ndefinition: A term used by these tests.\n"
        f"section: basics\nbody: |\n  {body}\n{extra}"
    )


def check(root: Path, files: Mapping[str, str | bytes], sections: str = SECTIONS) -> list[str]:
    """The first line of every diagnostic of a glossary made of files (empty when it passes)."""
    folder = root / "terms"
    folder.mkdir(exist_ok=True)
    (folder / "_sections.yaml").write_text(sections, encoding="utf-8", newline="")
    for name, content in files.items():
        path = folder / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
    try:
        load_corpus(folder, root)
    except GlossaryError as exc:
        return [f"{d.path}:{d.line}:{d.col}: {d.message}" for d in exc.diagnostics]
    return []


def only(found: list[str], expected: str) -> None:
    assert len(found) == 1 and found[0].startswith(expected), found


# --- look-alike names -----------------------------------------------------------------

LOOK_ALIKES = [
    # (a.yaml's name, b.yaml's name or alias line, expected diagnostic of b.yaml)
    ("PTX", "name: РТХ", "terms/b.yaml:2:7: name: 'РТХ' looks like 'PTX' of terms/a.yaml (name)"),
    ("ptx", "name: РТХ", "terms/b.yaml:2:7: name: 'РТХ' looks like 'ptx' of terms/a.yaml (name)"),
    ("IO", "name: ΙΟ", "terms/b.yaml:2:7: name: 'ΙΟ' looks like 'IO' of terms/a.yaml (name)"),  # Greek Iota, Omicron
    ("Scope", "name: Ѕсоре", "terms/b.yaml:2:7: name: 'Ѕсоре' looks like 'Scope' of terms/a.yaml"),  # all Cyrillic
    ("SM", "name: srn", "terms/b.yaml:2:7: name: 'srn' looks like 'SM' of terms/a.yaml (name)"),  # rn / m
    ("l1", "name: I1", "terms/b.yaml:2:7: name: 'I1' looks like 'l1' of terms/a.yaml (name)"),
]


@pytest.mark.parametrize(("first", "second", "expected"), LOOK_ALIKES)
def test_a_look_alike_of_another_terms_name_is_refused(tmp_path: Path, first: str, second: str, expected: str) -> None:
    b = term().replace("name: Plain term", second)
    only(check(tmp_path, {"a.yaml": term(first), "b.yaml": b}), expected)


def test_the_disguised_form_is_blamed_whatever_the_file_order(tmp_path: Path) -> None:
    found = check(tmp_path, {"a.yaml": term("РТХ"), "z.yaml": term("PTX")})
    only(found, "terms/a.yaml:2:7: name: 'РТХ' looks like 'PTX' of terms/z.yaml (name)")


def test_a_look_alike_alias_names_the_other_file_and_field(tmp_path: Path) -> None:
    files = {"a.yaml": term("PTX"), "b.yaml": term("Other", "aliases:\n  - Parallel\n  - РТХ\n")}
    only(check(tmp_path, files), "terms/b.yaml:10:5: aliases[1]: 'РТХ' looks like 'PTX' of terms/a.yaml (name)")


@pytest.mark.parametrize(
    ("alias", "col", "message"),
    [
        ("PТX", 6, "U+0422 CYRILLIC CAPITAL LETTER TE in 'PТX' is a Cyrillic letter that looks like a Latin one"),
        ("pοrt", 6, "U+03BF GREEK SMALL LETTER OMICRON in 'pοrt' is a Greek letter"),
        ("сeть", 6, "U+0065 LATIN SMALL LETTER E in 'сeть' is a Latin letter that looks like a Cyrillic one"),
        ("sm_8О", 9, "U+041E CYRILLIC CAPITAL LETTER O in 'sm_8О'"),
        ("the PТX cache", 10, "U+0422 CYRILLIC CAPITAL LETTER TE"),
    ],
)
def test_a_word_mixing_look_alike_letters_of_two_scripts_is_refused_alone(
    tmp_path: Path, alias: str, col: int, message: str
) -> None:
    only(check(tmp_path, {"a.yaml": term("Mixed", f"aliases:\n  - {alias}\n")}), f"terms/a.yaml:9:{col}: {message}")


@pytest.mark.parametrize(
    ("alias", "message"),
    [
        ("ＰＴＸ", "'ＰＴＸ' has 'Ｐ' (U+FF30 FULLWIDTH LATIN CAPITAL LETTER P), a compatibility form of 'P'"),
        ("𝐏𝐓𝐗", "'𝐏𝐓𝐗' has '𝐏' (U+1D40F MATHEMATICAL BOLD CAPITAL P), a compatibility form of 'P'"),
        ("ﬁle", "'ﬁle' has 'ﬁ' (U+FB01 LATIN SMALL LIGATURE FI), a compatibility form of 'fi'"),
        ("CUDA\u00a0core", "'CUDA\u00a0core' has U+00A0 NO-BREAK SPACE; use a plain space"),
        ("CUDA\u3000core", "'CUDA\u3000core' has U+3000 IDEOGRAPHIC SPACE; use a plain space"),
    ],
)
def test_compatibility_forms_and_odd_spaces_in_names_are_refused(tmp_path: Path, alias: str, message: str) -> None:
    only(
        check(tmp_path, {"a.yaml": term("Plain", f"aliases:\n  - {alias}\n")}),
        f"terms/a.yaml:9:5: aliases[0]: {message}",
    )


def test_nfd_text_is_refused_where_it_is_even_when_its_nfc_twin_exists(tmp_path: Path) -> None:
    files = {"a.yaml": term("Café"), "b.yaml": term("Cafe\u0301 latte")}
    only(check(tmp_path, files), "terms/b.yaml:2:11: U+0301 COMBINING ACUTE ACCENT makes this text not NFC")


def test_legitimate_non_latin_text_passes(tmp_path: Path) -> None:
    extra = "aliases:\n  - 5 μs latency\n  - Δt step\n  - π estimate\n  - naïve kernel\n  - カーネル関数\n  - αβγ\n"
    body = "Time is Δt, 5 μs or 2π radians; Москва and 東京 are words of one script."
    assert check(tmp_path, {"a.yaml": term("Greek letters", extra, body=body)}) == []


def test_look_alike_check_finds_the_one_disguised_name_among_5000_terms() -> None:
    terms = [
        LoadedTerm(
            slug=f"t{i}",
            path=f"terms/t{i}.yaml",
            file=Path(f"t{i}.yaml"),
            term=Term(f"Kernel {i}", "What?", "A term.", "basics", "Body.", aliases=[f"K{i} alias", f"Ядро {i}"]),
            positions=Positions(),
        )
        for i in range(5000)
    ]
    terms.append(
        LoadedTerm(
            "evil", "terms/evil.yaml", Path("evil.yaml"), Term("Кеrnеl 7", "?", "A.", "basics", "B."), Positions()
        )
    )
    found = list(name_diagnostics([entry_of(t) for t in terms]))  # bench/hostile.py times this
    assert [d.message for d in found] == ["name: 'Кеrnеl 7' looks like 'Kernel 7' of terms/t7.yaml (name)"]


def test_look_alike_file_names_are_refused_at_the_later_file(tmp_path: Path) -> None:
    files = {"m-cache.yaml": term("First"), "rn-cache.yaml": term("Second")}
    only(check(tmp_path, files), "terms/rn-cache.yaml:1:1: file name 'rn-cache' looks like 'm-cache'")


def test_a_file_name_with_a_newline_is_not_a_slug(tmp_path: Path) -> None:
    only(check(tmp_path, {"ptx\n.yaml": term()}), "terms/ptx\n.yaml:1:1: file name 'ptx\n.yaml' is not a valid slug")


@pytest.mark.parametrize(
    ("slugs", "expected"),
    [
        (("basics", "Basics"), "terms/_sections.yaml:5:11: sections[1].slug: 'Basics' is not a slug"),
        (("basics", "rn"), None),
        (("rn", "basics", "m"), "terms/_sections.yaml:7:11: sections[2].slug: 'm' looks like 'rn'"),
        (("basics", "basics"), "terms/_sections.yaml:5:11: sections[1]: duplicate section 'basics'"),
    ],
)
def test_section_slugs_are_slugs_and_do_not_look_alike(
    tmp_path: Path, slugs: tuple[str, ...], expected: str | None
) -> None:
    sections = SECTIONS.split("  - ")[0] + "".join(f"  - slug: {s}\n    title: T {s}\n" for s in slugs)
    found = check(tmp_path, {"a.yaml": term()}, sections)
    assert found == [] if expected is None else (len(found) == 1 and found[0].startswith(expected)), found


# --- hidden characters ------------------------------------------------------------------

HIDDEN = {
    "\u202a": "U+202A LEFT-TO-RIGHT EMBEDDING",
    "\u202b": "U+202B RIGHT-TO-LEFT EMBEDDING",
    "\u202c": "U+202C POP DIRECTIONAL FORMATTING",
    "\u202d": "U+202D LEFT-TO-RIGHT OVERRIDE",
    "\u202e": "U+202E RIGHT-TO-LEFT OVERRIDE",
    "\u2066": "U+2066 LEFT-TO-RIGHT ISOLATE",
    "\u2067": "U+2067 RIGHT-TO-LEFT ISOLATE",
    "\u2068": "U+2068 FIRST STRONG ISOLATE",
    "\u2069": "U+2069 POP DIRECTIONAL ISOLATE",
    "\u200e": "U+200E LEFT-TO-RIGHT MARK",
    "\u200f": "U+200F RIGHT-TO-LEFT MARK",
    "\u061c": "U+061C ARABIC LETTER MARK",
    "\u200b": "U+200B ZERO WIDTH SPACE",
    "\u200c": "U+200C ZERO WIDTH NON-JOINER",
    "\u200d": "U+200D ZERO WIDTH JOINER",
    "\u2060": "U+2060 WORD JOINER",
    "\ufeff": "U+FEFF ZERO WIDTH NO-BREAK SPACE",
    "\u00ad": "U+00AD SOFT HYPHEN",
    "\U000e0041": "U+E0041 TAG LATIN CAPITAL LETTER A",
    "\U000e007f": "U+E007F CANCEL TAG",
    "\u034f": "U+034F COMBINING GRAPHEME JOINER",
    "\ufe0f": "U+FE0F VARIATION SELECTOR-16",
    "\u3164": "U+3164 HANGUL FILLER",
    "\u2800": "U+2800 BRAILLE PATTERN BLANK",
    "\u2028": "U+2028 LINE SEPARATOR",
    "\u2029": "U+2029 PARAGRAPH SEPARATOR",
    "\x85": "U+0085",
    "\x1b": "U+001B",
    "\x7f": "U+007F",
    "\x00": "U+0000",
    "\x08": "U+0008",
    "\ue000": "U+E000",
    "\u0378": "U+0378",
}
PLACES = {
    # where the character goes, as (text before it on its line, line number)
    "name": ("name: Hid", 2),
    "title": ("title: What is hid", 3),
    "body": ("  A bo", 7),
    "comment": ("# a comm", 8),
    "source-title": ("  - title: A pa", 10),
    "byline": ("  written_by: Ada", 13),
    "key": ("sec", 5),
}


def _hostile_term(place: str, ch: str) -> str:
    text = (
        term("Hidden", "# a comment\nsources:\n  - title: A page\n    url: https://example.com/a\nbyline:\n")
        + "  written_by: Ada Author\n"
    )
    text = text.replace("title: What is it?", "title: What is hidden?")
    before, line = PLACES[place]
    lines = text.split("\n")
    assert lines[line - 1].startswith(before), (lines[line - 1], before)
    lines[line - 1] = before + ch + lines[line - 1][len(before) :]
    return "\n".join(lines)


@pytest.mark.parametrize("ch", list(HIDDEN), ids=[HIDDEN[c].split(" ", 1)[0] for c in HIDDEN])
@pytest.mark.parametrize("place", list(PLACES))
def test_a_hidden_character_is_refused_at_its_exact_position(tmp_path: Path, place: str, ch: str) -> None:
    before, line = PLACES[place]
    found = check(tmp_path, {"a.yaml": _hostile_term(place, ch)})
    assert found, "accepted"
    assert found[0].startswith(f"terms/a.yaml:{line}:{len(before) + 1}: {HIDDEN[ch]}"), found


@pytest.mark.parametrize("ch", ["\u202e", "\u200b", "\x07"])
def test_hidden_characters_in_the_sections_file_are_refused(tmp_path: Path, ch: str) -> None:
    sections = SECTIONS + f"    description: Basi{ch}cs first.\n"
    found = check(tmp_path, {"a.yaml": term()}, sections)
    assert found[0].startswith(f"terms/_sections.yaml:5:22: {HIDDEN.get(ch, 'U+0007')}"), found


def test_a_flood_of_hidden_characters_gives_a_bounded_report(tmp_path: Path) -> None:
    found = check(tmp_path, {"a.yaml": term("Flood", body="\u200b" * 50_000)})
    assert len(found) == 20 and found[0].startswith("terms/a.yaml:7:3: U+200B ZERO WIDTH SPACE")


def test_url_checks_never_raise_on_garbage() -> None:
    rng = random.Random(12)
    alphabet = [*"htps:/[]@%#?\\.-_09a", "\u202e", "\x00", "é", "例", " "]
    for _ in range(3_000):
        url = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert url_problem(url) is None or isinstance(url_problem(url), str)
    assert url_problem("https://example.com/a") is None and url_problem("https://[::1/x") is not None


def test_a_lone_carriage_return_is_refused_and_crlf_is_not(tmp_path: Path) -> None:
    assert check(tmp_path, {"a.yaml": term().replace("\n", "\r\n")}) == []
    only(
        check(tmp_path, {"a.yaml": term().replace("title: What", "title: Wh\rat")}),
        "terms/a.yaml:3:10: U+000D is a carriage return without a line feed",
    )


@pytest.mark.parametrize("escape", ["\\u202e", "\\x00", "\\U000E0041", "\\N", "\\L", "\\e", "\\u200B", "\\_"])
@pytest.mark.parametrize("libyaml", [True, False])
def test_an_escape_that_makes_a_hidden_character_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, escape: str, libyaml: bool
) -> None:
    """The first one is an escaped backslash: text, not an escape."""
    monkeypatch.setattr(yaml, "__with_libyaml__", libyaml and yaml.__with_libyaml__)
    text = term("Escapes", f'aliases:\n  - "an escape \\\\{escape[1:]} and\n    {escape}"\n')
    only(check(tmp_path, {"a.yaml": text}), f"terms/a.yaml:10:5: the escape '{escape}' makes U+")


@pytest.mark.parametrize("libyaml", [True, False])
def test_the_yaml_reader_refusing_a_character_is_a_diagnostic(monkeypatch: pytest.MonkeyPatch, libyaml: bool) -> None:
    monkeypatch.setattr(yaml, "__with_libyaml__", libyaml and yaml.__with_libyaml__)
    node, found = compose("f.yaml", "a: b\nc: d\x07e\n")
    assert node is None and [(d.line, d.col, d.message) for d in found] == [(2, 5, "YAML cannot hold U+0007")]


def test_plain_escapes_pass(tmp_path: Path) -> None:
    assert check(tmp_path, {"a.yaml": term("Escapes", 'error_strings:\n  - "tab\\there \\"quoted\\" \\u0041"\n')}) == []


# --- bounds -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "aliases: " + "[" * 10_000 + "]" * 10_000 + "\n",
        "aliases: " + "[" * 10_000 + "\n",
        "aliases: " + "{a: " * 5_000 + "b" + "}" * 5_000 + "\n",
        "aliases:\n" + "".join("  " * (i + 1) + "- \n" for i in range(300)) + "  " * 301 + "x\n",
        "aliases:\n  - " + "- " * 10_000 + "x\n",
    ],
    ids=["flow-lists", "unclosed", "flow-maps", "block-indent", "dashes"],
)
@pytest.mark.parametrize("libyaml", [True, False])
def test_deep_nesting_is_a_diagnostic_not_a_recursion_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, libyaml: bool
) -> None:
    monkeypatch.setattr(yaml, "__with_libyaml__", libyaml and yaml.__with_libyaml__)
    found = check(tmp_path, {"a.yaml": term("Deep", text)})
    assert len(found) == 1 and found[0].startswith("terms/a.yaml:") and "nested more than 32 levels deep" in found[0]
    line, col = map(int, found[0].split(":")[1:3])
    assert line >= 8 and col >= 1


def test_deep_nesting_in_the_sections_file_is_a_diagnostic(tmp_path: Path) -> None:
    found = check(tmp_path, {"a.yaml": term()}, SECTIONS + "    description: " + "[" * 10_000 + "\n")
    assert found[0].startswith("terms/_sections.yaml:5:") and "nested more than 32 levels deep" in found[0]


def test_deep_nesting_at_depth_32_passes_the_reader_and_fails_only_on_type(tmp_path: Path) -> None:
    found = check(tmp_path, {"a.yaml": term("Deep", "aliases: " + "[" * 30 + "]" * 30 + "\n")})
    assert found == ["terms/a.yaml:8:11: aliases[0]: expected text, got a list"]


def test_a_billion_laughs_is_refused_quickly(tmp_path: Path) -> None:
    lol = "aliases: &a0 [lol, lol]\n" + "".join(
        f"error_strings{i}: &a{i} [*a{i - 1}, *a{i - 1}]\n" for i in range(1, 9)
    )
    found = check(tmp_path, {"a.yaml": term("Laughs", lol)})  # refused at the first alias, never expanded
    assert found[0] == "terms/a.yaml:9:22: alias '*a0' is not allowed"


def test_a_file_over_256_kb_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    huge = term("Huge", "error_strings:\n" + "  - [[[[[[ not even YAML\n" * 12_000)
    assert len(huge.encode()) > 256 * 1024
    only(check(tmp_path, {"a.yaml": huge}), "terms/a.yaml:1:1: the file is larger than 256 KB")
    sections = SECTIONS + "#" * SECTIONS_FILE_MAX  # its own limit: a reading order of every term (TERMS_MAX)
    only(check(tmp_path, {"a.yaml": term()}, sections), "terms/_sections.yaml:1:1: the file is larger")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("body: |\n  A body.", "body: |\n  " + "word " * 8_001), "terms/a.yaml:6:7: body: is 40,006 characters long"),
        (("name: Plain term", "name: " + "n" * 101), "terms/a.yaml:2:7: name: is 101 characters long; at most 100"),
        (("title: What is it?", "title: " + "w" * 300 + "?"), "terms/a.yaml:3:8: title: is 301 characters long"),
        (
            ("section: basics\n", "section: basics\naliases:\n" + "  - x\n" * 51),
            "terms/a.yaml:57:5: aliases: has 51 items",
        ),
    ],
)
def test_values_and_lists_past_their_bound_are_refused_at_the_first_excess(
    tmp_path: Path, change: tuple[str, str], expected: str
) -> None:
    only(check(tmp_path, {"a.yaml": term().replace(*change)}), expected)


# --- dates ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("days", "field"),
    [(2, "checked_on"), (400, "checked_on"), (2, "written_on"), (2, "last_checked_on"), (1, None), (0, None)],
)
def test_dates_in_the_future_are_refused_with_one_day_of_slack(tmp_path: Path, days: int, field: str | None) -> None:
    day = (utc_today() + dt.timedelta(days=days)).isoformat()
    where = field or "checked_on"
    extra = "sources:\n  - title: A page\n    url: https://example.com/a\n"
    if where == "checked_on":
        extra += f"    checked_on: {day}\n"
    else:
        extra += f"byline:\n  {where}: {day}\n"
    found = check(tmp_path, {"a.yaml": term("Dated", extra)})
    if field is None:
        assert found == []
    else:
        prefix = "sources[0]." if where == "checked_on" else "byline."
        line, col = (11, 17) if where == "checked_on" else (12, len(where) + 5)
        only(found, f"terms/a.yaml:{line}:{col}: {prefix}{where}: {day} is in the future")


# --- URLs -------------------------------------------------------------------------------

BAD_URLS = {
    "http://[::1/x": "is not a well-formed URL",
    "http://[zzz]/": "is not a well-formed URL",
    "'https://example.com/a b'": "contains a space or a control character",
    "'https://exa mple.com/'": "contains a space or a control character",
    "javascript:alert(1)": "is not an http(s) URL",
    "JaVaScRiPt:alert(1)": "is not an http(s) URL",
    "'data:text/html,<script>alert(1)</script>'": "is not an http(s) URL",
    "vbscript:msgbox": "is not an http(s) URL",
    "file:///etc/passwd": "is not an http(s) URL",
    "ftp://example.com/x": "is not an http(s) URL",
    "//example.com/x": "is not an http(s) URL",
    "https://user:pass@example.com/": "carries a user name or password",
    "https://user@example.com/": "carries a user name or password",
    "https://example.com@evil.example/": "carries a user name or password",
    "'https:\\\\evil.example/'": "contains a backslash",
    "https://": "has no host name",
    "https:///path": "has no host name",
    "http://example.com:99999/": "is not a well-formed URL",
    "http://example.com:abc/": "is not a well-formed URL",
    "http://example.com:0/": "has port 0",
    "http://exa_mple..com/": "has a malformed host name",
    "http://-bad-.example/": "has a malformed host name",
    "http://%65vil.example/": "has a malformed host name",
    "http://[2001:db8::1]:8080/x": "leads to a host that is 2001:db8::1, a private network's address",
    "https://xn--pple-43d.example/": (
        "has a host label 'аpple' that mixes scripts, as a look-alike of another name does"
    ),
    "https://аррӏе.example/": "has a host label 'аррӏе' in letters that look like the Latin 'appie'",
    "https://xn--zz.example/": "has a punycode label that does not decode (xn--zz)",
}
GOOD_URLS = [
    "HTTPS://EXAMPLE.COM/A",
    "https://例え.jp/パス",
    "http://[2606:4700:4700::1111]:8080/x",  # a public IPv6 address (2001:db8:: is for documentation: refused)
    "https://пример.рф/",  # a Russian name in Cyrillic that looks like no Latin one
    "https://xn--e1afmkfd.xn--p1ai/",  # the same, as punycode
    "https://a.example./x?q=1#f",
]


@pytest.mark.parametrize("url", list(BAD_URLS))
@pytest.mark.parametrize("field", ["sources", "where_you_meet_this"])
def test_a_malformed_url_is_an_author_error_at_its_position(tmp_path: Path, url: str, field: str) -> None:
    key = "url" if field == "sources" else "link"
    extra = f"{field}:\n  - {'title' if key == 'url' else 'label'}: A page\n    {key}: {url}\n"
    shown = yaml.safe_load(url)
    col = 7 + len(key)
    only(
        check(tmp_path, {"a.yaml": term("Linked", extra)}),
        f"terms/a.yaml:10:{col}: {field}[0].{key}: '{shown}' {BAD_URLS[url]}",
    )


def test_a_homograph_host_name_is_refused_at_its_letter(tmp_path: Path) -> None:
    extra = "sources:\n  - title: A page\n    url: https://аpple.example/\n"  # a Cyrillic 'а'
    found = check(tmp_path, {"a.yaml": term("Homograph", extra)})
    only(found, "terms/a.yaml:10:18: U+0430 CYRILLIC SMALL LETTER A in 'аpple' is a Cyrillic letter that looks like")


@pytest.mark.parametrize("url", GOOD_URLS)
def test_well_formed_urls_pass(tmp_path: Path, url: str) -> None:
    assert check(tmp_path, {"a.yaml": term("Linked", f"sources:\n  - title: A page\n    url: '{url}'\n")}) == []


# --- e-mail addresses -------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["Ada <ada@example.org>", "ada@example.org", "Ada Author (ada.author@mail.example.co.uk)", "<a@b.cd>"]
)
@pytest.mark.parametrize("field", ["written_by", "reviewed_by"])
def test_an_e_mail_address_typed_into_a_byline_is_refused(tmp_path: Path, name: str, field: str) -> None:
    found = check(tmp_path, {"a.yaml": term("Signed", f"byline:\n  {field}: '{name}'\n")})
    only(found, f"terms/a.yaml:9:{len(field) + 5}: byline.{field}: holds an e-mail address, which would be published")


ADDRESS = '"ada.lovelace"@example.org'
EVERY_FIELD = {
    # where: (term file text with ADDRESS in that field, line:col of the diagnostic)
    "name": (term(f"Ada {ADDRESS}"), "2:7"),
    "title": (term(title=f"What is {ADDRESS}?"), "3:8"),
    "definition": (term().replace("A term used by these tests.", f"Mail {ADDRESS}."), "4:13"),
    "body": (term(body=f"Write to {ADDRESS}."), "7:12"),  # where the address is
    "aliases[0]": (term(extra=f"aliases:\n  - 'x {ADDRESS}'\n"), "9:5"),
    "abbreviations[0]": (term(extra=f"abbreviations:\n  - '{ADDRESS}'\n"), "9:5"),
    "plurals[0]": (term(extra=f"plurals:\n  - '{ADDRESS}'\n"), "9:5"),
    "error_strings[0]": (term(extra=f"error_strings:\n  - 'failed: {ADDRESS}'\n"), "9:5"),
    "where_you_meet_this[0].label": (term(extra=f"where_you_meet_this:\n  - label: '{ADDRESS}'\n"), "9:12"),
    "where_you_meet_this[0].note": (
        term(extra=f"where_you_meet_this:\n  - label: A\n    note: 'Ask {ADDRESS}.'\n"),
        "10:11",
    ),
    "sources[0].title": (
        term(extra=f"sources:\n  - title: 'By {ADDRESS}'\n    url: https://example.org/a\n"),
        "9:12",
    ),
    "byline.written_by": (term(extra="byline:\n  written_by: charles@[192.0.2.7]\n"), "9:15"),
}


@pytest.mark.parametrize("where", list(EVERY_FIELD))
def test_an_e_mail_address_in_any_text_field_is_refused_there(tmp_path: Path, where: str) -> None:
    text, at = EVERY_FIELD[where]
    only(check(tmp_path, {"a.yaml": text}), f"terms/a.yaml:{at}: {where}: holds an e-mail address")


def test_an_e_mail_address_in_a_measurement_note_is_refused_there(tmp_path: Path) -> None:
    """Checked without measurement files: the note is author text like any other."""
    text = term(extra=f"measurements:\n  - experiment: ptx-jit\n    note: 'Thanks to {ADDRESS}.'\n")
    only(check(tmp_path, {"a.yaml": text}), "terms/a.yaml:10:11: measurements[0].note: holds an e-mail address")


@pytest.mark.parametrize(
    ("field", "at"), [("title", "4:12"), ("description", "5:18")], ids=["section-title", "section-description"]
)
def test_an_e_mail_address_in_the_sections_file_is_refused_there(tmp_path: Path, field: str, at: str) -> None:
    sections = SECTIONS + "    description: Basics.\n"
    sections = sections.replace(
        "title: Basics", "title: Basics for ada@example.org" if field == "title" else "title: B"
    )
    if field == "description":
        sections = sections.replace("description: Basics.", "description: Ask ada@example.org.")
    only(check(tmp_path, {"a.yaml": term()}, sections), f"terms/_sections.yaml:{at}: sections[0].{field}: holds")


DISGUISED = {
    "plain": "ada@example.org",
    "bracketed-no-dot": "<ada@localhost>",  # Markdown makes it a mailto: link
    "quoted-local": '"ada lovelace"@example.org',
    "ipv4-domain": "charles@[192.0.2.7]",
    "ipv6-domain": "charles@[IPv6:2001:db8::7]",
    "plus-tag": "ada+glossary@mail.example.co.uk",
    "html-entity": "ada&#64;example.org",
    "named-entity": "ada&commat;example.org",
    "percent": "ada%40example.org",
    "markdown-escape": "ada\\@example.org",
    "idn": "ada@bücher.example",
    "uppercase": "ADA@EXAMPLE.ORG",
}


@pytest.mark.parametrize("form", list(DISGUISED.values()), ids=list(DISGUISED))
def test_an_e_mail_address_is_found_however_it_is_written(tmp_path: Path, form: str) -> None:
    found = check(tmp_path, {"a.yaml": term(body=f"Write to {form} today.")})
    assert len(found) == 1 and found[0].startswith("terms/a.yaml:7:") and "body: holds an e-mail" in found[0], found


THROUGH_MARKDOWN = {
    # Markdown takes these marks away, so the page shows ada@example.org
    "escaped-dot": "ada@example\\.org",
    "escaped-at-and-dot": "ada\\@example\\.org",
    "escaped-hyphen": "ada@my\\-example.org",
    "emphasis": "ada@example.*org*",
    "strong": "ada@**example**.org",
    "underscores": "ada@example.__org__",
    "code-span": "ada@example`.`org",
    "strike-through": "ada@example.~~org~~",
    "html-tag": "ada@example<b>.</b>org",
    "html-comment": "ada@example<!-- -->.org",
    "entity-and-escape": "ada&#64;example\\.org",
    "emphasised-local": "*ada*@example.org",
}


@pytest.mark.parametrize("form", list(THROUGH_MARKDOWN.values()), ids=list(THROUGH_MARKDOWN))
def test_an_e_mail_address_split_by_markdown_markup_is_found(tmp_path: Path, form: str) -> None:
    assert has_email(form) and "@" not in without_email(form) and "ada" not in redact_email(form)
    found = check(tmp_path, {"a.yaml": term(body=f"Contact {form} today.")})
    assert len(found) == 1 and found[0].startswith("terms/a.yaml:7:") and "body: holds an e-mail" in found[0], found


def test_the_reviewed_body_with_three_marked_up_addresses_is_refused_at_the_first(tmp_path: Path) -> None:
    body = "Contact ada@example\\.org or bob@example.*org* or cy@example`.`org today."
    only(check(tmp_path, {"a.yaml": term(body=body)}), "terms/a.yaml:7:14: body: holds an e-mail address")
    title = "Ask ada@example.*org*?"
    only(check(tmp_path, {"a.yaml": term(title=title)}), "terms/a.yaml:3:8: title: holds an e-mail address")


@pytest.mark.parametrize("form", [*DISGUISED.values(), *THROUGH_MARKDOWN.values()])
def test_removing_or_redacting_leaves_no_address_even_beside_a_plain_one(form: str) -> None:
    """A crash's log made to pass the rules (fit_text) must pass them: every form goes."""
    text = f"failed for eve@example.net, then {form} (from git@github.com:NVIDIA/x.git)"
    assert not has_email(without_email(text)) and not has_email(redact_email(text)), redact_email(text)
    assert not has_email(fit_text(text)) and "git@github.com:NVIDIA/x.git" in fit_text(text)


SSH_REMOTES = [
    "git clone git@github.com:NVIDIA/cuda-samples.git",
    "`git clone git@github.com:NVIDIA/cuda-samples.git`",
    "git@gitlab.example.org:group/sub_group/repo.git",
    "scp build.log ada@login.example.org:/scratch/logs/",
    "rsync -a out/ ada@node01.cluster.example:~/runs/",
    "git remote add origin git@github.com:NVIDIA/cuda-samples",
]
NOT_REMOTES = [
    "Write to ada@example.org: she answers.",  # ':' and a space: prose
    "ada@example.org:",
    "Mail ada@example.org:today",  # no path
    "git@github.com:repo.git",  # no '/': taken as an address
    "ada@example.org :/x",
    "git@github.com:NVIDIA/x and ada@example\\.org",  # a remote, then an address
    "<git@github.com:NVIDIA/x>",  # Markdown makes it a mailto: link
]


@pytest.mark.parametrize("text", SSH_REMOTES)
def test_an_ssh_remote_is_no_e_mail_address(tmp_path: Path, text: str) -> None:
    assert not has_email(text) and without_email(text) == text


@pytest.mark.parametrize("text", NOT_REMOTES)
def test_an_address_followed_by_a_colon_but_no_path_is_still_one(text: str) -> None:
    assert has_email(text)


def test_an_ssh_remote_in_a_body_passes_and_an_address_beside_it_is_found(tmp_path: Path) -> None:
    assert check(tmp_path, {"a.yaml": term(body=" ".join(SSH_REMOTES))}) == []
    body = "Run `git clone git@github.com:NVIDIA/cuda-samples.git`, then ask ada@example\\.org."
    only(check(tmp_path, {"a.yaml": term(body=body)}), "terms/a.yaml:7:71: body: holds an e-mail address")


MAILTO = {
    "inline": ("[write](mailto:ada)", "7:13"),
    "upper-case": ("[write](MAILTO:ada%40example.org)", "7:13"),  # and the address, at 7:23
    "entity-scheme": ("[write](&#109;ailto:ada)", "7:13"),
    "angle-target": ("[write](<mailto:ada>)", "7:14"),
    "reference": ("[write][r]\n\n  [r]: mailto:ada", "9:8"),
}


@pytest.mark.parametrize(("link", "at"), list(MAILTO.values()), ids=list(MAILTO))
def test_a_mailto_link_is_refused_however_its_address_is_spelt(tmp_path: Path, link: str, at: str) -> None:
    found = check(tmp_path, {"a.yaml": term(body=f"A {link}")})
    assert found[0].startswith(f"terms/a.yaml:{at}: body: link to ") and "is an e-mail address" in found[0], found


@pytest.mark.parametrize(
    "text",
    [
        "Compile for sm_90@home and run.",
        "In Python, `y = a@b.T` multiplies.",
        "Decorate it with `@cuda.jit` first.",
        "See [her notes](https://medium.com/@ada.lovelace/notes) on it.",
        "Log in as user@host over ssh.",
        "AT&T and R&amp;D.",
    ],
    ids=["no-dot-domain", "matrix-product", "decorator", "medium-url", "user-at-host", "ampersands"],
)
def test_an_at_sign_that_is_no_address_passes(tmp_path: Path, text: str) -> None:
    assert check(tmp_path, {"a.yaml": term(body=text)}) == []


def _git(repo: Path, *args: str, author: str = "Ada Author") -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": author,
        "GIT_AUTHOR_EMAIL": "author@example.org",
        "GIT_COMMITTER_NAME": "Committer",
        "GIT_COMMITTER_EMAIL": "committer@example.org",
        "GIT_AUTHOR_DATE": "2026-10-01T12:00:00+00:00",
        "GIT_COMMITTER_DATE": "2026-10-01T12:00:00+00:00",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


HOSTILE_AUTHORS = {
    "a": ("<script>alert(1)</script>", "scriptalert(1)/script"),  # git itself drops '<' and '>'
    "b": ("[x](javascript:alert(1))", "[x](javascript:alert(1))"),  # safe data: the page escapes it
    "c": ("Eve \u202eliam\u2066 Doe\u200b", "Eve liam Doe"),
    "d": ("mallory@example.org", None),
}


def test_history_drops_addresses_and_hidden_characters_from_names(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "terms").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for slug, (author, _) in HOSTILE_AUTHORS.items():
        (repo / "terms" / f"{slug}.yaml").write_text(slug)
        _git(repo, "add", ".")
        _git(repo, "commit", "-qm", f"Add {slug}", author=author)
    (repo / "terms" / "a.yaml").write_text("reviewed")
    trailers = (
        "Reviewed-by: Eve Reviewer <eve@example.org>\nReviewed-by: bob@example.org\n"
        "Reviewed-by: Doe, Jane <jane@example.org>\nReviewed-by: Rlo \u202eKram"
    )
    _git(repo, "commit", "-qam", f"Review a\n\n{trailers}")
    history = read_history(repo, "terms")
    for slug, (_, published) in HOSTILE_AUTHORS.items():
        assert history[f"terms/{slug}.yaml"].written_by == published, slug
    assert history["terms/a.yaml"].reviewed_by == "Eve Reviewer, Doe, Jane, Rlo Kram"
    every = [h.written_by or "" for h in history.values()] + [h.reviewed_by or "" for h in history.values()]
    assert not any("@" in n or any(c in n for c in "\u202e\u2066\u200b") for n in every)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Ada <ada@example.org>", "Ada"),
        ("ada@example.org", None),
        ("pending", None),
        ("<ada@example.org>", None),
        ("  Ada\tAuthor\r\n", "Ada Author"),
        ("Cafe\u0301", "Café"),
        ("\u202e\u200b", None),
        ("x" * 500, "x" * 100),
    ],
)
def test_clean_name(raw: str, clean: str | None) -> None:
    assert clean_name(raw) == clean


def test_a_forged_future_commit_date_is_not_filled_in(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "terms").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "terms" / "a.yaml").write_text("a")
    _git(repo, "add", ".")
    env_date = "2090-01-01T00:00:00+00:00"
    subprocess.run(
        ["git", "commit", "-qm", "Add a"],
        cwd=repo,
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "Ada",
            "GIT_AUTHOR_EMAIL": "a@example.org",
            "GIT_AUTHOR_DATE": env_date,
            "GIT_COMMITTER_NAME": "Ada",
            "GIT_COMMITTER_EMAIL": "a@example.org",
        },
    )
    record = read_history(repo, "terms")["terms/a.yaml"]
    assert (record.written_by, record.written_on) == ("Ada", None)


# --- the command line -------------------------------------------------------------------


def test_the_check_command_reports_every_hostile_file_without_a_traceback(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        "deep.yaml": term("Deep", "aliases: " + "[" * 10_000 + "\n"),
        "huge.yaml": "#" * 300_000,
        "url.yaml": term("Url", "sources:\n  - title: A\n    url: http://[::1/x\n"),
        "rlo.yaml": term("Rlo\u202e"),
        "bytes.yaml": b"\xff\xfe" + term("Bytes").encode("utf-16-le"),
    }
    check(tmp_path, files)
    run = subprocess.run(
        [sys.executable, "-m", "cudagloss", "check", "terms"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().endswith("5 errors found"), run.stderr


def test_scan_text_passes_a_large_non_ascii_file() -> None:
    text = ("Москва and 東京 and naïve μs " * 8_000) + "\n"
    assert scan_text("f", text) == []  # bench/hostile.py times this


# --- the link checker's stamps, written by hand -------------------------------------------


@pytest.mark.parametrize(
    ("archived", "message"),
    [
        ("'javascript:alert(1)'", "is not an http(s) URL"),
        ("http://10.0.0.1/", "leads to a host that is 10.0.0.1, a private network's address"),
        ("https://user@web.archive.org/web/20250101000000/https://example.com/", "carries a user name or password"),
    ],
)
def test_an_archived_copy_that_is_not_a_public_page_is_refused(tmp_path: Path, archived: str, message: str) -> None:
    """archived_url is linked in place of the page once it is gone: the same rule as url."""
    extra = f"sources:\n  - title: A page\n    url: https://example.com/\n    archived_url: {archived}\n"
    shown = yaml.safe_load(archived)
    only(
        check(tmp_path, {"a.yaml": term("Archived", extra)}),
        f"terms/a.yaml:11:19: sources[0].archived_url: '{shown}' {message}",
    )
