"""Cite this term: a BibTeX entry and a CSL-JSON item per term page.

Only what the glossary knows goes in: the author is the byline's written_by (the site's name,
as a corporate author, while it is pending); the date is written_on, else last_checked_on,
else left out; the address and the day it was last checked only where known. Nothing is
stamped with the day of the build, so the same term gives the same entry on every build.

Every string here is untrusted (term YAML, the site's configuration). In BibTeX a field is
delimited by counting braces, whether escaped or not, so a brace in a value becomes a LaTeX
command whose own braces are balanced; backslashes and LaTeX's specials are escaped too, and
white space is folded to single spaces: no value can end its field, its entry or the code
block. The page shows both in fenced code blocks whose fence is longer than any run of
backticks in them.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from cudagloss.model.corpus import LoadedTerm
from cudagloss.model.term import PENDING, Byline
from cudagloss.model.urls import page_url, term_src_uri, url_problem

_LATEX = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        "{": r"\textbraceleft{}",
        "}": r"\textbraceright{}",
        "%": r"\%",
        "#": r"\#",
        "&": r"\&",
        "$": r"\$",
        "_": r"\_",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        "`": r"\textasciigrave{}",
        "<": r"\textless{}",
        ">": r"\textgreater{}",
        "|": r"\textbar{}",
    }
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_AND = re.compile(r"\sand\s", re.IGNORECASE)
"""What BibTeX splits an author field at: one name holding it must be braced whole."""
_URL_SAFE = ":/?#[]@!$&'()*+,;=-._~%"
"""What stays as it is in an address written into a citation; anything else is percent-encoded."""
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
"""Characters some readers take for a line break, written as JSON escapes in the code block."""


@dataclass(frozen=True, slots=True)
class CiteThisView:
    """A term's citations as the page shows them: each a fenced code block, ready Markdown."""

    bibtex: Markup
    csl_json: Markup


def _one_line(value: str) -> str:
    """value with white space folded to single spaces and control characters dropped."""
    return " ".join("".join(ch for ch in value if unicodedata.category(ch) != "Cc" or ch.isspace()).split())


def latex(value: str) -> str:
    """Plain text as the inside of a BibTeX field: every brace it has is balanced, and it
    shows the text exactly, LaTeX's special characters included."""
    return _one_line(value).translate(_LATEX)


def cite_key(slug: str, site_name: str) -> str:
    """A stable key: the site's name in lower-case letters and digits, then the slug."""
    prefix = re.sub(r"[^a-z0-9]", "", site_name.lower()) or "glossary"
    return f"{prefix}:{re.sub(r'[^a-z0-9-]', '', slug)}"


def _address(site_url: str | None, slug: str) -> str | None:
    """The page's published address, where the site's URL is known and makes a valid one."""
    url = page_url(site_url, term_src_uri(slug))
    return quote(url, safe=_URL_SAFE) if url and url_problem(url) is None else None


def _day(value: object) -> dt.date | None:
    return value if isinstance(value, dt.date) else None


def _issued(byline: Byline) -> dt.date | None:
    return _day(byline.written_on) or _day(byline.last_checked_on)


def bibtex(t: LoadedTerm, site_name: str, site_url: str | None) -> str:
    """A @misc entry; a field whose value is not known is left out, never guessed."""
    byline = t.term.byline
    author = _one_line(byline.written_by)
    if author in ("", PENDING):
        author = "{" + latex(site_name) + "}"  # a corporate author: BibTeX must not split it into names
    else:
        author = "{" + latex(author) + "}" if _AND.search(author) or "," in author else latex(author)
    fields = [("author", "{" + author + "}"), ("title", "{{" + latex(t.term.name) + "}}")]
    fields.append(("howpublished", "{" + latex(site_name) + "}"))
    issued = _issued(byline)
    if issued:
        fields += [("year", f"{{{issued.year}}}"), ("month", _MONTHS[issued.month - 1])]
    url = _address(site_url, t.slug)
    if url:
        fields.append(("url", "{" + url + "}"))  # percent-encoded: no brace, backslash or space
        checked = _day(byline.last_checked_on)
        if checked:
            fields.append(("urldate", "{" + checked.isoformat() + "}"))
    fields.append(("note", "{Glossary entry}"))
    body = ",\n".join(f"  {name} = {value}" for name, value in fields)
    return f"@misc{{{cite_key(t.slug, site_name)},\n{body}\n}}\n"


def _date_parts(day: dt.date) -> dict[str, Any]:
    return {"date-parts": [[day.year, day.month, day.day]]}


def csl_item(t: LoadedTerm, site_name: str, site_url: str | None) -> dict[str, Any]:
    """A CSL-JSON item (an entry of a dictionary); the author is left out while pending, as
    CSL styles then lead with the title."""
    byline = t.term.byline
    item: dict[str, Any] = {
        "id": cite_key(t.slug, site_name),
        "type": "entry-dictionary",
        "title": t.term.name,
        "container-title": site_name,
    }
    if byline.written_by not in ("", PENDING):
        item["author"] = [{"literal": byline.written_by}]
    issued = _issued(byline)
    if issued:
        item["issued"] = _date_parts(issued)
    url = _address(site_url, t.slug)
    if url:
        item["URL"] = url
        checked = _day(byline.last_checked_on)
        if checked:
            item["accessed"] = _date_parts(checked)
    return item


def csl_json(t: LoadedTerm, site_name: str, site_url: str | None) -> str:
    """The CSL-JSON of one term: a list of one item, as reference managers import it."""
    text = json.dumps([csl_item(t, site_name, site_url)], ensure_ascii=False, indent=2)
    for char, escaped in _LINE_BREAKS.items():  # only inside strings: JSON's syntax has none
        text = text.replace(char, escaped)
    return text + "\n"


def fenced(text: str, language: str) -> Markup:
    """text as a fenced code block, with a fence longer than any run of backticks in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return Markup(f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}")


def cite_this_view(t: LoadedTerm, site_name: str, site_url: str | None) -> CiteThisView:
    return CiteThisView(
        bibtex=fenced(bibtex(t, site_name, site_url), "bibtex"),
        csl_json=fenced(csl_json(t, site_name, site_url), "json"),
    )
