"""Links that open a page at the words a source is quoted for: text fragments (the WICG's
Scroll To Text Fragment, `#:~:text=`), which browsers that support them scroll to and mark,
and others ignore (the page still opens).
"""

from __future__ import annotations

from urllib.parse import quote as percent_encode

from cudagloss.model.limits import URL_MAX

EXACT_WORDS = 8
EXACT_CHARS = 80
"""A quote up to this long is linked whole; a longer one by its first and last words."""
EDGE_WORDS = 4
"""Words at each end of a long quote: enough to find its place, few enough that an edit in
its middle does not break the link."""
DIRECTIVE = ":~:"


def _encode(text: str) -> str:
    """Percent-encoded for a text directive: all but ASCII letters, digits and _.~ ('-', ',' and
    '&' mean something there, so they are encoded too)."""
    return percent_encode(text, safe="", errors="replace").replace("-", "%2D")


def _directives(words: list[str]) -> list[str]:
    """The text directives for a quote, best first: the whole quote when short, else its first
    and last EDGE_WORDS words (never overlapping), then fewer at each end."""
    whole = _encode(" ".join(words))
    short = len(words) <= EXACT_WORDS and len(" ".join(words)) <= EXACT_CHARS
    edges = [
        f"{_encode(' '.join(words[:k]))},{_encode(' '.join(words[-k:]))}"
        for k in range(min(EDGE_WORDS, len(words) // 2), 0, -1)
    ]
    return [whole, *edges] if short or not edges else edges


def text_fragment_url(url: str, quote: str) -> str:
    """The URL with a text fragment for quote (whitespace collapsed): `url#:~:text=...`, or
    `url#x:~:text=...` where the URL has a fragment #x. A URL that already has a fragment
    directive is returned as it is, and so is one for which no directive fits within URL_MAX
    characters (a single very long word, or a URL near the limit)."""
    words = quote.split()
    if DIRECTIVE in url or not words:
        return url
    base = url if "#" in url else url + "#"
    for directive in _directives(words):
        linked = f"{base}{DIRECTIVE}text={directive}"
        if len(linked) <= URL_MAX:
            return linked
    return url
