"""What counts as an e-mail address in text that reaches a page (standard library only: the
verifier imports it through measurement_check on GPU nodes).

An address is a local part, '@', and a domain that has a dot and ends in a name of two or
more letters, or an IP address in brackets: 'ada@example.org', '"ada.lovelace"@example.org',
'charles@[192.0.2.7]'. 'sm_90@home' (no dot) and 'a@b.T' (Python's matrix product) are not;
'<ada@host>' is, since Markdown makes it a mailto: link. Text is also read as a browser would
show it: '&#64;', '%40', '\\@' and full-width '＠' are all '@' to a harvester.
"""

from __future__ import annotations

import html
import re
import unicodedata

_LOCAL = r"""(?:"[^"\r\n@]{1,64}"|\w[\w!#$%&'*+=?^{|}~-]*(?:\.[\w!#$%&'*+=?^{|}~-]+)*)"""
"""A quoted local part, or one that starts with a letter or digit: "`@cuda.jit`" is code."""
_DOMAIN = r"(?:(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,63}(?![\w-])|\[(?:IPv6:)?[0-9A-Fa-f.:]{2,45}\])"
_EMAIL = re.compile(rf"{_LOCAL}@{_DOMAIN}")
_BRACKETED = re.compile(r"<[^<>\s@]+@[^<>\s@]+>")
_AT_LIKE = ("@", "＠", "﹫", "&", "%40")
_ESCAPED_AT = re.compile(r"%40|\\@", re.IGNORECASE)


def _as_shown(text: str) -> str:
    """text as a reader (or a harvester) would see it once rendered and decoded."""
    return unicodedata.normalize("NFKC", _ESCAPED_AT.sub("@", html.unescape(text)))


def has_email(text: str) -> bool:
    """True when text holds an e-mail address, written plainly or in any form a page decodes."""
    if not any(at in text for at in _AT_LIKE):
        return False
    for form in (text, _as_shown(text)) if "@" in text else (_as_shown(text),):
        if "@" in form and (_EMAIL.search(form) is not None or _BRACKETED.search(form) is not None):
            return True
    return False


def without_email(text: str) -> str:
    """text with every e-mail address (and the '<>' around one) removed, spaces collapsed."""
    if has_email(text) and not (_EMAIL.search(text) or _BRACKETED.search(text)):
        text = _as_shown(text)  # an encoded address: the decoded text, with it removed
    return " ".join(_EMAIL.sub(" ", _BRACKETED.sub(" ", text)).split())


def redact_email(text: str) -> str:
    """text with every plain e-mail address replaced by a marker that says so (for machine
    text such as a crash's log, which is worth keeping without the address)."""
    if not has_email(text):
        return text
    if not (_EMAIL.search(text) or _BRACKETED.search(text)):
        text = _as_shown(text)
    return _EMAIL.sub("[e-mail address]", _BRACKETED.sub("[e-mail address]", text))


def email_at(text: str) -> tuple[int, int]:
    """Line and column (1-based) in text of the first address written plainly, else of the first
    '@' or encoded one (an address spelt '&#64;' is found only once decoded), else 1, 1."""
    m = _EMAIL.search(text) or _BRACKETED.search(text)
    offset = m.start() if m else min((i for i in (text.find(a) for a in _AT_LIKE) if i >= 0), default=0)
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1
