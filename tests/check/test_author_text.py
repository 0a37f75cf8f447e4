"""Author text is data: one directive, parsed and never evaluated; raw HTML shown as text;
plain text made inert by one escaping rule, checked against the real Markdown parser."""

from __future__ import annotations

import html
import random
import re
from collections.abc import Callable

import markdown
import pytest

from conftest import ROOT
from cudagloss.check.markdown_rules import check_markdown
from cudagloss.model.directives import AuthorTextError, Directive, Handler, expand, parse_directives
from cudagloss.site import escape
from cudagloss.text.markdown import MAX_NESTING, MAX_UNMATCHED, neutralize_html, plain_text


def _shown(d: Directive) -> str:
    experiment, result = d.values[0]
    return f"<{experiment}/{result}>"


_value: dict[str, Handler] = {"measured": _shown}


def test_directives_are_expanded_with_literal_arguments_only() -> None:
    body = 'One {{measured("ptx-jit","grid")}} and {{  measured( \'ptx-jit\' ,  "blocks_per_sm" )  }}.\n'
    assert expand(body, _value) == "One <ptx-jit/grid> and <ptx-jit/blocks_per_sm>.\n"
    assert [d.values[0] for d in parse_directives(body)] == [
        ("ptx-jit", "grid"),
        ("ptx-jit", "blocks_per_sm"),
    ]


@pytest.mark.parametrize(
    "body",
    [
        "{{ x }}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ measured.__init__.__globals__ }}",
        "{{ measured.measurements.folder }}",
        "{% for i in range(10**9) %}x{% endfor %}",
        "{{ 9 ** 9 ** 9 }}",
        "{{ 'a' * 10**10 }}",
        "{# a comment #}",
        '{{ measured("ptx-jit", "grid") | upper }}',
        '{{ measured("ptx-jit", "grid") + measured("ptx-jit", "grid") }}',
        '{{ measured(x, "grid") }}',
        '{{ measured("ptx-jit", "grid"}}',
        '{{ measured("ptx-jit", \'grid") }}',
        '{{ measured("ptx-jit", "gr\\"id") }}',
        '{{ measured("ptx-jit", "grid", "extra") }}',
        "{{ lipsum() }}",
        '{%- include "/etc/passwd" %}',
        '{% import "os" as os %}',
        "{{",
        "{%",
    ],
)
def test_anything_else_in_braces_is_an_error_and_is_never_evaluated(body: str) -> None:
    text = f"Line one\n  then {body} after"
    with pytest.raises(AuthorTextError) as info:
        expand(text, _value)
    assert (info.value.line, info.value.col) == (2, 8)
    assert info.value.message.startswith("not a directive: ")
    assert "measured(" in info.value.hint


def test_every_mistake_is_reported_at_once_with_its_position() -> None:
    body = "{{ a }}\nok {{ measured('e', 'r') }}\n  {% b %} and {# c #}\n"
    errors = check_markdown(body, directives=True)
    assert [(e.line, e.col) for e in errors] == [(1, 1), (3, 3), (3, 15)]
    assert [e.line for e in check_markdown(body, directives=False)] == [1, 2, 3, 3]


def test_braces_are_literal_in_code_and_after_a_backslash() -> None:
    body = (
        "Write `{{ x }}` or ``a {% b %}``, and \\{{ in prose.\n\n"
        "```cpp\nint a[2][2] = {{1, 2}, {3, 4}};\n```\n\n"
        "    {# indented code #}\n\n"
        "Then {{ measured('e', 'r') }}.\n"
    )
    assert expand(body, _value) == body.replace("{{ measured('e', 'r') }}", "<e/r>")
    assert check_markdown(body, directives=True) == []


@pytest.mark.parametrize(
    "target",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        " javascript:alert(1)",
        "jav&#x61;script:alert(1)",
        "jav&#97;script:alert(1)",
        "java&Tab;script:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html;base64,PHNjcmlwdD4=",
        "file:///etc/passwd",
    ],
)
def test_links_a_reader_must_not_follow_are_errors_in_every_form(target: str) -> None:
    for body in (f"See [x]({target}).", f"See [x].\n\n[x]: {target}\n", f"See [x].\n\n[x]:{target}\n"):
        errors = check_markdown(body, directives=True)
        assert [e.message for e in errors] == [f"link to {target.strip()!r} is not allowed"], body


@pytest.mark.parametrize(
    "body",
    [
        "A [reference][r] link.\n\n[r]:javascript:alert(1)\n",
        "A [x][] link.\n\n[x]:\n  javascript:alert(1)\n",
        "[x](javascript:alert(1) <b>)",
        "[x](javascript://%0aalert(1)//<b>)",
        "[x](\njavascript:alert(1))",
        "[x](javascript:alert(1)\n)",
        "[x](data:text/html,<script>alert(1)</script>)",
        "[x](<java\tscript:alert(1)>)",
        "[x](jav&#x09;ascript:alert(1))",
        "[x](VBScript:msgbox)",
    ],
)
def test_every_form_of_a_script_link_is_caught_whatever_the_parser_makes_of_it(body: str) -> None:
    errors = check_markdown(body, directives=True)
    assert errors and all("not allowed" in e.message or "outside code" in e.message for e in errors), errors


def test_a_scheme_in_code_is_only_text() -> None:
    assert check_markdown("Write `javascript:` or\n\n```\ndata:x\n```\n", directives=True) == []
    assert check_markdown("The metadata: field.", directives=True) == []


def test_images_are_refused_outside_code() -> None:
    errors = check_markdown("A ![diagram](https://x.org/a.png) here, `![x](y)` in code.", directives=True)
    assert [(e.col, e.message.split(":")[0]) for e in errors] == [(3, "images are not published")]


_NESTED: dict[str, list[Callable[[int], str]]] = {
    "brackets": [lambda n: "[" * n + "]" * n, lambda n: "x " + "(" * n + ")" * n],
    "lists and quotes": [
        lambda n: "+ " * n + "x",
        lambda n: "1. " * n + "x",
        lambda n: "> " * n + "x",
        lambda n: "a\n\n" + " " * (4 * (n - 1)) + "- x",
    ],
}


@pytest.mark.parametrize(("what", "i"), [(w, i) for w, makers in _NESTED.items() for i in range(len(makers))])
def test_deep_nesting_is_an_error_before_the_parser_recurses(what: str, i: int) -> None:
    make = _NESTED[what][i]
    assert check_markdown(make(MAX_NESTING), directives=True) == []
    errors = check_markdown(make(MAX_NESTING + 1), directives=True)
    assert [e.message for e in errors] == [f"{what} nested {MAX_NESTING + 1} deep (at most {MAX_NESTING})"]


def test_a_line_that_opens_with_a_long_code_span_is_not_nested() -> None:
    """A code span is blanked before nesting is measured; its blanks are not indentation (a term
    writer met "lists and quotes nested 20 deep" for an 80-character span)."""
    span = "`" + "cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, shared)" * 2 + "`"
    assert check_markdown(f"{span} answers it.\n\n{span} > - + again.", directives=True) == []
    deep = "`x` then\n\n" + "> " * (MAX_NESTING + 1) + "`code` x"
    assert [e.message for e in check_markdown(deep, directives=True)] == [
        f"lists and quotes nested {MAX_NESTING + 1} deep (at most {MAX_NESTING})"
    ]


def test_safe_links_pass() -> None:
    body = "[a](https://x.org/a_(b)) [b](sass.md) [c](#top) [d](mailto:a@b.org) [e](../measurements/x.md#n-r)"
    assert check_markdown(body, directives=True) == []


def test_many_unclosed_brackets_are_an_error_before_markdown_sees_them() -> None:
    fine = "[" * MAX_UNMATCHED + "x" * 1000
    assert check_markdown(fine, directives=True) == []
    errors = check_markdown("a\n" + "[(" * MAX_UNMATCHED, directives=True)
    assert len(errors) == 1
    assert errors[0].message == f"{2 * MAX_UNMATCHED} unclosed '[' or '(' (at most {MAX_UNMATCHED})"
    assert (errors[0].line, errors[0].col) == (2, MAX_UNMATCHED + 1)


def test_raw_html_is_escaped_outside_code_only() -> None:
    text = "A <b>tag</b>, `<code>` kept, <https://x.org/a> kept.\n\n```\n<div>\n```\n"
    assert neutralize_html(text) == "A &lt;b>tag&lt;/b>, `<code>` kept, <https://x.org/a> kept.\n\n```\n<div>\n```\n"


def test_raw_html_in_a_link_text_is_escaped_but_its_destination_kept() -> None:
    text = "See [<img src=x onerror=alert(2)>] and [<b>x</b>](<https://x.org/a>) here."
    assert (
        neutralize_html(text) == "See [&lt;img src=x onerror=alert(2)>] and [&lt;b>x&lt;/b>](<https://x.org/a>) here."
    )


def test_plain_text_for_tooltips() -> None:
    assert plain_text("A `sm_90` **bold** [link](x.md) &amp; more") == "A sm_90 bold link & more"


# Every place a template puts plain text: the rendered element must hold exactly that text
# (whitespace folded) and nothing else: no tag, link, emphasis, entity or block.
_CONTEXTS = [
    ("{T}", r"<p>(.*)</p>"),
    ("- {T}", r"<li>(.*)</li>"),
    ("# {T}", r"<h1[^>]*>(.*)</h1>"),
    ('[{T}](x.md "{L}")', r'<a href="x.md" title="([^"]*)">(.*)</a>'),
    ("| a |\n|---|\n| {T} |", r"<td>(.*)</td>"),
    ('!!! note "{T}"\n    x', r'<p class="admonition-title">([^\n]*)</p>'),
    ("x\n{T}", r"<p>x\n(.*)</p>"),
]
_PIECES = [*"\\`*_{}[]()#+-.!|~<>&\"':=?ab1 \n\t/;",
    "&amp;", "&#x3c;", "://", "javascript:", "!!!", "???", "```", "~~~", "    ", "<script>", "1.", "---", "===",
    "[x](y)", "![i](j)", "<a href=x>", "]:", "\u00a0",
]  # fmt: skip


def test_plain_text_is_inert_in_every_template_context() -> None:
    md = markdown.Markdown(extensions=["admonition", "tables", "toc", "pymdownx.superfences", "pymdownx.details"])
    rng = random.Random(12)
    strings = ["".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 25))) for _ in range(300)]
    strings += ["Amdahl's law", "sm_90 and __init__", "1. not a list", "- not an item", "C# and F#", "[x]: y"]
    for s in strings:
        want = " ".join(s.split())
        if not want:
            continue
        for template, pattern in _CONTEXTS:
            source = template.replace("{T}", escape.text(s)).replace("{L}", escape.link_title(s))
            md.reset()
            out = md.convert(source)
            found = re.search(pattern, out, re.S)
            assert found is not None, (s, source, out)
            for group in found.groups():
                assert "<" not in group, (s, source, out)
                assert html.unescape(group).strip() == want, (s, source, out)


def test_urls_for_attributes_are_http_https_or_mailto_only() -> None:
    assert escape.url("https://x.org/a?b=1&c=<2>") == "https://x.org/a?b=1&amp;c=&lt;2&gt;"
    for bad in (
        "javascript:alert(1)",
        "http://[::1/x",
        "https://x.org:99999/",
        "//x.org",
        "https:///",
        "ftp://x",
        "data:,x",
    ):
        assert escape.url(bad) is None, bad
    assert escape.json_ld({"a": "</script><script>alert(1)</script>&"}) == (
        '{"a": "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\\u0026"}'
    )


def test_the_sanitiser_keeps_our_markup_and_drops_anything_live() -> None:
    ours = (
        '<h2 id="x">T<a class="headerlink" href="#x" title="Permanent link">¶</a></h2>'
        '<div class="admonition warning"><p class="admonition-title">W</p></div>'
        '<table><tr><th style="text-align: left;">a</th></tr></table>'
    )
    kept = escape.clean_html(ours)
    for fragment in (
        '<h2 id="x">',
        'class="headerlink" href="#x"',
        '<div class="admonition warning">',
        "text-align:left",
    ):
        assert fragment in kept, kept
    hostile = (
        '<script>alert(1)</script><img src=x onerror=alert(1)><a href="javascript:alert(1)">a</a>'
        '<a href="jav&#x61;script:alert(1)">b</a><iframe src="https://x.org"></iframe><svg onload=alert(1)></svg>'
        '<td style="background:url(https://x.org/leak)">c</td><form action="https://x.org"><input></form>'
        '<a href="data:text/html,x">d</a><style>*{}</style><!-- c --><object data="x"></object>'
    )
    clean = escape.clean_html(hostile)
    for needle in (
        "script",
        "onerror",
        "onload",
        "javascript",
        "iframe",
        "background",
        "form",
        "data:",
        "style>",
    ):
        assert needle not in clean.lower(), (needle, clean)
    assert "<svg></svg>" in clean  # a chart's element, kept without its handler


def test_every_body_in_the_repository_still_expands() -> None:
    from cudagloss.load.corpus import load_corpus
    from cudagloss.load.measurements import load_measurements

    measurements, _ = load_measurements(ROOT / "measurements", ROOT)
    for t in load_corpus(ROOT / "terms", ROOT, measurements=measurements):
        assert check_markdown(t.term.body, directives=True) == [], t.slug
        expand(t.term.body, _value)


# Bodies where a simple tokenizer and the renderer disagree about what is code: the
# neutraliser must side with prose (second security review).
_DISAGREEING = [
    "Intro para.\n\n``` a`b\n<img src=x onerror=alert(1)>\n```\n",  # backtick in the info string: no fence
    "Intro `a\n\n<img src=x onerror=alert(5)>\n\n<a href=x>click</a>\n\nb` end.",  # a span cannot cross paragraphs
    'Intro [x](https://example.com "\n\n<img src=x onerror=alert(7)>\n\n") end.',  # nor can a link title
    "Intro para.\n\u00a0\n    <img src=x onerror=alert(3)>",  # NBSP is not blank: no indented code
    "Intro.\n\n```\n<img src=x onerror=alert(9)>\n",  # an unclosed fence is not code
    "Intro.\n\n    <img src=x onerror=alert(4)>\n",  # indented code may be a paragraph to some renderer
    "A \\`<img src=x onerror=alert(8)>` here.",  # an escaped backtick opens no code span
]


@pytest.mark.parametrize("body", _DISAGREEING)
def test_raw_html_is_escaped_wherever_a_renderer_may_read_prose(body: str) -> None:
    out = neutralize_html(body)
    assert "<img" not in out and "<a " not in out, out
    md = markdown.Markdown(extensions=["admonition", "tables", "toc", "pymdownx.superfences"])
    assert "<img" not in md.convert(out)


def test_closed_fences_and_code_spans_keep_their_text() -> None:
    body = "Use `std::vector<float>` here.\n\n```cpp\ntemplate <typename T> T f();\n```\n"
    assert neutralize_html(body) == body


def test_the_sanitiser_keeps_theme_ids_and_classes_out_of_page_content() -> None:
    html_in = (
        '<div id="__config">{}</div><h2 id="__config">x</h2><a class="md-button x" href="#a">b</a><p id="ok">c</p>'
    )
    out = escape.clean_html(html_in)
    assert "__config" not in out and "md-button" not in out
    assert 'id="ok"' in out and 'class="x"' in out


def test_ordinary_cuda_prose_and_code_pass_the_checks() -> None:
    body = (
        "Write the PTX to a file: its name ends in `.ptx`. Data: 5 GB. File: the output.\n\n"
        "```cpp\ncudaError_t status = cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&numBlocks,\n"
        + " " * 76
        + "myKernel,\n"
        + " " * 76
        + "blockSize, 0, flags);\nk<<<grid, block>>>(a[b[c[d]]]);\n```\n\n"
        "Images in code are text: `![x](y)`.\n\n```\n" + "![]\n" * 200 + "```\n"
    )
    assert check_markdown(body, directives=True) == []
