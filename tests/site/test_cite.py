"""Cite this term: BibTeX read back by a BibTeX parser (pybtex) and CSL-JSON by json, for real
terms and for hostile names; dates only where known; the page's collapsed block keeps every
value inside its code fence."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from pathlib import Path
from typing import Any

import markdown
import pytest
from pybtex.database import parse_string  # type: ignore[import-untyped]

from conftest import ROOT
from cudagloss.model.corpus import LoadedTerm
from cudagloss.model.positions import Positions
from cudagloss.model.term import Byline, Term
from cudagloss.site.cite_this import CiteThisView, bibtex, cite_this_view, csl_json, fenced
from cudagloss.site.environment import make_environment

SITE = "https://glossary.example.org/cuda/"
NAME = "CUDA Glossary"

HOSTILE = [
    "unbalanced } close, title = {pwned",
    "unbalanced { open",
    "}}}},\n@misc{evil, title={x}}",
    "back\\slash \\end{document} \\input{/etc/passwd}",
    "% comment # hash & amp $ math _ under ~ tilde ^ caret",
    "fence ``` and ```````` longer ` `",
    "quotes \"double\" 'single' and , comma = equals",
    "line\u2028separator\u2029and\x85nel\r\nand\ttab",
    "Smith and Wesson",
    "</script><script>alert(1)</script> @ at",
]

# The inverse of citation.latex: what a LaTeX reader of the field shows.
_COMMANDS = {
    r"\textbackslash{}": "\\",
    r"\textbraceleft{}": "{",
    r"\textbraceright{}": "}",
    r"\textasciitilde{}": "~",
    r"\textasciicircum{}": "^",
    r"\textasciigrave{}": "`",
    r"\textless{}": "<",
    r"\textgreater{}": ">",
    r"\textbar{}": "|",
}


def _shown(field: str) -> str:
    pattern = "|".join(re.escape(c) for c in _COMMANDS) + r"|\\[%#&$_]"
    return re.sub(pattern, lambda m: _COMMANDS.get(m.group(0), m.group(0)[1:]), field)


def _term(name: str, byline: Byline | None = None, slug: str = "some-term") -> LoadedTerm:
    term = Term(name=name, title="T?", definition="D.", section="s", body="B.", byline=byline or Byline())
    return LoadedTerm(slug, f"terms/{slug}.yaml", Path(f"terms/{slug}.yaml"), term, Positions())


def _entry(text: str) -> tuple[str, Any]:
    """The one entry BibTeX's rules read from text: its key and the entry."""
    data = parse_string(text, "bibtex")
    assert len(data.entries) == 1, list(data.entries)
    key, entry = next(iter(data.entries.items()))
    return str(key), entry


def _depth_ok(text: str) -> bool:
    """BibTeX counts every brace, escaped or not: each field's braces must balance inside it."""
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def test_a_pending_byline_cites_the_site_and_gives_no_date() -> None:
    key, entry = _entry(bibtex(_term("PTX"), NAME, SITE))
    assert key == "cudaglossary:some-term"
    assert entry.type == "misc"
    assert [str(p) for p in entry.persons["author"]] == ["{CUDA Glossary}"]  # one corporate author
    assert dict(entry.fields) == {
        "title": "{PTX}",
        "howpublished": NAME,
        "url": f"{SITE}terms/some-term/",
        "note": "Glossary entry",
    }
    item = json.loads(csl_json(_term("PTX"), NAME, SITE))
    assert item == [
        {
            "id": key,
            "type": "entry-dictionary",
            "title": "PTX",
            "container-title": NAME,
            "URL": f"{SITE}terms/some-term/",
        }
    ]


def test_dates_come_from_the_byline_only() -> None:
    written = Byline("Ada Lovelace", "pending", dt.date(2026, 3, 9), dt.date(2026, 11, 30))
    _, entry = _entry(bibtex(_term("Warp", written), NAME, SITE))
    assert [str(p) for p in entry.persons["author"]] == ["Lovelace, Ada"]
    assert (entry.fields["year"], entry.fields["month"], entry.fields["urldate"]) == ("2026", "March", "2026-11-30")
    item = json.loads(csl_json(_term("Warp", written), NAME, SITE))[0]
    assert item["author"] == [{"literal": "Ada Lovelace"}]
    assert item["issued"] == {"date-parts": [[2026, 3, 9]]} and item["accessed"] == {"date-parts": [[2026, 11, 30]]}

    checked_only = Byline("pending", "pending", "pending", dt.date(2026, 11, 30))
    _, entry = _entry(bibtex(_term("Warp", checked_only), NAME, SITE))
    assert (entry.fields["year"], entry.fields["month"]) == ("2026", "November")
    _, entry = _entry(bibtex(_term("Warp", checked_only), NAME, None))  # no site URL: no address, no access day
    assert "url" not in entry.fields and "urldate" not in entry.fields and entry.fields["year"] == "2026"
    item = json.loads(csl_json(_term("Warp", checked_only), NAME, None))[0]
    assert "URL" not in item and "accessed" not in item and "author" not in item


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_hostile_name_stays_inside_its_field(hostile: str) -> None:
    text = bibtex(_term(hostile, Byline(written_by=hostile)), hostile, SITE)
    assert _depth_ok(text), text
    key, entry = _entry(text)
    assert re.fullmatch(r"[a-z0-9]+:some-term|glossary:some-term", key)
    assert set(entry.fields) == {"title", "howpublished", "url", "note"}
    folded = " ".join(hostile.split())
    assert _shown(entry.fields["title"]) == "{" + folded + "}"
    assert _shown(entry.fields["howpublished"]) == folded
    assert len(entry.persons["author"]) == 1  # 'and' or a comma never splits the one name
    for field in entry.fields.values():
        assert re.search(r"(?<!\\)[%#&$_]", field) is None, field  # LaTeX's specials escaped
    item = json.loads(csl_json(_term(hostile, Byline(written_by=hostile)), hostile, SITE))[0]
    assert item["title"] == item["container-title"] == item["author"][0]["literal"] == hostile


def _page(cite: CiteThisView) -> str:
    """The partial rendered as term.md.j2 includes it, then converted as the site converts a page."""
    env = make_environment(ROOT / "templates")
    source = "{% include '_cite.md.j2' %}\nAfter the block.\n"
    text = env.from_string(source).render(cite=cite)
    extensions = ["admonition", "pymdownx.details", "pymdownx.highlight", "pymdownx.superfences"]
    return str(markdown.markdown(text, extensions=extensions))


def _code(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


@pytest.mark.parametrize("hostile", HOSTILE)
def test_the_page_block_holds_both_citations_whole(hostile: str) -> None:
    t = _term(hostile, Byline(written_by=hostile, written_on=dt.date(2026, 1, 2)))
    out = _page(cite_this_view(t, NAME, SITE))
    assert out.count("<details") == 1 and out.count("</details>") == 1
    inside, after = out.split("</details>")
    assert "Cite this term" in inside and "After the block." in after and "<code" not in after
    blocks = re.findall(r"<pre.*?</pre>", inside, re.DOTALL)
    assert [_code(b).strip("\n") for b in blocks] == [
        bibtex(t, NAME, SITE).strip("\n"),
        csl_json(t, NAME, SITE).strip("\n"),
    ]
    assert json.loads(_code(blocks[1]))[0]["title"] == hostile


def test_a_fence_is_longer_than_any_backtick_run() -> None:
    assert str(fenced("a ``` b", "json")).startswith("````json\n")
    assert str(fenced("plain", "bibtex")) == "```bibtex\nplain\n```"
    assert str(fenced("x " + "`" * 9, "json")).splitlines()[-1] == "`" * 10
    # A line that starts with backticks would close a fence as long: it stays inside the block.
    text = "````\n```\nstill code"
    out = _page(CiteThisView(fenced(text, "bibtex"), fenced("{}", "json")))
    assert [_code(b).strip("\n") for b in re.findall(r"<pre.*?</pre>", out, re.DOTALL)] == [text, "{}"]


@pytest.mark.parametrize(
    ("site_url", "url"),
    [
        ("https://x.example/a{b}/%7E/", "https://x.example/a%7Bb%7D/%7E/terms/some-term/"),
        ("https://x.example/a b/", None),  # not an address: left out
        ("https://x.example\\evil/", None),
        ("javascript:alert(1)//", None),
    ],
)
def test_the_address_is_left_out_or_made_safe(site_url: str, url: str | None) -> None:
    text = bibtex(_term("T", Byline(last_checked_on=dt.date(2026, 1, 2))), NAME, site_url)
    assert _depth_ok(text)
    _, entry = _entry(text)
    assert entry.fields.get("url") == url and ("urldate" in entry.fields) == (url is not None)
    assert json.loads(csl_json(_term("T"), NAME, site_url))[0].get("URL") == url
