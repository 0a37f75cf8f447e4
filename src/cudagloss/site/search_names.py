"""The names index of the site's search: every term's names, for javascripts/glossary.js.

Material's search ranks words by how rare they are and searches each as the start of a word,
so a term's own abbreviation can rank below a longer word of another term ('SM' below
'SMEM'), and a name typed one letter wrong finds nothing. glossary.js puts the term whose
name, alias or abbreviation was typed first, or offers the terms one letter away; it takes
the names from this file, never from a page's HTML. Strings are data here, JSON-escaped
(with <, >, & as \\u escapes: escape.inert_json), and the script sets them as text.
"""

from __future__ import annotations

import json

from cudagloss.model.corpus import Corpus
from cudagloss.model.urls import site_address, term_src_uri
from cudagloss.site.escape import inert_json
from cudagloss.site.output import GeneratedFile
from cudagloss.text.markdown import plain_text

NAMES_JSON = "javascripts/glossary-names.json"
"""Beside glossary.js (mkdocs.yml's extra_javascript), which finds it from its own address."""
FORMAT = 1


def names_json(corpus: Corpus) -> str:
    """Each term's address (relative to the site's root), name, every name a reader may type
    for it (name, aliases, abbreviations) and its definition as plain text, A to Z."""
    terms = [
        {
            "url": site_address("", term_src_uri(t.slug)),
            "name": t.term.name,
            "names": [t.term.name, *t.term.aliases, *t.term.abbreviations],
            "definition": plain_text(t.term.definition),
        }
        for t in corpus.alphabetical()
    ]
    return inert_json(json.dumps({"format": FORMAT, "terms": terms}, ensure_ascii=False, separators=(",", ":")))


def names_file(corpus: Corpus) -> GeneratedFile:
    return GeneratedFile(NAMES_JSON, names_json(corpus) + "\n")
