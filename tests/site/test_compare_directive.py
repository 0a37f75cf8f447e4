"""`{{ compare("e.a", "e.b") }}`: two timings judged by the stated rule on their raw samples, per
node, through the real check and the real `mkdocs build --strict`."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, cudagloss
from cudagloss.model.measurement import Gate, Measurement, Result, record
from cudagloss.model.measurements import NodeValues
from cudagloss.site.directives import relation, relation_over
from sitebuild import build, fixture_config

FAST = [1.0, 1.1, 1.2, 1.05, 1.15]
SLOW = [10.0, 11.0, 12.0, 10.5, 11.5]
NOISY = [1.02, 1.12, 1.18, 1.07, 1.13]


def timing(name: str, samples: list[float], unit: str = "ms") -> Result:
    return Result(name, sorted(samples)[len(samples) // 2], unit, name, samples)


def measure(folder: Path, node: str, gpu: str) -> None:
    results = [
        Result("warp_size", 32, "threads", "threads per warp"),
        timing("query_median", FAST),
        timing("launch_median", SLOW),
        timing("again_median", NOISY),
        timing("rate_median", FAST, "GB/s"),
    ]
    provenance = {"node": node, "gpu_name": gpu, "recorded_at": "2026-12-01T10:00:00+00:00"}
    record(
        Measurement("warp-size", "Read the warp size", "sha256:now", "ok", provenance, [Gate("ok", True)], results),
        folder,
    )


@pytest.fixture
def glossary(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    for node, gpu in (("node-a", "Example GPU A"), ("node-b", "Example GPU B")):
        measure(tmp_path / "measurements", node, gpu)
    return tmp_path


def with_body(root: Path, sentence: str) -> Path:
    warp = root / "terms" / "warp.yaml"
    text = warp.read_text(encoding="utf-8")
    warp.write_text(text.replace("  A warp holds {{", f"  {sentence}\n\n  A warp holds {{{{"), encoding="utf-8")
    return warp


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return cudagloss(root, "check", "terms")


@pytest.mark.parametrize(
    ("first", "second", "unit", "said"),
    [
        (FAST, SLOW, "ms", "about 10× faster than"),
        (SLOW, FAST, "ms", "about 10× slower than"),
        (FAST, NOISY, "ms", "not shown to differ (5 samples each) from"),
        (FAST, [x * 1.5 for x in FAST], "µs", "about 1.5× faster than"),
        (FAST, [x * 480 for x in FAST], "ns", "about 480× faster than"),
        (FAST, SLOW, "GB/s", "about 10× lower than"),
        (SLOW, FAST, "GB/s", "about 10× higher than"),
        (
            [1.0, 1.01, 1.02, 1.03, 1.04],
            [1.06, 1.07, 1.08, 1.09, 1.1],
            "ms",
            "not shown to differ (5 samples each) from",
        ),
    ],
)
def test_the_rule_decides_the_words(first: list[float], second: list[float], unit: str, said: str) -> None:
    # the last pair never overlaps (p = 0.008) but its medians are 6% apart, under the 10% the rule asks
    assert relation(timing("a", first, unit), timing("b", second, unit)) == said


def _nodes(*pairs: tuple[list[float], list[float]]) -> list[NodeValues]:
    a, b = ("e", "a"), ("e", "b")
    return [NodeValues(f"node-{i}", "GPU", {a: timing("a", x), b: timing("b", y)}) for i, (x, y) in enumerate(pairs)]


@pytest.mark.parametrize(
    ("pairs", "said"),
    [
        (((FAST, SLOW), (FAST, [x * 20 for x in FAST])), "about 10–20× faster than"),
        (((FAST, SLOW), (FAST, SLOW)), "about 10× faster than"),
        (((FAST, NOISY), (FAST, NOISY[:4])), "not shown to differ (4 to 5 samples each) from"),
        (((FAST, SLOW), (FAST, NOISY)), "faster on 1, not shown to differ on 1 of 2 cards than"),
        (((FAST, SLOW), (SLOW, FAST), (FAST, SLOW)), "faster on 2, slower on 1 of 3 cards than"),
    ],
)
def test_every_node_reads_as_one_phrase_as_strong_as_the_test_allows(
    pairs: tuple[tuple[list[float], list[float]], ...], said: str
) -> None:
    assert relation_over(_nodes(*pairs), ("e", "a"), ("e", "b")) == said


@pytest.mark.builders
def test_a_comparison_is_rendered_per_node_with_its_medians_and_test(glossary: Path, tmp_path: Path) -> None:
    with_body(
        glossary,
        'A query is {{ compare("warp-size.query_median", "warp-size.launch_median") }} a launch, '
        "and {{ compare('warp-size.query_median', 'warp-size.again_median') }} another query.",
    )
    assert check(glossary).returncode == 0
    done = build(fixture_config(tmp_path, glossary / "terms", glossary / "measurements"), tmp_path / "site")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "site" / "terms" / "warp" / "index.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert (
        "A query is about 10× faster than a launch, and not shown to differ (5 samples each) from another query."
        in text
    )
    found = re.search(r'title="(Example GPU A \(card node-a\): medians 1.1 ms and 11 ms[^"]*)"', page)
    assert found is not None, page
    title = html.unescape(found[1])
    assert "Example GPU B (card node-b): medians 1.1 ms and 11 ms" in title
    assert "Mann-Whitney p = 0.0079 over 5 and 5 samples" in title and "p < 0.05" in title


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            '{{ compare("warp-size.warp_size", "warp-size.query_median") }}',
            "compare('warp-size.warp_size', 'warp-size.query_median'): 'warp-size.warp_size' on node 'node-a' "
            "is not a timing with raw samples",
        ),
        (
            '{{ compare("warp-size.rate_median", "warp-size.query_median") }}',
            "compare('warp-size.rate_median', 'warp-size.query_median'): the values are in different units "
            "on node 'node-a' (GB/s, ms)",
        ),
        (
            '{{ compare("warp-size.query_median", "warp-size.query_median") }}',
            "compare('warp-size.query_median', 'warp-size.query_median'): compares a value with itself",
        ),
        (
            '{{ compare("warp-size.query_mediam", "warp-size.launch_median") }}',
            "compare('warp-size.query_mediam', 'warp-size.launch_median'): experiment 'warp-size' has no result "
            "'query_mediam' (did you mean 'query_median'?)",
        ),
        ('{{ compare("warp-size", "warp-size.launch_median") }}', "compare(...): 'warp-size' does not name a value"),
        ('{{ compare("warp-size.query_median") }}', "not a directive: "),
    ],
)
def test_a_comparison_that_cannot_be_judged_is_an_author_error(glossary: Path, call: str, message: str) -> None:
    warp = with_body(glossary, f"A query is {call} a launch.")
    run = check(glossary)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    line = next(i for i, x in enumerate(warp.read_text(encoding="utf-8").splitlines(), 1) if "A query is" in x)
    assert f"terms/warp.yaml:{line}:14: body: {message}" in run.stderr, run.stderr


def test_a_comparison_is_allowed_only_in_the_body(glossary: Path) -> None:
    warp = glossary / "terms" / "warp.yaml"
    text = warp.read_text(encoding="utf-8")
    call = '{{ compare("warp-size.query_median", "warp-size.launch_median") }}'
    warp.write_text(text.replace("    note: The warp size of the GPU.", f"    note: It is {call}."), encoding="utf-8")
    run = check(glossary)
    assert run.returncode == 1
    assert "measurements[0].note: compare(...) is allowed only in the body" in run.stderr
