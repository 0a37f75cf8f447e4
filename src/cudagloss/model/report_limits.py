"""What a link report (`cudagloss links --format json`, or --report FILE) can hold at most.

The writer (links/report.py) keeps every field within these bounds and the reader
(load/link_report.py) takes them as its caps, so the checker's own report of a glossary at its
limits is always read: TERMS_MAX terms, each with ITEMS_MAX sources, every URL, path, quote and
detail at its longest and every character of it escaped as JSON escapes it. The caps come from
the constants of the model, never from numbers of their own, so raising a limit raises them.
"""

from __future__ import annotations

from cudagloss.model.limits import ITEMS_MAX, LINE_MAX, QUOTE_MAX, TERMS_MAX
from cudagloss.model.urls import MAX_URL_LENGTH

CITATIONS_MAX = TERMS_MAX * ITEMS_MAX
"""Citations of a glossary at its limits, and so URLs checked: every source of every term apart."""
REDIRECTS_MAX = 5
"""Redirects the checker follows (CheckerOptions.max_redirects); the one past them is recorded too."""
HOPS_MAX = REDIRECTS_MAX + 1
"""Hops of a result's redirect chain that a report lists."""
DETAIL_MAX = MAX_URL_LENGTH + LINE_MAX
"""Characters of a detail a report writes, a result's or a quote's ('-> <final URL> (permanent: ...)')."""
PATH_MAX = 4096
"""Characters of a term file's path as a report names it (Linux's PATH_MAX); its line number follows."""
CITED_AT_MAX = PATH_MAX + 1 + len(str(2**63))
"""Characters of one 'path:line' in a result's cited_at."""
JSON_CHAR_MAX = 12
"""Bytes one character may take in the report: ASCII-only JSON writes one beyond the BMP as two
\\uXXXX escapes."""
FRAME = 1024
"""Bytes of one result's keys, indentation, punctuation, numbers and literals (under 700 written)."""
PART_FRAME = 128
"""The same for one hop, one citation or one quote in a result (under 80 written)."""


def _string(chars: int) -> int:
    """Bytes of a JSON string of at most chars characters, its quotes included."""
    return JSON_CHAR_MAX * chars + 2


URL_ENTRY_BYTES = (
    FRAME
    + 3 * _string(MAX_URL_LENGTH)  # url, final_url, archived_url
    + _string(DETAIL_MAX)
    + HOPS_MAX * (PART_FRAME + _string(MAX_URL_LENGTH))
)
"""Bytes of one URL's result, without what its citations add."""
CITATION_BYTES = PART_FRAME + _string(CITED_AT_MAX) + PART_FRAME + _string(QUOTE_MAX) + _string(DETAIL_MAX)
"""Bytes one citation adds to its URL's result: where it is, and its quote with what was found."""
HEADER_BYTES = FRAME + TERMS_MAX * (PART_FRAME + _string(PATH_MAX))
"""Bytes of the report around its results: the day, the counts, and every term file stamped."""
REPORT_BYTES_MAX = HEADER_BYTES + CITATIONS_MAX * (URL_ENTRY_BYTES + CITATION_BYTES)
"""Bytes a report can have (a URL is checked once however many cite it, so at most one per citation)."""

URL_ENTRY_VALUES = 13 + 3 * HOPS_MAX
"""JSON values of one URL's result (strictjson counts each scalar and each container), without its citations'."""
CITATION_VALUES = 1 + 4
"""What one citation adds: its cited_at entry, and its quote's object of three."""
REPORT_VALUES_MAX = 32 + TERMS_MAX + CITATIONS_MAX * (URL_ENTRY_VALUES + CITATION_VALUES)
"""JSON values a report can have: the header's, every term file stamped, and every result's."""
