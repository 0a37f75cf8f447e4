"""The schema.org JSON-LD of the site: a DefinedTerm per term page, and the home page's
DefinedTermSet of them all (search engines read it from each page's <head>)."""

from __future__ import annotations

from typing import Any

from cudagloss.model.corpus import Corpus, LoadedTerm
from cudagloss.model.urls import page_url, term_src_uri
from cudagloss.text.markdown import plain_text


def _term_set(site_name: str, site_url: str | None) -> dict[str, Any]:
    term_set: dict[str, Any] = {"@type": "DefinedTermSet", "name": site_name}
    if site_url:
        term_set["@id"] = term_set["url"] = site_url
    return term_set


def term_json_ld(t: LoadedTerm, site_name: str, site_url: str | None) -> dict[str, Any]:
    term = t.term
    data: dict[str, Any] = {"@context": "https://schema.org", "@type": "DefinedTerm", "name": term.name}
    url = page_url(site_url, term_src_uri(t.slug))
    if url:
        data["@id"] = data["url"] = url
    data["description"] = plain_text(term.definition)
    if term.aliases or term.abbreviations:
        data["alternateName"] = [*term.aliases, *term.abbreviations]
    data["termCode"] = t.slug
    data["inDefinedTermSet"] = _term_set(site_name, site_url)
    return data


def term_set_json_ld(corpus: Corpus, site_name: str, site_url: str | None) -> dict[str, Any]:
    """The whole glossary, each term as on its own page less what the set already says."""
    data = {"@context": "https://schema.org", **_term_set(site_name, site_url)}
    data["hasDefinedTerm"] = [
        {k: v for k, v in term_json_ld(t, site_name, site_url).items() if k not in ("@context", "inDefinedTermSet")}
        for t in corpus.alphabetical()
    ]
    return data
