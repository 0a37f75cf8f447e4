"""A page's characters, its visible text and the compared form (links/page_text.py, html_text.py).

The pages are hostile: the reading must be linear in the page's size, which is measured by
comparing the time of a page of N units with one of 4N (a quadratic reading takes sixteen
times as long, a linear one four), never against a fixed time.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import pytest

from cudagloss.links.page_text import decode_page, normalise, visible_text, web_codec


def shown(html: str) -> str:
    """The visible text, whitespace collapsed (as the comparison sees it, less the folding)."""
    return " ".join(visible_text(html).split())


# --- decode_page ------------------------------------------------------------------------------


def test_the_header_charset_decodes_the_page() -> None:
    assert decode_page("naïve – ok".encode("cp1252"), "windows-1252") == "naïve – ok"
    assert decode_page("naïve".encode(), "utf-8") == "naïve"
    assert decode_page("naïve".encode(), '"UTF-8"') == "naïve"  # quoted, upper case


def test_iso_8859_1_is_read_as_windows_1252_as_browsers_do() -> None:
    """0x92 is a right single quote to every browser, whatever the label says."""
    assert decode_page(b"it\x92s caf\xe9", "iso-8859-1") == "it’s café"
    assert decode_page(b"it\x92s", "us-ascii") == "it’s"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_a_utf16_page_with_a_bom(codec: str) -> None:
    bom = b"\xff\xfe" if codec == "utf-16-le" else b"\xfe\xff"
    body = bom + "<p>Warp – 32 threads</p>".encode(codec)
    assert decode_page(body, None) == "<p>Warp – 32 threads</p>"
    assert decode_page(body, "iso-8859-1") == "<p>Warp – 32 threads</p>"  # the BOM beats a wrong header


@pytest.mark.parametrize(
    ("label", "codec"),
    [("latin1", "cp1252"), ("iso88591", "cp1252"), ("x-cp1252", "cp1252"), ("us-ascii", "cp1252"),
     ("utf8", "utf-8"), ("unicode-1-1-utf-8", "utf-8"), ("sjis", "cp932"), ("x-sjis", "cp932"),
     ("ks_c_5601-1987", "cp949"), ("gb2312", "gb18030"), ("x-gbk", "gb18030"), ("big5", "big5hkscs"),
     ("koi8-r", "koi8-r"), ("windows-874", "cp874"), ("iso-8859-9", "cp1254"), ("utf-16", "utf-16-le")],
)  # fmt: skip
def test_web_labels_name_the_encodings_browsers_use(label: str, codec: str) -> None:
    """The WHATWG Encoding Standard's labels, as browsers read them."""
    assert web_codec(label) == web_codec(label.upper()) == codec


def test_a_utf8_bom_is_not_text() -> None:
    assert decode_page(b"\xef\xbb\xbfhi", None) == "hi"


@pytest.mark.parametrize(
    "meta",
    [
        b'<meta charset="windows-1252">',
        b"<META CHARSET=windows-1252>",
        b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">',
        b"<meta content='text/html;charset=cp1252' http-equiv=content-type>",
    ],
)
def test_a_meta_charset_in_the_first_kib(meta: bytes) -> None:
    body = b"<!doctype html><html><head>" + meta + b"</head><body>it\x92s</body>"
    assert decode_page(body, None).endswith("it’s</body>")


def test_a_meta_charset_is_looked_for_only_in_the_first_kib_and_not_in_comments() -> None:
    late = b"<head>" + b" " * 1100 + b'<meta charset="windows-1252">\xc3\xa9'
    assert decode_page(late, None).endswith("é")  # UTF-8, the default
    hidden = b'<!-- <meta charset="windows-1252"> -->\xc3\xa9'
    assert decode_page(hidden, None).endswith("é")


def test_a_header_charset_beats_a_meta_charset() -> None:
    body = b'<meta charset="windows-1252">\xc3\xa9'
    assert decode_page(body, "utf-8").endswith("é")


def test_a_meta_that_says_utf16_in_ascii_is_utf8() -> None:
    assert decode_page(b'<meta charset="utf-16">\xc3\xa9', None).endswith("é")


@pytest.mark.parametrize(
    "bogus",
    ["rot13", "rot_13", "base64", "zip", "zlib", "hex", "uu", "bz2", "quopri", "utf-7", "punycode", "idna",
     "unicode_escape", "raw_unicode_escape", "undefined", "mbcs", "no-such-codec", "x" * 1000, "utf-8\x00",
     "../../etc/passwd", "", " ", "encodings.rot_13", "utf_8.x"],
)  # fmt: skip
def test_a_bogus_charset_falls_back_without_a_lookup_of_it(bogus: str) -> None:
    """Not an encoding of the web: passed over (rot13 would turn 'Uryyb' into 'Hello')."""
    assert decode_page(b"Uryyb \xc3\xa9", bogus) == "Uryyb é"
    assert decode_page(b"<meta charset=" + bogus.encode("utf-8", "replace")[:60] + b">\xc3\xa9", None).endswith("é")


def test_undecodable_bytes_are_replaced() -> None:
    assert decode_page(b"ok \xff\xfe\xfd", "utf-8") == "ok \ufffd\ufffd\ufffd"
    assert decode_page(b"\x81", "windows-1252") == "\ufffd"  # a hole in windows-1252
    assert decode_page(b"ok\x81", "shift_jis") == "ok\ufffd"  # a lead byte with no trail


def test_binary_junk_in_any_encoding_never_raises() -> None:
    rng = random.Random(7)
    labels = [None, "utf-8", "utf-16", "utf-16be", "shift_jis", "euc-jp", "iso-2022-jp", "gb18030", "big5", "koi8-r"]
    for _ in range(300):
        body = rng.randbytes(rng.randrange(0, 400))
        for label in labels:
            text = decode_page(body, label)
            assert isinstance(text, str)
            visible_text(text)
            normalise(text)


# --- visible_text -----------------------------------------------------------------------------


def test_entities_are_decoded() -> None:
    text = visible_text("<p>Tom &amp; Jerry&#8217;s&nbsp;cat &lt;b&gt; &#x2014; &copy</p>")
    assert text.strip() == "Tom & Jerry’s\xa0cat <b> — ©"


def test_inline_elements_do_not_split_words_and_blocks_do() -> None:
    text = shown("<p>war<em>p</em> sch<a href=x>ed</a>u<code>ler</code>x<sub>2</sub><span>y</span></p><p>next</p>")
    assert text == "warp schedulerx2y next"
    assert shown("<div>foo</div><div>bar</div>") == "foo bar"
    assert shown("<li>one<li>two") == "one two"
    assert shown("<table><tr><td>a<td>b<tr><th>c</table>") == "a b c"
    assert shown("a<br>b<hr>c<img src=x>d") == "a b c d"
    assert shown("<h1>Title</h1>Text<p>para</p>tail") == "Title Text para tail"


@pytest.mark.parametrize(
    "html",
    [
        "<script>var secret = 1;</script>",
        "<style>.secret { color: red }</style>",
        "<template><p>secret</p></template>",
        "<noscript>secret</noscript>",
        "<head><title>secret</title></head>",
        "<svg><text>secret</text><title>secret</title></svg>",
        "<div hidden>secret</div>",
        "<div hidden=hidden><p>secret</p></div>",
        '<p style="color: red; display : none">secret</p>',
        '<p style="DISPLAY:NONE !important">secret</p>',
        "<span style='visibility:hidden'>secret</span>",
        "<dialog>secret</dialog>",
        "<datalist><option>secret</datalist>",
        "<math><semantics><mi>x</mi><annotation encoding='application/x-tex'>secret</annotation></semantics></math>",
        "<textarea hidden>secret</textarea>",
        "<div hidden><div><span>secret</span></div><p>secret</div>",
        "<details><summary>s</summary>secret<p>secret</p></details>",  # closed: only its summary shows
    ],
)
def test_what_a_reader_does_not_see_is_not_text(html: str) -> None:
    text = visible_text(f"<body><p>before</p>{html}<p>after</p></body>")
    assert "secret" not in text
    assert "before" in text and "after" in text


@pytest.mark.parametrize(
    "html",
    [
        '<span aria-hidden="true">shown</span>',  # hidden from screen readers, not from sight
        "<div hidden=until-found>shown</div>",  # find-in-page and text fragments reveal it
        "<details open><summary>s</summary>shown</details>",
        "<details><summary>shown</summary>secret</details>",  # a closed one's summary
        "<dialog open>shown</dialog>",
        '<p style="display:block">shown</p>',
        '<p style="--display:none">shown</p>',
        "<textarea>shown</textarea>",
        "<my-element>shown</my-element>",
    ],
)
def test_what_a_reader_sees_is_text(html: str) -> None:
    assert "shown" in visible_text(html)


def test_a_script_ends_at_its_first_end_tag_even_inside_a_string() -> None:
    """As in browsers: '</script>' in a JavaScript string ends the script there."""
    text = shown('<script>var s = "</script>"; shown</script><p>after</p>')
    assert text == '"; shown after'
    assert "secret" not in shown("<script>document.write('<p>secret</p>')</script>")
    assert "secret" not in shown("<script>if (a </scripts && b) secret()</script>")


def test_unclosed_constructs_end_as_in_a_browser() -> None:
    assert shown("<p>kept<!-- an unclosed comment hides the rest <p>gone") == "kept"
    assert shown("<p>kept</p><a title='unclosed>gone") == "kept"  # a tag cut by the end is dropped
    assert shown("<p>kept<script>gone") == "kept"
    assert shown("<p>kept</p><div hidden>gone <p>still gone") == "kept"
    assert shown("<p>a <b>b <i>c <u>d") == "a b c d"
    assert shown("a < b and c <3 d </ e > f") == "a < b and c <3 d f"
    assert shown("x <!-->y<!--->z<!---->w") == "x yzw"
    assert shown("<p>a</p></div></span></table>b") == "a b"


def test_an_unclosed_svg_does_not_hide_the_rest_of_the_page() -> None:
    assert shown('<svg viewBox="0 0 1 1"><path d="M0"/><p>shown</p>') == "shown"


def test_a_huge_attribute_and_many_attributes() -> None:
    big = "x" * 2_000_000
    assert shown(f'<p title="{big}" data-a={big} style="{big}">shown</p>') == "shown"
    assert shown("<p " + "a=b " * 200_000 + ">shown</p>") == "shown"


def test_pathological_nesting_has_no_recursion() -> None:
    depth = 200_000
    assert shown("<div>" * depth + "deep" + "</div>" * depth + "after") == "deep after"
    assert shown("<div hidden>" + "<span>" * depth + "gone" + "</div>shown") == "shown"
    assert shown("<b><i>" * depth + "x") == "x"


def _cpu(func: Callable[[], object]) -> float:
    """The least CPU time of three runs (other processes' load counts as little as it can)."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        func()
        best = min(best, time.process_time() - start)
    return best


HOSTILE = [
    "<!--", "<?", "<!", "</ ", "</", "<", "&#", "&amp", "<a ", "<a b='", "<a style='", "<div>", "<div></span>",
    "<p>x", "<svg><p>", "<table><tr><td>", "<div hidden>", "<!---->", "</script", "<script>", "<li>", "<a/ ",
    "<title>", "\x00\xff\ufffd", "<math><mi>",
]  # fmt: skip


@pytest.mark.parametrize("unit", HOSTILE)
def test_hostile_pages_are_read_in_linear_time(unit: str) -> None:
    """A page of 4N units takes about four times as long as one of N, not sixteen."""
    n = max(1, 60_000 // len(unit))
    small, large = "x" + unit * n + "y", "x" + unit * (4 * n) + "y"
    small_time = _cpu(lambda: normalise(visible_text(small)))
    large_time = _cpu(lambda: normalise(visible_text(large)))
    assert large_time < 9 * max(small_time, 0.002), (unit, small_time, large_time)


# --- normalise --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("‘single’ ‚low‛ 5′", "'single' 'low' 5'"),
        ("“double” „low‟ 5″ «guillemets»", '"double" "low" 5" "guillemets"'),
        ("a‐b‑c‒d–e—f―g−h", "a-b-c-d-e-f-g-h"),
        ("soft\u00adhyphen zero\u200bwidth\u200c\u200d\u2060\ufeffjoin", "softhyphen zerowidthjoin"),
        ("  many \t\n spaces\u00a0and\u202fnbsp\u3000  ", "many spaces and nbsp"),
        ("ﬁne ＦＵＬＬ ① x²", "fine full 1 x2"),
        ("Straße WARP", "strasse warp"),
        ("…", "..."),
        ("", ""),
        ("\u200b \u00ad", ""),
    ],
)
def test_normalise(text: str, expected: str) -> None:
    assert normalise(text) == expected


def test_normalise_is_idempotent_and_survives_lone_surrogates() -> None:
    for text in ["“Ǆ” – ﬃ ǰ ΐ", "x\ud800y", "ᾼ ﬀ İ"]:
        once = normalise(text)
        assert normalise(once) == once
