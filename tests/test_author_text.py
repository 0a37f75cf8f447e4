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


def _outcome(render: object, text: str, context: dict[str, object]) -> object:
    try:
        return render(text, context)  # type: ignore[operator]
    except AuthorTextError as exc:
        return ("error", exc.message, exc.line, exc.hint)


def test_simple_measured_calls_render_exactly_as_jinja_does() -> None:
    """Bodies whose only Jinja is measured("x", "y") skip compiling a template; the text and
    every error (message, line, hint) must be what Jinja gives."""
    import yaml

    from conftest import FIXTURES, ROOT
    from cudagloss import authortext
    from cudagloss.cite import ValueCiter
    from cudagloss.load import load_corpus
    from cudagloss.measured import load_measurements

    measurements, _ = load_measurements(ROOT / "measurements", ROOT)
    terms = load_corpus(ROOT / "terms", ROOT, measurements=measurements)
    bodies = [t.term.body for t in terms]
    for path in sorted((FIXTURES / "broken").glob("*.yaml")) + sorted((FIXTURES / "good").glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("body"), str):
            bodies.append(data["body"])
    bodies += [
        'One {{measured("ptx-jit","grid")}} and {{  measured( \'ptx-jit\' ,  "blocks_per_sm" )  }}.\n',
        'Line one\nline two\n{{ measured("no-such-experiment", "x") }}\n',
        'A\n{{ measured("ptx-jit", "no_such_result") }}',
        '{{ measured("ptx-jit", "grid") }} then {{ 1 + 1 }}',  # not simple: Jinja renders it
        '{{ measured("ptx-jit", "grid") }} {# a comment #}',
        '{{ measured("ptx-jit", "grid") | upper }}',
        '{{ measured("ptx-jit", "grid"}}',  # a syntax error
        '{{ measured("ptx-jit", \'grid") }}',
        'Braces } and { alone, and {{ measured("ptx-jit", "grid") }}',
    ]
    jit = terms["jit-compilation"].term
    simple = 0
    for body in bodies:

        def context() -> dict[str, object]:
            return {"measured": ValueCiter(jit, measurements, "terms/jit-compilation.md")}

        fast = _outcome(authortext.render_author_text, body, context())
        slow = _outcome(authortext._render_jinja, body, context())
        assert fast == slow, body
        if "{{" in body and _outcome(authortext._simple_calls, body, context()) is not None:
            simple += 1
    assert simple >= 6  # the fast path did run, errors included
