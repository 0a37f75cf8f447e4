"""Auto-linking: first mention only, never in code, headings, links or URLs."""

from __future__ import annotations

from cudagloss.site.autolink import AutoLinker, LinkTarget

TARGETS = [
    LinkTarget("ptx", "terms/ptx.md", "The virtual ISA.", forms=("Parallel Thread Execution",), exact_forms=("PTX",)),
    LinkTarget(
        "jit-cache", "terms/jit-cache.md", 'A "cache".', forms=("JIT compilation cache", "JIT cache"), exact_forms=()
    ),
    LinkTarget("jit", "terms/jit.md", "Compiling late.", forms=("JIT compilation",), exact_forms=("JIT",)),
]


def link(text: str, page: str = "sass") -> tuple[str, set[str]]:
    return AutoLinker(TARGETS).link(text, page, f"terms/{page}.md")


def test_first_mention_only_with_definition_as_title() -> None:
    out, linked = link("PTX is here. PTX again.")
    assert out == '[PTX](ptx.md "The virtual ISA.") is here. PTX again.'
    assert linked == {"ptx"}


def test_acronyms_match_case_sensitively_names_do_not() -> None:
    out, _ = link("ptx is not linked, parallel thread execution is.")
    assert out == 'ptx is not linked, [parallel thread execution](ptx.md "The virtual ISA.") is.'


def test_longest_form_wins() -> None:
    out, linked = link("The JIT compilation cache is not JIT compilation.")
    assert out.startswith('The [JIT compilation cache](jit-cache.md "A &quot;cache&quot;.")')
    assert '[JIT compilation](jit.md "Compiling late.")' in out
    assert linked == {"jit-cache", "jit"}


def test_code_headings_links_and_urls_are_left_alone() -> None:
    text = (
        "# PTX heading\n\n"
        "```\nPTX in a fence\n```\n\n"
        "    PTX in indented code\n\n"
        "Inline `PTX` code, a [PTX link](https://x.org/PTX), <https://x.org/PTX> and https://x.org/PTX.\n\n"
        "[ref]: https://x.org/PTX\n"
    )
    out, linked = link(text)
    assert out == text
    assert linked == set()


def test_setext_heading_is_left_alone_but_following_prose_is_linked() -> None:
    out, _ = link("PTX title\n=========\n\nThen PTX.\n")
    assert out == 'PTX title\n=========\n\nThen [PTX](ptx.md "The virtual ISA.").\n'


def test_a_term_never_links_to_itself_and_skips_targets_already_linked() -> None:
    out, linked = link("PTX and JIT.", page="ptx")
    assert out == 'PTX and [JIT](jit.md "Compiling late.").'
    out, linked = AutoLinker(TARGETS).link("PTX here.", "sass", "terms/sass.md", already={"ptx"})
    assert out == "PTX here." and linked == set()


def test_words_inside_other_words_are_not_matched() -> None:
    out, _ = link("PTXAS and SPTX and JITted stay.")
    assert out == "PTXAS and SPTX and JITted stay."


def test_relative_links_from_another_folder() -> None:
    out, _ = AutoLinker(TARGETS).link("PTX", "index", "index.md")
    assert out == '[PTX](terms/ptx.md "The virtual ISA.")'


def _reference_link(targets: list[LinkTarget], text: str, page_slug: str) -> tuple[str, set[str]]:
    """The obvious implementation, one alternation regex of every form: the oracle for the fast one."""
    import html
    import re

    from cudagloss.text.markdown import plain_text

    by_slug = {t.slug: t for t in targets}
    by_form = {f.casefold(): t.slug for t in targets for f in t.forms}
    by_exact = {f: t.slug for t in targets for f in t.exact_forms}
    alternatives = [(f, f"(?i:{re.escape(f)})") for t in targets for f in t.forms]
    alternatives += [(f, re.escape(f)) for t in targets for f in t.exact_forms]
    alternatives.sort(key=lambda a: -len(a[0]))
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(a for _, a in alternatives) + r")(?!\w)")
    done, linked = {page_slug}, set()

    def replace(m: re.Match[str]) -> str:
        slug = by_exact.get(m.group(0)) or by_form.get(m.group(0).casefold())
        if slug is None or slug in done:
            return m.group(0)
        done.add(slug)
        linked.add(slug)
        title = html.escape(plain_text(by_slug[slug].definition), quote=True)
        return f'[{m.group(0)}](../{by_slug[slug].src_uri} "{title}")'.replace("../terms/", "")

    return pattern.sub(replace, text), linked


def test_same_links_as_one_alternation_regex_on_random_prose() -> None:
    import random

    rng = random.Random(20261203)
    targets = [
        *TARGETS,
        LinkTarget(
            "sm", "terms/sm.md", "A multiprocessor.", forms=("streaming multiprocessor", "SM-90"), exact_forms=("SM",)
        ),
        LinkTarget("cubin", "terms/cubin.md", "A file.", forms=(".cubin", "CUDA binary"), exact_forms=()),
        LinkTarget("sm-90a", "terms/sm-90a.md", "An arch.", forms=("sm_90a",), exact_forms=()),
        LinkTarget("kernel", "terms/kernel.md", "A function.", forms=("kernel",), exact_forms=()),
        LinkTarget("no-image", "terms/no-image.md", "An error.", forms=("kernel image missing",), exact_forms=()),
    ]
    pieces = [f for t in targets for f in (*t.forms, *t.exact_forms)]
    pieces += [
        "the",
        "a",
        "JITs",
        "xPTX",
        "PTXs",
        "jit",
        "cache",
        "file",
        "sm_90",
        "kernel image",
        "-",
        ".",
        ",",
        "_",
        "multiprocessor",
    ]
    linker = AutoLinker(targets)
    for _ in range(2000):
        words = []
        for _ in range(rng.randint(1, 12)):
            w = rng.choice(pieces)
            w = w.upper() if rng.random() < 0.2 else w.lower() if rng.random() < 0.2 else w
            words.append(w)
        text = "".join(w + rng.choice([" ", "", " ", "\n"]) for w in words)
        assert (
            linker._link_prose(text, {"page"}, set(), "terms/page.md") == _reference_link(targets, text, "page")[0]
        ), text


def test_relative_href_agrees_with_posixpath_relpath() -> None:
    import itertools
    import posixpath

    from cudagloss.model.urls import relative_href

    uris = [
        "index.md",
        "terms/ptx.md",
        "terms/sass.md",
        "sections/compilation.md",
        "measurements/index.md",
        "measurements/raw/jit/h200.json",
        "a/b/c.md",
        "a/x.md",
        "terms.md",
    ]
    for to_uri, from_uri in itertools.product(uris, uris):
        expected = posixpath.relpath(to_uri, posixpath.dirname(from_uri) or ".")
        assert relative_href(to_uri, from_uri) == expected, (to_uri, from_uri)
