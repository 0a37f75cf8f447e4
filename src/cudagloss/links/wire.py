"""What the link checker takes off the wire, read as hostile: every server is someone else's.

Bodies are decoded here rather than by the transport, so that the body cap bounds the decoded bytes
too (a gzip bomb of 64 KiB inflates to gigabytes); Retry-After is read strictly (plain ASCII
seconds or an HTTP-date, anything else ignored); and every string a server chose (a Location,
an error message) is made printable and short before it reaches a report or a terminal.
Standard library only (and idna for non-ASCII host names): the decoding and parsing here raise
nothing but BodyDecodeError and Unrequestable.
"""

from __future__ import annotations

import datetime as dt
import re
import socket
import zlib
from urllib.parse import quote, urlsplit

MAX_CODINGS = 2
"""More content codings than this on one body is no real server: the body is not inspected."""


class BodyDecodeError(Exception):
    """The body does not decode as its Content-Encoding says (a browser shows an error page)."""


class _Inflate:
    """One zlib-family coding, inflated at most `room` bytes at a time (zlib's max_length),
    so no input, however compressed, makes more output than asked for."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        # gzip: header and trailer; deflate: zlib-wrapped per the RFC, raw deflate as a fallback
        self._d = zlib.decompressobj(zlib.MAX_WBITS | 16 if coding in ("gzip", "x-gzip") else zlib.MAX_WBITS)
        self._started = False

    def decode(self, data: bytes, room: int) -> bytes:
        if self._d.eof or room <= 0:  # max_length 0 would mean "no limit" to zlib
            return b""
        data = self._d.unconsumed_tail + data
        try:
            out = self._d.decompress(data, room)
        except zlib.error as exc:
            if self.coding == "deflate" and not self._started:
                self._d = zlib.decompressobj(-zlib.MAX_WBITS)
                self._started = True
                return self.decode(data, room)
            raise BodyDecodeError(f"the body does not decode as {self.coding} ({exc})") from None
        self._started = True
        return out


class BoundedBody:
    """The first `limit` decoded bytes of a body, fed raw chunks as they arrive.

    An unknown or implausible Content-Encoding leaves the body opaque: it is read (up to the
    cap) but not inspected, since we did not ask for that coding and cannot judge it."""

    def __init__(self, content_encoding: str, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.opaque = False
        codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        known = ("gzip", "x-gzip", "deflate")
        if len(codings) > MAX_CODINGS or any(c not in known for c in codings):
            self.opaque, codings = True, []
        self._layers = [_Inflate(c) for c in reversed(codings)]  # the last coding applied is undone first

    @property
    def full(self) -> bool:
        return len(self.data) >= self.limit

    def feed(self, raw: bytes) -> None:
        """Decode raw into the body, never past the cap; raises BodyDecodeError."""
        if self.opaque or self.full:
            return
        chunk = raw
        for layer in self._layers:
            chunk = layer.decode(chunk, self.limit - len(self.data))
        self.data += chunk[: self.limit - len(self.data)]

    def content(self) -> bytes:
        return b"" if self.opaque else bytes(self.data)


DEFAULT_PORTS = {"http": 80, "https": 443}
Key = tuple[str, str, int]
"""An origin: scheme, host (IDNA-encoded), port."""


class Unrequestable(Exception):
    """This URL cannot be put on the wire (a scheme, host or target HTTP cannot carry)."""


class Headers:
    """Response headers by lower-case name; repeated ones joined with ", " (two Locations: one invalid URL)."""

    def __init__(self, items: list[tuple[bytes, bytes]]) -> None:
        self._map: dict[str, str] = {}
        for name, value in items:
            key, text = _text(name).lower(), _text(value)
            self._map[key] = f"{self._map[key]}, {text}" if key in self._map else text

    def get(self, name: str, default: str = "") -> str:
        return self._map.get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in self._map


def media_type(value: str) -> tuple[str, str | None]:
    """(media type lower case without parameters, charset parameter lower case or None) of a
    Content-Type value; ("", None) for none. Bounded: a hostile value is cut, never searched at length."""
    kind, _, params = value[:1024].partition(";")
    charset = None
    for param in params.split(";"):
        name, _, text = param.partition("=")
        if name.strip().lower() == "charset":
            charset = text.strip().strip('"').strip().lower() or None
    return kind.strip().lower(), charset


def _text(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1")


def target_of(url: str) -> tuple[Key, str, str]:
    """(origin, Host header, request target) of an http(s) URL; raises Unrequestable. A host
    that is not ASCII must be valid IDNA 2008 (as browsers require), not merely mappable."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise Unrequestable(str(exc)) from None
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    if scheme not in DEFAULT_PORTS or not host:
        raise Unrequestable(f"not an http(s) URL with a host: {scheme or 'no scheme'}")
    if not host.isascii():
        import idna  # (only here: the one part of the checker outside the standard library)

        try:
            host = idna.encode(host).decode("ascii")
        except (idna.IDNAError, UnicodeError) as exc:
            raise Unrequestable(f"host name not valid IDNA ({exc})") from None
    port = port or DEFAULT_PORTS[scheme]
    named = f"[{host}]" if ":" in host else host
    header = named if port == DEFAULT_PORTS[scheme] else f"{named}:{port}"
    path = quote(parts.path or "/", safe="!$&'()*+,;=:@/%~")
    if parts.query:
        path += "?" + quote(parts.query, safe="!$&'()*+,;=:@/?%~")
    return (scheme, host, port), header, path


SECRET_HEADERS = ("authorization", "proxy-authorization", "cookie")


class CredentialRefused(Exception):
    """A request that would carry a credential; it is never sent."""


def refuse_credentials(url: str, headers: dict[str, str]) -> None:
    """The last look at a request before the wire: no user name or password in its URL, and
    no header that carries a secret (removed from headers), whatever built it."""
    try:
        netloc = urlsplit(url).netloc if "@" in url else ""
    except ValueError:
        netloc = url
    if "@" in netloc:
        raise CredentialRefused("the request URL carries credentials; they are never sent")
    for name in [name for name in headers if name.lower() in SECRET_HEADERS]:
        del headers[name]


_DAYS = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_LONG_DAYS = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MON = "(" + "|".join(_MONTHS) + ")"
_TIME = r"([0-9]{2}):([0-9]{2}):([0-9]{2})"
# RFC 9110 section 5.6.7: IMF-fixdate, and the obsolete RFC 850 and asctime forms, exactly.
_IMF = re.compile(rf"{_DAYS}, ([0-9]{{2}}) {_MON} ([0-9]{{4}}) {_TIME} GMT")
_RFC850 = re.compile(rf"{_LONG_DAYS}, ([0-9]{{2}})-{_MON}-([0-9]{{2}}) {_TIME} GMT")
_ASCTIME = re.compile(rf"{_DAYS} {_MON} ([ 0-9][0-9]) {_TIME} ([0-9]{{4}})")
_SECONDS = re.compile(r"[0-9]{1,10}")


def _http_date(value: str) -> dt.datetime | None:
    if m := _IMF.fullmatch(value):
        day, mon, year, hh, mm, ss = m.groups()
    elif m := _RFC850.fullmatch(value):
        day, mon, yy, hh, mm, ss = m.groups()
        year = str(2000 + int(yy) if int(yy) < 70 else 1900 + int(yy))
    elif m := _ASCTIME.fullmatch(value):
        mon, day, hh, mm, ss, year = m.groups()
    else:
        return None
    try:
        when = dt.datetime(
            int(year), _MONTHS.index(mon) + 1, int(day), int(hh), int(mm), int(ss), tzinfo=dt.timezone.utc
        )
    except ValueError:  # 31 February, hour 25, ...
        return None
    return when


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After header: ASCII digits (at most ten) or an HTTP-date;
    None for anything else, which is then ignored rather than trusted or fatal."""
    if not value or len(value) > 64 or not value.isascii():
        return None
    value = value.strip()
    if _SECONDS.fullmatch(value):
        return float(int(value))
    when = _http_date(value)
    return None if when is None else max(0.0, when.timestamp() - now)


_TITLE = re.compile(rb"<title[^>]{0,200}>([^<]{0,1000})</title>", re.I)
_NOT_FOUND = re.compile(rb"404|not found|no longer exists", re.I)


def looks_not_found(body: bytes) -> bool:
    """A title saying the page was not found (a soft 404). Every repetition is bounded, so a
    hostile body cannot make the search quadratic."""
    return any(_NOT_FOUND.search(m.group(1)) for m in _TITLE.finditer(body))


def redacted(url: str) -> str:
    """url with any user name and password replaced by ***, for reports (never for requests)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority = rest[:end]
    if "@" not in authority:
        return url
    return f"{scheme}://***@{authority.rpartition('@')[2]}{rest[end:]}"


def host_of(url: str) -> str:
    """The lower-cased host of a URL that url_problem has passed."""
    return (urlsplit(url).hostname or "").lower()


def is_dns_failure(exc: BaseException) -> bool:
    """A name lookup failed somewhere down exc's chain of causes."""
    cause: BaseException | None = exc
    for _ in range(16):  # a chain of causes is short; a cycle would not end
        if cause is None:
            return False
        if isinstance(cause, socket.gaierror):
            return True
        cause = cause.__cause__ or cause.__context__
    return False
