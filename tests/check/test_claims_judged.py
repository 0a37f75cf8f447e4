"""Claims are judged per node against real measurement files, through the real `cudagloss check`
and the real `mkdocs build --strict`: a claim that holds on one node and fails on another is an
error naming the node and its values; one over values nobody measured is never passed."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, cudagloss
from cudagloss.model.measurement import Gate, Measurement, Result, record
from sitebuild import build, fixture_config

FAST = [1.0, 1.1, 1.2, 1.05, 1.15]
SLOW = [10.0, 11.0, 12.0, 10.5, 11.5]


def measure(folder: Path, node: str, gpu: str, warp: int, query: list[float], launch: list[float]) -> None:
    """One node's warp-size file, written by the real format code."""
    results = [
        Result("warp_size", warp, "threads", "threads per warp"),
        Result("query_median", sorted(query)[2], "ms", "time to read the attribute", query),
        Result("launch_median", sorted(launch)[2], "ms", "time to launch", launch),
    ]
    provenance = {"node": node, "gpu_name": gpu, "recorded_at": "2026-12-01T10:00:00+00:00"}
    record(
        Measurement("warp-size", "Read the warp size", "sha256:now", "ok", provenance, [Gate("ok", True)], results),
        folder,
    )


def claims(*pairs: tuple[str, str]) -> str:
    return "claims:\n" + "".join(f"  - says: {says}\n    holds: '{holds}'\n" for says, holds in pairs)


@pytest.fixture
def glossary(tmp_path: Path) -> Path:
    """The good fixture corpus, with two nodes that measured warp-size: node-a (32-thread
    warps) and node-b (64-thread warps); on both the query is faster than the launch."""
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    measurements = tmp_path / "measurements"
    measure(measurements, "node-a", "Example GPU A", 32, FAST, SLOW)
    measure(measurements, "node-b", "Example GPU B", 64, FAST, SLOW)
    return tmp_path


def add_claims(root: Path, text: str) -> Path:
    warp = root / "terms" / "warp.yaml"
    source = warp.read_text(encoding="utf-8")
    source = source.replace(
        "    results: [warp_size, query_median]\n", "    results: [warp_size, query_median]\n" + text
    )
    warp.write_text(source, encoding="utf-8")
    return warp


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return cudagloss(root, "check", "terms")


def test_a_claim_that_fails_on_one_node_is_an_error_naming_that_node_and_its_values(glossary: Path) -> None:
    warp = add_claims(glossary, claims(("A warp is the same size on every GPU measured", "warp-size.warp_size == 32")))
    run = check(glossary)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    line = line_of(warp, "- says: A warp is the same size")
    errors = [x for x in run.stderr.splitlines() if ": claims[0]" in x]
    assert len(errors) == 1, run.stderr
    assert errors[0].startswith(
        f"terms/warp.yaml:{line}:5: claims[0]: 'A warp is the same size on every GPU measured' "
        "does not hold on node 'node-b' (Example GPU B): "
    )
    assert "64" in errors[0] and "node-a" not in errors[0]


@pytest.mark.builders
def test_the_site_build_refuses_a_claim_that_fails_on_one_node(glossary: Path, tmp_path: Path) -> None:
    add_claims(glossary, claims(("A warp is the same size on every GPU measured", "warp-size.warp_size == 32")))
    done = build(fixture_config(tmp_path, glossary / "terms", glossary / "measurements"), tmp_path / "site")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "does not hold on node 'node-b' (Example GPU B): warp-size.warp_size = 64 threads == 32" in done.stderr
    assert not (tmp_path / "site" / "terms" / "warp" / "index.html").exists()


def test_the_exported_glossary_lists_each_claim_with_its_nodes(glossary: Path, tmp_path: Path) -> None:
    add_claims(
        glossary, claims(("No GPU measured has smaller warps than the programming model", "warp-size.warp_size >= 32"))
    )
    missing = cudagloss(glossary, "export", "--out", str(tmp_path / "export"), "terms")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "no templates folder beside terms (looked for templates)" in missing.stderr
    shutil.copytree(ROOT / "templates", glossary / "templates")
    done = cudagloss(glossary, "export", "--out", str(tmp_path / "export"), "terms")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "export" / "llms-full.txt").read_text(encoding="utf-8")
    assert (
        "- Claim: No GPU measured has smaller warps than the programming model. "
        "\u2713 Holds on every card that measured it: 2 cards. "
        "Condition: `warp-size.warp_size >= 32`."
    ) in text


@pytest.mark.builders
def test_a_claim_that_holds_on_every_node_is_shown_with_each_node_and_its_values(
    glossary: Path, tmp_path: Path
) -> None:
    add_claims(
        glossary,
        claims(
            (
                "Reading the attribute is faster than a launch",
                "warp-size.query_median < warp-size.launch_median"
                " and differ(warp-size.query_median, warp-size.launch_median)",
            ),
            ("No GPU measured has smaller warps than the programming model", "warp-size.warp_size >= 32"),
        ),
    )
    assert check(glossary).returncode == 0
    done = build(fixture_config(tmp_path, glossary / "terms", glossary / "measurements"), tmp_path / "site")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "site" / "terms" / "warp" / "index.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "Claims checked against these numbers" in text
    assert "Reading the attribute is faster than a launch." in text
    assert text.count("Holds on Example GPU A (node-a)") == 2
    assert text.count("Holds on Example GPU B (node-b)") == 2
    assert "Does not hold" not in text and "Not verified" not in text


@pytest.mark.builders
def test_a_claim_over_values_nobody_measured_is_unverified_never_passed(glossary: Path, tmp_path: Path) -> None:
    for node in ("node-a", "node-b"):  # each node's last run failed: the experiment exists, unmeasured
        path = glossary / "measurements" / "warp-size" / f"{node}.json"
        path.rename(path.with_name(f"{node}.failed.json"))
        failed = path.with_name(f"{node}.failed.json")
        failed.write_text(failed.read_text(encoding="utf-8").replace('"status": "ok"', '"status": "failed"'))
    warp = glossary / "terms" / "warp.yaml"
    warp.write_text(warp.read_text(encoding="utf-8").replace(' {{ measured("warp-size", "warp_size") }}', " many"))
    add_claims(glossary, claims(("A warp is the same size everywhere", "warp-size.warp_size == 32")))
    run = cudagloss(glossary, "check", "terms", "--strict")
    assert run.returncode == 1 and "Traceback" not in run.stderr
    line = line_of(warp, "- says: A warp is the same size everywhere")
    assert (
        f"terms/warp.yaml:{line}:5: warning: claims[0]: 'A warp is the same size everywhere' is not verified: "
        "no card has measured warp-size.warp_size"
    ) in run.stderr
    assert "run `make verify EXPERIMENT=warp-size` on a GPU node" in run.stderr
    assert check(glossary).returncode == 0  # a warning: fails only strict runs and builds
    done = build(fixture_config(tmp_path, glossary / "terms", glossary / "measurements"), tmp_path / "site")
    assert done.returncode == 1 and "is not verified" in done.stderr


@pytest.mark.parametrize(
    ("holds", "message"),
    [
        (
            "warp-size.warp_siz == 32",
            "warp-size.warp_siz: experiment 'warp-size' has no result 'warp_siz' (did you mean 'warp_size'?)",
        ),
        ("ptx-jit.grid > 1", "ptx-jit.grid: the term does not cite experiment 'ptx-jit'"),
        ("warp-size.warp_size > warp-size.query_median", "threads"),
        ("warp-size.warp_size ==", "(at character"),
        ('__import__("os").system("id") == 0', "(at character"),
    ],
)
def test_a_condition_that_cannot_be_judged_is_an_error_at_its_field(glossary: Path, holds: str, message: str) -> None:
    warp = add_claims(glossary, claims(("Something", holds)))
    run = check(glossary)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    line = line_of(warp, "    holds: ")
    errors = [x for x in run.stderr.splitlines() if x.startswith(f"terms/warp.yaml:{line}:")]
    assert len(errors) == 1 and errors[0].split(": ", 1)[1].startswith("claims[0].holds: "), run.stderr
    assert message in errors[0]


def test_a_claims_words_are_checked_like_prose(glossary: Path) -> None:
    warp = add_claims(
        glossary, claims(("The GPU has 132 SMs", "warp-size.warp_size == 32 or warp-size.warp_size == 64"))
    )
    run = check(glossary)
    line = line_of(warp, "- says: The GPU has 132 SMs")
    assert run.returncode == 1
    assert f"terms/warp.yaml:{line}:" in run.stderr and "claims[0].says" in run.stderr
