"""Auto-linking: first mention only, never in code, headings, links or URLs."""

from __future__ import annotations

from cudagloss.autolink import AutoLinker, LinkTarget

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
