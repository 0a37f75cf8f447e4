"""A fetched page's text as a reader sees it, and the one form two texts are compared in.

The quote check (links/quotes.py) asks three things of a page: its characters (decode_page,
which picks the encoding the way a browser does), the text it shows (visible_text, read by
links/html_text.py in one linear pass), and a form in which a quote copied from the page
still matches it whatever typography either side used (normalise).
"""

from __future__ import annotations

import codecs
import re
import unicodedata

from cudagloss.links.html_text import read_html

_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xfe\xff", "utf-16-be"), (b"\xff\xfe", "utf-16-le"))

_WEB_CODECS = {
    # Python's codec name -> the codec that decodes it as a browser does (the WHATWG Encoding
    # Standard): Latin-1 and ASCII labels mean windows-1252, GB2312 and GBK mean GB18030...
    "utf-8": "utf-8",
    "utf-16": "utf-16-le",  # without a BOM (a BOM is read first), WHATWG's "utf-16" is little-endian
    "utf-16-le": "utf-16-le",
    "utf-16-be": "utf-16-be",
    "ascii": "cp1252",
    "iso8859-1": "cp1252",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "tis-620": "cp874",
    "cp874": "cp874",
    "cp866": "cp866",
    "koi8-r": "koi8-r",
    "koi8-u": "koi8-u",
    "mac-roman": "mac-roman",
    "mac-cyrillic": "mac-cyrillic",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "gb18030": "gb18030",
    "big5": "big5hkscs",
    "big5hkscs": "big5hkscs",
    "cp950": "big5hkscs",
    "euc_jp": "euc_jp",
    "iso2022_jp": "iso2022_jp",
    "shift_jis": "cp932",
    "cp932": "cp932",
    "euc_kr": "cp949",
    "cp949": "cp949",
    **{f"iso8859-{n}": f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)},
    **{f"cp125{n}": f"cp125{n}" for n in range(9)},
}
"""The only encodings a page is decoded with: those of the web. Anything else a server or a page
names (rot13, base64, zip, utf-7, punycode, unicode_escape...) is ignored, not looked up."""

_LABELS = {
    # WHATWG labels that Python's codec registry does not know.
    "windows-874": "cp874",
    "x-mac-cyrillic": "mac-cyrillic",
    "x-mac-roman": "mac-roman",
    "windows-31j": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "csshiftjis": "cp932",
    "x-gbk": "gb18030",
    "x-euc-jp": "euc_jp",
    "iso-8859-8-i": "iso8859-8",
    "logical": "iso8859-8",
    "x-user-defined": "cp1252",
    "unicode-1-1-utf-8": "utf-8",
    "unicode11utf8": "utf-8",
    "unicode20utf8": "utf-8",
    "x-unicode20utf8": "utf-8",
    "ucs-2": "utf-16-le",
    "unicode": "utf-16-le",
    "unicodefeff": "utf-16-le",
    "unicodefffe": "utf-16-be",
    "csunicode": "utf-16-le",
    "koi": "koi8-r",
    "koi8": "koi8-r",
    "cseuckr": "cp949",
    "csksc56011987": "cp949",
    "iso-ir-149": "cp949",
    "ks_c_5601-1989": "cp949",
    "ksc_5601": "cp949",
    "windows-949": "cp949",
    "csgb2312": "gb18030",
    "gb_2312": "gb18030",
    "gb_2312-80": "gb18030",
    "cn-big5": "big5hkscs",
    "x-x-big5": "big5hkscs",
    **{f"x-cp125{n}": f"cp125{n}" for n in range(9)},
    **{f"iso8859{n}": f"iso8859-{n}" for n in range(1, 17)},
}
_LABEL = re.compile(r"[a-z0-9._:-]{1,40}")
_META = re.compile(rb"""<meta\b[^>]*?charset[\t\n\f\r ]*=[\t\n\f\r ]*["']?[\t\n\f\r ]*([^\t\n\f\r "'>;/]+)""", re.I)
_COMMENT = re.compile(rb"<!--.*?(?:-->|$)", re.S)
PRESCAN = 1024
"""Bytes of the page searched for a <meta> charset, as browsers do."""


def web_codec(label: str | None) -> str | None:
    """The codec a charset label names, if it is an encoding of the web; else None."""
    if not label:
        return None
    name = label.strip().strip("\"'").strip().lower()
    if not _LABEL.fullmatch(name):
        return None
    name = _LABELS.get(name, name)
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError, TypeError):
        return None
    return _WEB_CODECS.get(info.name) if info._is_text_encoding else None


def bom_codec(body: bytes) -> tuple[str, int] | None:
    """(codec, BOM length) when the body starts with a byte order mark."""
    return next(((codec, len(bom)) for bom, codec in _BOMS if body.startswith(bom)), None)


def meta_codec(body: bytes) -> str | None:
    """The charset a <meta> in the first PRESCAN bytes names (comments left out). A page that
    says UTF-16 in ASCII is not UTF-16, so that reads as UTF-8 (as in the HTML standard)."""
    head = _COMMENT.sub(b"", body[:PRESCAN])
    for match in _META.finditer(head):
        codec = web_codec(match.group(1).decode("ascii", "replace"))
        if codec is not None:
            return "utf-8" if codec.startswith("utf-16") else codec
    return None


def decode_page(body: bytes, charset: str | None, *, sniff_meta: bool = True) -> str:
    """The page's characters. A byte order mark comes first (as in browsers, it beats the
    header: a server's default charset is often wrong, a BOM never is), then the header's
    charset, then a <meta> charset (sniff_meta: HTML only), else UTF-8. A name that is not an
    encoding of the web is passed over; bytes the encoding cannot read become U+FFFD."""
    bom = bom_codec(body)
    if bom is not None:
        return body[bom[1] :].decode(bom[0], "replace")
    codec = web_codec(charset) or (meta_codec(body) if sniff_meta else None) or "utf-8"
    return body.decode(codec, "replace")


def visible_text(html: str) -> str:
    """The text a reader sees on the page: no scripts, styles, templates, <noscript>, head
    metadata, SVG or hidden elements; blocks apart, inline elements joined (html_text.py)."""
    return read_html(html).text


_FOLD = str.maketrans(
    {
        **dict.fromkeys("‘’‚‛′‹›", "'"),
        **dict.fromkeys("“”„‟″«»", '"'),
        **dict.fromkeys("‐‑‒–—―−", "-"),
        **dict.fromkeys("\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"),
    }
)
"""Typographic quotes and dashes to ASCII; soft hyphens and zero-width characters out."""


PIECE = 8 * 1024
"""Characters normalised at a time. NFKC and casefold make at most 18 characters of one (U+FDFA,
a ligature of four words), so no piece's copies hold more than 18 x PIECE characters (a few MiB),
whatever the page holds; and a page's normalised text stops at its limit (normalise_within)."""
_SPACES = re.compile(r"\s+")
"""Whitespace as str.split() reads it (Python's \\s and str.isspace() agree on every code point)."""
_SPLIT_AT = (" ", "\n", "\t")


def _fold(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text.translate(_FOLD))
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", folded.casefold()).translate(_FOLD))


def _piece_end(text: str, start: int) -> int:
    """Where the piece from start ends: before a whitespace character near PIECE on (NFKC never
    joins a character to the whitespace after it), else before a character that normalises
    the same alone as after its neighbour; the end of text when it is near."""
    end = start + PIECE
    if end >= len(text):
        return len(text)
    space = max(text.rfind(c, start + PIECE // 2, end) for c in _SPLIT_AT)
    if space > start:
        return space
    for at in range(end, end - 32, -1):
        before, after = text[at - 1], text[at]
        if not unicodedata.combining(after) and _fold(before + after) == _fold(before) + _fold(after):
            return at
    return end  # a run of 32 combining marks: nothing a quote holds depends on where it is cut


def normalise_within(text: str, limit: int) -> tuple[str, bool]:
    """normalise(text) cut at limit characters, and whether it is whole. Normalised a piece at a
    time (PIECE), whitespace collapsed within each and at their seams, so what it holds at once
    is the result (twice: its pieces, then joined) and one piece's copies, never the whole
    text's expansion (a page of U+FDFA grows eighteenfold, one of ligatures twofold)."""
    pieces: list[str] = []
    size, start, whole, spaced = 0, 0, True, True
    while start < len(text) and whole:
        end = _piece_end(text, start)
        piece = _fold(text[start:end])
        start = end
        if spaced:  # the text so far ends with a space, or is empty
            piece = piece.lstrip(" ")
        if size + len(piece) > limit:
            piece, whole = piece[: limit - size], False
        if piece:
            pieces.append(piece)
            size += len(piece)
            spaced = piece.endswith(" ")
    if pieces and spaced:
        pieces[-1] = pieces[-1].rstrip(" ")
    return "".join(pieces), whole


def normalise(text: str) -> str:
    """The form a quote and a page are compared in: NFKC, typographic quotes and dashes folded to
    ASCII, invisible characters removed, whitespace runs one space, stripped, casefolded (text
    fragments match case-insensitively, and so do we). Folded before NFKC too, so a double prime
    is one '"', not the two primes NFKC makes of it. For a page's text, normalise_within."""
    return normalise_within(text, 18 * len(text) + 18)[0]
