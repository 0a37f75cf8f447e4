"""Inline citations of sources, `{{ cite("id") }}`, and the Measured line of a term page.

A body cites a source by its id, as the seed page does: the title linked to its URL and the
day it was checked, in parentheses. The Measured section names, per node, the GPU, driver,
CUDA version and how many gates passed, before the table; every string from the
measurement JSON passes the escaping rule.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import markdown
import pytest

from conftest import FIXTURES, ROOT
from cudagloss.check.markdown_rules import check_markdown
from cudagloss.errors import Diagnostic, GlossaryError
from cudagloss.load.glossary import load_glossary
from cudagloss.model.directives import AuthorTextError, expand
from cudagloss.model.measurement import Gate, Measurement, Result, record
from cudagloss.model.project import Project
from cudagloss.model.term import Source
from cudagloss.site.build import build_site_content
from cudagloss.site.directives import source_citation

_BODY_LINE = '  A warp holds {{ measured("warp-size", "warp_size") }} on every GPU measured.\n'


@pytest.fixture
def glossary(tmp_path: Path) -> Path:
    """The good fixture corpus and its measurements, with ids on warp's two sources."""
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    shutil.copytree(FIXTURES / "good-measurements", tmp_path / "measurements")
    edit(
        tmp_path,
        ('  - title: An example "source" & more\n', '  - id: example\n    title: An example "source" & more\n'),
        ("  - title: A source not checked yet\n", "  - id: not-checked\n    title: A source not checked yet\n"),
    )
    return tmp_path


def edit(root: Path, *changes: tuple[str, str]) -> None:
    path = root / "terms" / "warp.yaml"
    text = path.read_text(encoding="utf-8")
    for old, new in changes:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")


def line_of(root: Path, needle: str) -> int:
    lines = (root / "terms" / "warp.yaml").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


def built(root: Path) -> dict[str, str]:
    """Every page and export of the site, by path."""
    content, _ = build_site_content(
        Project(
            root=root,
            terms_dir=root / "terms",
            templates_dir=ROOT / "templates",
            site_name="CUDA Glossary",
            measurements_dir=root / "measurements",
        )
    )
    return {p.src_uri: p.markdown for p in content.pages} | {f.src_uri: f.content for f in content.exports}


def page(root: Path) -> str:
    return built(root)["terms/warp.md"]


def errors(root: Path) -> list[Diagnostic]:
    with pytest.raises(GlossaryError) as info:
        load_glossary(Project(root=root, terms_dir=root / "terms", measurements_dir=root / "measurements"))
    return info.value.errors


# -- cite() on a page -----------------------------------------------------------------------


def test_cite_shows_the_title_linked_and_the_day_it_was_checked(glossary: Path) -> None:
    edit(
        glossary, (_BODY_LINE, _BODY_LINE.replace(".\n", " {{ cite(\"example\") }}, not {{ cite('not-checked') }}.\n"))
    )
    md = page(glossary)
    assert (
        "on every GPU measured ([An example &quot;source&quot; &amp; more](https://example.com/warps), "
        "checked 2026-09-01), not ([A source not checked yet](https://example.com/unchecked), not yet checked).\n"
    ) in md
    html = markdown.markdown(md)
    assert (
        '(<a href="https://example.com/warps">An example &quot;source&quot; &amp; more</a>, checked 2026-09-01)' in html
    )
    assert '(<a href="https://example.com/unchecked">A source not checked yet</a>, not yet checked)' in html


def test_a_hostile_title_is_text_and_a_url_stays_one_link() -> None:
    source = Source(
        title="[x](javascript:alert(1)) <img src=x onerror=alert(1)> *em* `code` | a ]: b",
        url="https://example.com/a_(b)/[c]`d`?q=1&r=<2>",
        checked_on=dt.date(2026, 9, 1),
    )
    cited = str(source_citation(source))
    assert cited == (
        r"([\[x\](javascript:alert(1)) &lt;img src=x onerror=alert(1)&gt; \*em\* \`code\` \| a \]&#58; b]"
        "(https://example.com/a_%28b%29/%5Bc%5D%60d%60?q=1&amp;r=&lt;2&gt;), checked 2026-09-01)"
    )
    html = markdown.markdown(f"See {cited}.")
    assert html.count("<a ") == 1 and "<img" not in html and "<em>" not in html and "<code>" not in html
    assert 'href="https://example.com/a_%28b%29/%5Bc%5D%60d%60?q=1&amp;r=&lt;2&gt;"' in html


def test_a_url_that_escape_refuses_is_never_a_link() -> None:
    cited = source_citation(Source(title="Bad", url="javascript:alert(1)"))
    assert cited == "(Bad, not yet checked)"


def test_expand_replaces_cite_and_measured_in_order() -> None:
    body = 'A {{ measured("e", "r") }} and {{cite("s")}} and {{  cite( \'t\' )  }}.'
    handlers = {"measured": lambda d: "<{}/{}>".format(*d.values[0]), "cite": lambda d: f"[{d.sources[0]}]"}
    assert expand(body, handlers) == "A <e/r> and [s] and [t]."


# -- mistakes, where the author made them ---------------------------------------------------


def test_an_unknown_id_is_an_error_at_its_position_with_did_you_mean(glossary: Path) -> None:
    edit(glossary, (_BODY_LINE, _BODY_LINE.replace(".\n", ' {{ cite("exampel") }}.\n')))
    (error,) = errors(glossary)
    line = line_of(glossary, 'cite("exampel")')
    col = (glossary / "terms" / "warp.yaml").read_text().splitlines()[line - 1].index("{{ cite") + 1
    assert (error.path, error.line, error.col) == ("terms/warp.yaml", line, col)
    assert error.message == "body: cite('exampel'): the term has no source with id 'exampel' (did you mean 'example'?)"
    assert error.hint == (
        "its sources' ids are example, not-checked; or add 'id: exampel' to the source you mean, under sources:"
    )


def test_a_term_whose_sources_have_no_ids_is_told_how_to_add_one(glossary: Path) -> None:
    edit(
        glossary,
        ("  - id: example\n", ""),
        ("  - id: not-checked\n", ""),
        ('    title: An example "source" & more\n', '  - title: An example "source" & more\n'),
        ("    title: A source not checked yet\n", "  - title: A source not checked yet\n"),
        (_BODY_LINE, _BODY_LINE.replace(".\n", ' {{ cite("example") }}.\n')),
    )
    (error,) = errors(glossary)
    assert error.message == "body: cite('example'): the term has no source with id 'example'"
    assert error.hint == "add 'id: example' to the source you mean, under sources:"


def test_cite_is_allowed_only_in_the_body(glossary: Path) -> None:
    edit(glossary, (" tests.\n", ' tests {{ cite("example") }}.\n'))
    (error,) = errors(glossary)
    assert (error.line, error.message, error.hint) == (
        line_of(glossary, "A group of `32` threads"),  # a folded scalar is one line: its first
        "definition: cite(...) is allowed only in the body",
        "cite sources in the body",
    )
    assert [e.message for e in check_markdown('{{ measured("e", "r") }}', directives=False)] == [
        "measured(...) is allowed only in the body"
    ]


@pytest.mark.parametrize(
    "call", ["{{ cite(example) }}", '{{ cite("a", "b") }}', '{{ cite("a") | upper }}', "{{ cite() }}"]
)
def test_any_other_form_of_cite_is_not_a_directive(call: str) -> None:
    with pytest.raises(AuthorTextError) as info:
        expand(f"See {call}.", {})
    assert info.value.message == f"not a directive: {call!r}"
    assert 'cite("source-id")' in info.value.hint and (info.value.line, info.value.col) == (1, 5)


def test_source_ids_are_slugs_and_unique_within_the_term(glossary: Path) -> None:
    edit(glossary, ("  - id: example\n", "  - id: Example Source\n"), ("  - id: not-checked\n", "  - id: example\n"))
    (error,) = errors(glossary)
    assert (error.line, error.col, error.message, error.hint) == (
        line_of(glossary, "id: Example Source"),
        9,
        "sources[0].id: 'Example Source' is not an id",
        "ids are lower-case words joined by dashes, e.g. 'ptx-isa'",
    )
    edit(glossary, ("  - id: Example Source\n", "  - id: example\n"))
    (error,) = errors(glossary)
    assert (error.line, error.col, error.message, error.hint) == (
        line_of(glossary, "A source not checked yet") - 1,
        9,
        "sources[1].id: 'example' is also the id of sources[0]",
        "give each source its own id: cite() names one source",
    )


# -- the Measured line ----------------------------------------------------------------------


def test_the_measured_section_names_gpu_driver_cuda_and_gates_per_node(glossary: Path) -> None:
    record(
        Measurement(
            experiment="warp-size",
            purpose="Read the warp size attribute (a fixture, not a measurement)",
            code_hash="sha256:fixture",
            status="ok",
            provenance={
                "node": "node-c",
                "gpu_name": "NVIDIA H200",
                "driver_version": "580.159.04",
                "cuda_driver_version": "13.0 <b>*beta*</b>",
                "recorded_at": "2026-12-03T12:00:00+00:00",
            },
            gates=[Gate("readable", True), Gate("matches numpy", True)],
            results=[Result("warp_size", 32, "threads", "threads per warp"), Result("query_median", 1.0, "ms")],
        ),
        glossary / "measurements",
    )
    site = built(glossary)
    measured = site["terms/warp.md"].split("## Measured\n", 1)[1].split("## Related terms\n", 1)[0]
    lines = [line for line in measured.splitlines() if line.startswith("Measured on ")]
    assert lines == [  # one node per GPU model: by model name ('<' sorts before 'A')
        "Measured on Example GPU &lt;B&gt; (card fixture-b), on 2026-11-30: 1 of 1 gate passed.",
        "Measured on Example GPU A (card fixture-a), on 2026-11-30: 1 of 1 gate passed.",
        "Measured on NVIDIA H200 (card node-c), driver 580.159.04, CUDA 13.0 &lt;b&gt;\\*beta\\*&lt;/b&gt;, "
        "on 2026-12-03: 2 of 2 gates passed.",
    ]
    assert measured.index(lines[-1]) < measured.index("| Result |")  # before the table, which is as it was
    assert "| threads per warp |" in measured
    assert "\n" + lines[-1] + "\n" in site["llms-full.txt"]  # the exported glossary says the same
