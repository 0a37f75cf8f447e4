"""The link checker's response reader (links/response.py) on the bytes a server may send.

Every response is read whole and then byte by byte (as a trickling server delivers it): the
results must agree. Malformed framing must be refused, not guessed at, because a guess is how
responses are smuggled; a kept connection only follows a response read exactly to its end.
Trickled heads and chunk lines are refused at their bounds (bench/hostile.py times the work).
"""

from __future__ import annotations

import pytest

from cudagloss.links.response import MAX_HEAD, MAX_LINE, ProtocolError, ResponseReader


def read(data: bytes, *, step: int = 0) -> tuple[int, bytes, bool]:
    """(status, body, reusable before the server closes) of data, fed whole or step bytes at a
    time, then the end of the stream if the body needs it."""
    reader = ResponseReader()
    head: tuple[int, object] | None = None
    body = b""

    def pump() -> None:
        nonlocal head, body
        while head is None or (head[0] < 200 and head[0] != 101):  # 1xx heads come before the answer
            head = reader.next_head()
            if head is None:
                return
        while chunk := reader.next_body():
            body += chunk

    for i in range(0, len(data), step or len(data) or 1):
        reader.feed(data[i : i + (step or len(data))])
        pump()
    reusable = reader.reusable
    if not reader.done:
        reader.feed_eof()
        pump()
    assert head is not None and reader.done
    return head[0], body, reusable


CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
GOOD = [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, b"hello", True),
    (b"HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n", 404, b"", True),  # no reason phrase
    (b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", 200, b"ok", True),  # bare LF line ends
    (b"HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\nabc", 200, b"abc", True),  # a list that agrees
    (CHUNKED + b"5;ext=1\r\nhello\r\n1\r\n!\r\n0\r\nX-T: y\r\n\r\n", 200, b"hello!", True),
    (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Hints\r\nLink: x\r\n\r\n" + CHUNKED + b"0\r\n\r\n", 200, b"", True),
    (b"HTTP/1.1 204 No Content\r\n\r\n", 204, b"", True),
    (b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 1\r\n\r\nx", 200, b"x", False),
    (b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 200, b"x", False),
    (b"HTTP/1.1 200 OK\r\n\r\nruns to the close", 200, b"runs to the close", False),
    # both framings: chunked is read (RFC 9112), and the connection is never reused
    (
        b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        200,
        b"ok",
        False,
    ),
    (b"HTTP/1.1 101 Switching\r\nUpgrade: x\r\n\r\n", 101, b"", False),
]


@pytest.mark.parametrize(("data", "status", "body", "reusable"), GOOD)
@pytest.mark.parametrize("step", [0, 1, 7])
def test_a_good_response_reads_the_same_whole_or_trickled(
    data: bytes, status: int, body: bytes, reusable: bool, step: int
) -> None:
    assert read(data, step=step) == (status, body, reusable)


def test_bytes_after_a_response_make_its_connection_unfit_to_keep() -> None:
    smuggled = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 404 X\r\nContent-Length: 0\r\n\r\n"
    assert read(smuggled) == (200, b"ok", False)


BAD = {
    "status not three digits": b"HTTP/1.1 20 OK\r\n\r\n",
    "status letters": b"HTTP/1.1 abc OK\r\n\r\n",
    "status below 100": b"HTTP/1.1 099 X\r\n\r\n",
    "HTTP/2 status line": b"HTTP/2 200\r\n\r\n",
    "HTTP/1.1 lower-case": b"http/1.1 200 OK\r\n\r\n",
    "control in the reason": b"HTTP/1.1 200 O\x00K\r\n\r\n",
    "no colon": b"HTTP/1.1 200 OK\r\ngarbage\r\n\r\n",
    "empty name": b"HTTP/1.1 200 OK\r\n: x\r\n\r\n",
    "space before the colon": b"HTTP/1.1 200 OK\r\nX-A : b\r\n\r\n",
    "obsolete line folding": b"HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\n\r\n",
    "NUL in a value": b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\n\r\n",
    "CR in a value": b"HTTP/1.1 200 OK\r\nX-A: a\rb\r\n\r\n",
    "negative length": b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    "signed length": b"HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello",
    "hex length": b"HTTP/1.1 200 OK\r\nContent-Length: 0x5\r\n\r\nhello",
    "empty length": b"HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n",
    "lengths disagree": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nabcde",
    "length list disagrees": b"HTTP/1.1 200 OK\r\nContent-Length: 5, 7\r\n\r\nabcde",
    "21-digit length": b"HTTP/1.1 200 OK\r\nContent-Length: " + b"1" * 21 + b"\r\n\r\n",
    "gzip transfer coding": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
    "chunked not last": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n",
    "chunked twice": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "empty transfer coding": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: \r\n\r\n",
    "chunk size not hex": CHUNKED + b"zz\r\nabc\r\n",
    "chunk size 17 digits": CHUNKED + b"1" * 17 + b"\r\n",
    "chunk size signed": CHUNKED + b"-5\r\nhello\r\n0\r\n\r\n",
    "chunk without its CRLF": CHUNKED + b"2\r\nokXX0\r\n\r\n",
    "bad trailer": CHUNKED + b"0\r\nnot a field\r\n\r\n",
    "chunk line too long": CHUNKED + b"1;" + b"e" * MAX_LINE + b"\r\n",
    "head too long": b"HTTP/1.1 200 OK\r\nX-A: " + b"a" * MAX_HEAD + b"\r\n\r\n",
    "closed mid-body": b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
    "closed mid-chunk": CHUNKED + b"5\r\nab",
    "closed mid-head": b"HTTP/1.1 200 OK\r\nContent-",
    "closed before anything": b"",
    "HTTP/0.9": b"<html>hi</html>",
}


@pytest.mark.parametrize("data", BAD.values(), ids=BAD.keys())
@pytest.mark.parametrize("step", [0, 1])
def test_malformed_framing_is_refused_not_guessed(data: bytes, step: int) -> None:
    with pytest.raises(ProtocolError):
        read(data, step=step)


@pytest.mark.parametrize(
    "data",
    [
        b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * (MAX_HEAD // 8),  # a head that never ends
        CHUNKED + b"1\r\na\r\n" * (MAX_HEAD // 6) + b"0\r\n" + b"X-T: y\r\n" * (MAX_HEAD // 6 + 1) + b"\r\n",
    ],
    ids=["head", "chunks and trailers"],
)
def test_input_trickled_byte_by_byte_is_refused_at_its_bound(data: bytes) -> None:
    """Each is over a bound in the end: refused (how long that takes is bench/hostile.py's)."""
    with pytest.raises(ProtocolError):
        read(data, step=1)
