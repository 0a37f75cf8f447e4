"""What counts as an e-mail address in text that reaches a page (standard library only: the
verifier imports it through model.measurement_rules on GPU nodes).

An address is a local part, '@', and a domain that has a dot and ends in a name of two or
more letters, or an IP address in brackets: 'ada@example.org', '"ada.lovelace"@example.org',
'charles@[192.0.2.7]'. 'sm_90@home' (no dot) and 'a@b.T' (Python's matrix product) are not;
'<ada@host>' is, since Markdown makes it a mailto: link. Text is also read as a browser would
show it: '&#64;', '%40', '\\@' and full-width '＠' are all '@' to a harvester, and Markdown's
escapes and inline markup are gone from what it shows: 'ada@example\\.org', 'ada@example.*org*'.
'git@github.com:NVIDIA/cuda-samples.git' (an SSH remote: host, ':' and a path) is no address.
"""

from __future__ import annotations

import re
import unicodedata

from cudagloss.text.charrefs import unescape

_LOCAL = r"""(?:"[^"\r\n@]{1,64}"|\w[\w!#$%&'*+=?^{|}~-]*(?:\.[\w!#$%&'*+=?^{|}~-]+)*)"""
"""A quoted local part, or one that starts with a letter or digit: "`@cuda.jit`" is code."""
_DOMAIN = r"(?:(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,63}(?![\w-])|\[(?:IPv6:)?[0-9A-Fa-f.:]{2,45}\])"
_EMAIL = re.compile(rf"{_LOCAL}@(?=(?P<domain>{_DOMAIN}))(?P=domain)(?!\.?:(?:~|/|[\w.-]+/))")
"""Not followed by ':' and a path: 'user@host:path' is where git or scp reaches a file. The
domain is matched once, whole (a look-ahead does not backtrack): 'user@host.example' is no
shorter address inside 'user@host.example.com:/srv'."""
_BRACKETED = re.compile(r"<[^<>\s@]+@[^<>\s@]+>")
_AT_LIKE = ("@", "＠", "﹫", "&", "%40")
_ESCAPED_AT = re.compile(r"%40|\\@", re.IGNORECASE)


def _as_shown(text: str) -> str:
    """text as a reader (or a harvester) would see it once rendered and decoded."""
    return unicodedata.normalize("NFKC", _ESCAPED_AT.sub("@", unescape(text)))


_MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_INLINE_MARKUP = re.compile(r"[*_`~]+|<[^<>@]*>")
"""Emphasis, code and strike-through marks, and HTML tags (never an address's own '<>')."""


def _unmarked(text: str) -> str:
    """text as the page shows it once Markdown took its escapes and inline markup away."""
    return _INLINE_MARKUP.sub("", _MARKDOWN_ESCAPE.sub(r"\1", text))


_BEFORE, _AFTER = 66, 260
"""Around each '@', the most an address can reach: a local part of 64 characters (quoted:
66) and a domain of 253 (or a bracketed IPv6 address)."""


def _found(form: str) -> bool:
    """Whether an address shows in form, looking only near each '@': the patterns backtrack,
    and on a long run of address-like text a search over all of it took seconds."""
    at = form.find("@")
    while at != -1:
        window = form[max(0, at - _BEFORE) : at + _AFTER]
        if _EMAIL.search(window) is not None or _BRACKETED.search(window) is not None:
            return True
        at = form.find("@", at + 1)
    return False


def _showing_it(text: str) -> str | None:
    """The first form of text in which an address shows (text itself, decoded, unmarked), or None."""
    if not any(at in text for at in _AT_LIKE):
        return None
    tried = {text}
    if _found(text):
        return text
    shown = _as_shown(text)
    for form in (shown, _unmarked(shown), _unmarked(text)):
        if form not in tried and _found(form):
            return form
        tried.add(form)
    return None


def has_email(text: str) -> bool:
    """True when text holds an e-mail address, written plainly or in any form a page decodes."""
    return _showing_it(text) is not None


def _replaced(text: str, by: str) -> str:
    """text with every address replaced, however written: one written plainly beside one
    spelt '&#64;' or split by markup is replaced in the decoded form, until none shows."""
    for _ in range(8):
        form = _showing_it(text)
        if form is None:
            return text
        text = _EMAIL.sub(by, _BRACKETED.sub(by, form))
    return re.sub(r"[@＠﹫]", by, _as_shown(text))  # layers upon layers of encoding: no '@' at all


def without_email(text: str) -> str:
    """text with every e-mail address (and the '<>' around one) removed, spaces collapsed."""
    return " ".join(_replaced(text, " ").split())


def redact_email(text: str) -> str:
    """text with every e-mail address replaced by a marker that says so (for machine text such
    as a crash's log, which is worth keeping without the address)."""
    return _replaced(text, "[e-mail address]")


def email_at(text: str) -> tuple[int, int]:
    """Line and column (1-based) in text of the first address written plainly, else of the first
    '@' or encoded one in the first word that shows an address once decoded or unmarked (an
    address spelt '&#64;' or 'ada@example\\.org'), else of the first '@', else 1, 1."""
    m = _EMAIL.search(text) or _BRACKETED.search(text)
    if m:
        offset = m.start()
    else:
        word = next((w for w in re.finditer(r"\S+", text) if has_email(w.group())), None)
        start, end = (word.start(), word.end()) if word else (0, len(text))
        offset = min((i for i in (text.find(a, start, end) for a in _AT_LIKE) if i >= 0), default=0)
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1
