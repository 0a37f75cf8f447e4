"""Author text is data: sandboxed Jinja, strict undefined values, raw HTML escaped."""

from __future__ import annotations

import pytest

from cudagloss.authortext import AuthorTextError, render_author_text
from cudagloss.markdown_text import neutralize_html, plain_text


def test_values_render_and_undefined_is_an_error_with_its_line() -> None:
    assert render_author_text("a {{ x }} b", {"x": 3}) == "a 3 b"
    with pytest.raises(AuthorTextError) as info:
        render_author_text("line one\nline {{ nope }}", {})
    assert info.value.message == "'nope' is undefined"
    assert info.value.line == 2


def test_sandbox_refuses_python_internals() -> None:
    with pytest.raises(AuthorTextError) as info:
        render_author_text("{{ ''.__class__.__mro__[1].__subclasses__() }}", {})
    assert "__class__" in info.value.message or "unsafe" in info.value.message or "undefined" in info.value.message


def test_syntax_errors_are_reported_with_their_line() -> None:
    with pytest.raises(AuthorTextError) as info:
        render_author_text("ok\n{% if %}", {})
    assert info.value.message.startswith("template syntax error:")
    assert info.value.line == 2


def test_raw_html_is_escaped_outside_code_only() -> None:
    text = "A <b>tag</b>, `<code>` kept, <https://x.org/a> kept.\n\n```\n<div>\n```\n"
    assert neutralize_html(text) == "A &lt;b>tag&lt;/b>, `<code>` kept, <https://x.org/a> kept.\n\n```\n<div>\n```\n"


def test_plain_text_for_tooltips() -> None:
    assert plain_text("A `sm_90` **bold** [link](x.md) &amp; more") == "A sm_90 bold link & more"
