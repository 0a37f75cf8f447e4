"""Numbers about a GPU typed by hand into author prose: found with exact messages and
positions, allowed only where they are not prose or are reviewed facts (terms/_facts.yml)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from cudagloss.check.markdown_fields import typed_numbers
from cudagloss.check.typed_hints import facts_hint
from cudagloss.check.typed_numbers import fact_mistakes
from cudagloss.errors import Diagnostic, GlossaryError
from cudagloss.load.corpus import load_corpus
from cudagloss.load.facts import FACTS_FILE, load_facts
from cudagloss.load.measurements import load_measurements
from cudagloss.load.terms import load_term, term_files
from cudagloss.model.measurements import MeasurementSet

HEAD = "# yaml-language-server: $schema=../schema/term.schema.json\n"
SECTIONS = "sections:\n  - slug: basics\n    title: Basics\n"
CITES = "measurements:\n  - experiment: warp-size\n"
FALLBACK = facts_hint("terms/_facts.yml")


def term(body: str, extra: str = "", definition: str = "A term used by these tests.") -> str:
    """A term file whose body starts on line 7, each line indented by two spaces."""
    lines = "".join(f"  {line}\n" if line else "\n" for line in body.split("\n"))
    return f"{HEAD}name: Typed\ntitle: What is it?\ndefinition: {definition}\nsection: basics\nbody: |\n{lines}{extra}"


def check(
    root: Path, files: dict[str, str], *, measured: bool = False, measurements: MeasurementSet | None = None
) -> list[Diagnostic]:
    folder = root / "terms"
    folder.mkdir(exist_ok=True)
    (folder / "_sections.yaml").write_text(SECTIONS, encoding="utf-8")
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    if measured:
        measurements = load_measurements(FIXTURES / "good-measurements")[0]
    try:
        load_corpus(folder, root, measurements=measurements)
    except GlossaryError as exc:
        return exc.diagnostics
    return []


def shown(found: list[Diagnostic]) -> list[str]:
    return [f"{d.path}:{d.line}:{d.col}: {d.message}" for d in found]


# --- what counts: every unit family, wherever prose puts it --------------------------------

TYPED = [
    ("The H200 has 132 SMs.", "132 SMs"),
    ("It has 132 streaming multiprocessors.", "132 streaming multiprocessors"),
    ("A 32-thread warp.", "32-thread"),
    ("A grid of 1,056 blocks.", "1,056 blocks"),
    ("Up to 8 resident blocks per SM.", "8 resident blocks"),
    ("Two 4 warps.", "4 warps"),
    ("Each SM has 4 warp schedulers.", "4 warp schedulers"),
    ("The SM has 4 warp\n  schedulers.", "4 warp schedulers"),
    ("It has 64K registers.", "64K registers"),
    ("Each of 32 lanes.", "32 lanes"),
    ("The GPU has 16896 CUDA cores.", "16896 CUDA cores"),
    ("It waits 400 cycles.", "400 cycles"),
    ("Memory is 141 GB.", "141 GB"),
    ("Shared memory: 228 KiB.", "228 KiB"),
    ("A 128 B line.", "128 B"),
    ("Each is 16 bytes.", "16 bytes"),
    ("It copies at 4.8 TB/s.", "4.8 TB/s"),
    ("It reaches 989 TFLOP/s.", "989 TFLOP/s"),
    ("It clocks 1.98 GHz.", "1.98 GHz"),
    ("It draws 700 W.", "700 W"),
    ("The kernel took 20ms.", "20ms"),
    ("The kernel took 17.6 ms.", "17.6 ms"),
    ("A launch costs 3 µs.", "3 µs"),
    ("A launch costs 5 us.", "5 us"),
    ("A launch costs 900 ns.", "900 ns"),
    ("cuInit took 2 s.", "2 s"),
    ("The JIT takes 4–8 ms.", "4–8 ms"),
    ("The cache makes the load 45× faster.", "45×"),
    ("The cache makes the load 3 times faster.", "3 times faster"),
    ("A GPU of compute capability 9.0.", "compute capability 9.0"),
    ("A CC 8.6 card.", "CC 8.6"),
    ("It ran on an sm_90 GPU.", "sm_90"),
    ("The GPU is SM 90.", "SM 90"),
    ("- in a list, 2048 threads", "2048 threads"),
    ("In *1024 threads* emphasis.", "1024 threads"),
    ("In **132** SMs strong emphasis.", "132 SMs"),
    ("## A heading of 48 KB", "48 KB"),
    ("A [link text of 32 warps](https://example.com/) counts.", "32 warps"),
    ("A warp of 32&nbsp;threads.", "32 threads"),
    ("A line broken between 132\nSMs.", "132 SMs"),
]


@pytest.mark.parametrize(("text", "quoted"), TYPED, ids=[q for _, q in TYPED])
def test_a_typed_number_is_found(text: str, quoted: str) -> None:
    from cudagloss.check.typed_numbers import find

    assert [f.text for f in find(text)] == [quoted]


ALLOWED = [
    "In code, `132 SMs` is text.",
    "```\n132 SMs and 20 ms\n```",
    "Before.\n\n    132 SMs in an indented block\n",
    'The {{ measured("ptx-jit", "sm_count") }} SMs are measured.',
    "A [guide](https://example.com/132-SMs/20ms) link target.",
    "A bare https://example.com/132-SMs URL.",
    "Since 2006 threads are grouped in warps; in 2024 blocks grew.",
    "The 1990s.",
    "CUDA 12.4, PTX ISA 8.5 and driver 580.159.04 are software.",
    "Compile for sm_90 and `compute_75`.",
    "The H200 and x86_64.",
    "Time is Δt, 5 μs or 2π radians.",
    "It is 2× the price of lunch.",
    "Written as thirty-two threads.",
]


@pytest.mark.parametrize("text", ALLOWED)
def test_what_is_not_typed_prose_passes(text: str) -> None:
    from cudagloss.check.typed_numbers import find

    assert find(text) == []


# --- in a glossary: exact messages, positions and hints ----------------------------------

BODY = """The H200 has 132 SMs and **141 GB** of memory.

## Loads in 20 ms

- a list item with 2048 threads
- *4.8 TB/s* in emphasis

A warp holds 32 threads on {{ measured("warp-size", "warp_size") }} GPUs.
Allowed: `132 SMs`, [the guide](https://example.com/132-SMs), since 2006 blocks, CUDA 12.4.

```
1024 threads
```"""


def test_each_typed_number_is_reported_at_its_place_with_the_call_that_replaces_it(tmp_path: Path) -> None:
    extra = CITES + "where_you_meet_this:\n  - label: nvidia-smi\n    note: Shows 80 GB.\n"
    found = check(tmp_path, {"a.yaml": term(BODY, extra, definition="A GPU of compute capability 9.0.")}, measured=True)
    assert shown(found) == [
        "terms/a.yaml:4:13: definition: 'compute capability 9.0' is a number about a GPU typed by hand",
        "terms/a.yaml:7:16: body: '132 SMs' is a number about a GPU typed by hand",
        "terms/a.yaml:7:30: body: '141 GB' is a number about a GPU typed by hand",
        "terms/a.yaml:9:15: body: '20 ms' is a number about a GPU typed by hand",
        "terms/a.yaml:11:22: body: '2048 threads' is a number about a GPU typed by hand",
        "terms/a.yaml:12:6: body: '4.8 TB/s' is a number about a GPU typed by hand",
        "terms/a.yaml:14:16: body: '32 threads' is a number about a GPU typed by hand",
        "terms/a.yaml:24:11: where_you_meet_this[0].note: '80 GB' is a number about a GPU typed by hand",
    ]
    hints = [d.hint for d in found]
    assert hints[0] == hints[1] == hints[2] == hints[3] == hints[4] == hints[5] == hints[7] == FALLBACK
    assert hints[6] == 'write {{ measured("warp-size", "warp_size") }} (32 threads on fixture-a) instead'


def measured_as(root: Path, *results: tuple[str, float, str]) -> MeasurementSet:
    """The fixture's warp-size experiment, measured on fixture-a only, holding just these
    (name, value, unit) results."""
    data = json.loads((FIXTURES / "good-measurements" / "warp-size" / "fixture-a.json").read_text(encoding="utf-8"))
    data["results"] = [{"name": n, "value": v, "unit": u, "description": n, "samples": []} for n, v, u in results]
    folder = root / "measurements" / "warp-size"
    folder.mkdir(parents=True)
    (folder / "fixture-a.json").write_text(json.dumps(data), encoding="utf-8")
    return load_measurements(root / "measurements")[0]


WARP_SIZE = ("warp_size", 32, "threads/warp")
WARPS_PER_SM = ("max_warps_per_sm", 64, "warps/SM")
HINTS = [
    # (prose, the cited results, the result the hint offers or None for the facts file's hint)
    ("Each SM has 4 warp schedulers.", [WARP_SIZE, WARPS_PER_SM], None),  # was offered warp_size
    ("Each SM has 64 warp schedulers.", [WARPS_PER_SM], None),  # equal, but it counts schedulers
    ("A block of 32 threads.", [WARP_SIZE], None),  # equal, but no warp in the sentence
    ("A block of 32 threads.", [("warp_size", 32, "threads")], None),  # equal, same unit, unrelated name
    ("The SM ran 3 warps.", [WARPS_PER_SM], None),  # related, but not the number typed
    ("A kernel of 64 warps.", [WARPS_PER_SM], None),  # equal warps, but per SM, and no SM in the sentence
    ("A warp is 32 threads.", [WARPS_PER_SM, WARP_SIZE], "warp_size"),
    ("A 32-thread warp.", [WARP_SIZE], "warp_size"),
    ("Each SM holds 64 warps.", [WARP_SIZE, WARPS_PER_SM], "max_warps_per_sm"),
]


@pytest.mark.parametrize(("prose", "results", "offered"), HINTS, ids=[f"{p} {o}" for p, _, o in HINTS])
def test_the_hint_offers_only_a_cited_value_that_is_the_number_and_about_the_same_thing(
    tmp_path: Path, prose: str, results: list[tuple[str, float, str]], offered: str | None
) -> None:
    found = check(tmp_path, {"a.yaml": term(prose, CITES)}, measurements=measured_as(tmp_path, *results))
    assert len(found) == 1, shown(found)
    if offered is None:
        assert found[0].hint == FALLBACK
        assert "terms/_facts.yml" in FALLBACK and "verifier/experiments/" in FALLBACK
    else:
        value = {n: (v, u) for n, v, u in results}[offered]
        assert found[0].hint.startswith(f'write {{{{ measured("warp-size", "{offered}") }}}} ({value[0]} ')
        assert found[0].hint.endswith(" on fixture-a) instead")


def test_a_target_name_that_says_what_the_gpu_is_is_reported(tmp_path: Path) -> None:
    found = check(tmp_path, {"a.yaml": term("Compile for sm_90; it ran on an sm_90 GPU.")})
    assert shown(found) == ["terms/a.yaml:7:35: body: 'sm_90' says what a GPU is, typed by hand"]
    assert found[0].hint == (
        "cite a measurement or add it to terms/_facts.yml with a reason; "
        "a target name that is only a name is written as code (`sm_90`)"
    )


# --- the facts file ---------------------------------------------------------------------


def test_a_listed_fact_is_allowed_in_the_terms_it_names(tmp_path: Path) -> None:
    facts = (
        "facts:\n  - text: 32 Threads\n    reason: The programming model defines a warp as 32 threads.\n"
        "    terms: [a]\n"
    )
    body = "A warp is 32 threads."
    found = check(tmp_path, {"a.yaml": term(body), "b.yaml": term(body).replace("Typed", "Other"), FACTS_FILE: facts})
    assert shown(found) == ["terms/b.yaml:7:13: body: '32 threads' is a number about a GPU typed by hand"]


def test_mistakes_in_the_facts_file_are_reported_at_their_lines(tmp_path: Path) -> None:
    facts = (
        "facts:\n"
        "  - text: '32'\n"  # 2: not a number about a GPU
        "    reason: A lane count.\n"
        "  - text: 32 threads\n"  # 4
        "    reason: ''\n"  # 5: empty reason
        "    terms: [a, wrap]\n"  # 6: unknown term
        "  - text: 32  threads\n"  # 7: listed twice
        "    reason: Again.\n"
        "  - text: 48 KB\n"  # 9: typed by no term
        "    reason: Shared memory per block without opting in.\n"
    )
    other = term("No number.").replace("Typed", "Warp")
    found = check(tmp_path, {"a.yaml": term("A warp is 32 threads."), "warp.yaml": other, FACTS_FILE: facts})
    assert [s for s in shown(found) if "_facts" in s] == [
        "terms/_facts.yml:2:11: facts[0].text: '32' is not a number about a GPU",
        "terms/_facts.yml:5:13: facts[1].reason: is empty",
        "terms/_facts.yml:6:16: facts[1].terms[1]: no term 'wrap' (did you mean 'warp'?)",
        "terms/_facts.yml:7:11: facts[2].text: '32  threads' is listed twice (also facts[1])",
        "terms/_facts.yml:9:11: facts[3].text: '48 KB' is typed by no term it names",
    ]


def test_a_facts_file_that_is_not_a_list_of_facts_is_reported_at_its_line(tmp_path: Path) -> None:
    facts = "facts:\n  - text: 32 threads\n    reasons: misspelt\n"
    found = check(tmp_path, {"a.yaml": term("A warp is 32 threads."), FACTS_FILE: facts})
    assert shown(found)[:2] == [
        "terms/_facts.yml:2:5: missing required field 'facts[0].reason'",
        "terms/_facts.yml:3:5: unknown field 'facts[0].reasons' (did you mean 'reason'?)",
    ]


def test_the_repository_types_no_number_about_a_gpu() -> None:
    """Every typed number in terms/ is a cited measurement or a reviewed fact."""
    folder = ROOT / "terms"
    terms = [t for p in term_files(folder) if (t := load_term(p, ROOT)[0]) is not None]
    facts, found = load_facts(folder / FACTS_FILE, "terms/_facts.yml", lambda p, s: (p.read_text(encoding="utf-8"), []))
    used: set[int] = set()
    found += [d for t in terms for d in typed_numbers(t, None, facts, used)]
    assert found + list(fact_mistakes(facts, used, [t.slug for t in terms])) == []
    assert facts.entries


# --- disguises: the check reads what the reader reads (issue 27, class 5) -------------------

DISGUISED = [
    ("The H200 has &#49;&#51;&#50; SMs.", "132 SMs"),
    ("The H200 has 132 &#83;Ms.", "132 SMs"),
    ("The GPU has １３２ ＳＭｓ.", "１３２ ＳＭｓ"),
    ("The GPU has 132 S\u00adMs.", "132 S\u00adMs"),
    ("The kernel read 4,8 TB/s.", "4,8 TB/s"),
    ("The GPU has 1.32e2 SMs.", "1.32e2 SMs"),
    ("The kernel loaded in 12 msec.", "12 msec"),
    ("The GPU has 132 [SMs](https://example.com/sm).", "132 [SMs"),
]


@pytest.mark.parametrize(("text", "quoted"), DISGUISED, ids=[q for _, q in DISGUISED])
def test_a_disguised_number_is_found_as_the_reader_reads_it(text: str, quoted: str) -> None:
    from cudagloss.check.typed_numbers import find

    assert [f.text for f in find(text)] == [quoted]


def test_titles_aliases_and_labels_are_read_too(tmp_path: Path) -> None:
    extra = "aliases:\n  - the 132 SMs\nwhere_you_meet_this:\n  - label: 80 GB of HBM\n"
    text = term("Plain prose.", extra).replace("title: What is it?", "title: Why does the H200 have 132 SMs?")
    found = shown(check(tmp_path, {"typed.yaml": text}))
    assert [f.split(": ", 2)[1] for f in found] == ["title", "aliases[0]", "where_you_meet_this[0].label"], found
