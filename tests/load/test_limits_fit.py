"""Each limit sits on the field it was meant for (issue 39, class 9a): a section's reading order
may name every term the glossary may hold (TERMS_MAX), not 50; a worked step's `matches` holds
the longest experiment.result there is; past a limit is a mistake at its place. Through the real
`cudagloss check` and `cudagloss export`."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import FIXTURES, ROOT, cudagloss
from cudagloss.model.limits import EXPERIMENT_ID_MAX, ITEMS_MAX, NAME_MAX, TERMS_MAX
from cudagloss.model.measurement import Gate, Measurement, Result, record

MODELINE = "# yaml-language-server: $schema=../schema/term.schema.json\n"


def _glossary(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "good", root / "terms")
    shutil.copytree(FIXTURES / "good-measurements", root / "measurements")
    shutil.copytree(ROOT / "templates", root / "templates")
    return root


def _order(root: Path, slugs: list[str]) -> None:
    sections = root / "terms" / "_sections.yaml"
    text = sections.read_text(encoding="utf-8")
    listed = "".join(f"      - {slug}\n" for slug in slugs)
    described = "    description: Things with <b>bold</b> claims.\n"
    text = text.replace(described, f"    description: Things.\n    terms:\n{listed}")
    sections.write_text(text, encoding="utf-8")


def test_a_section_of_more_terms_than_a_terms_list_may_hold_loads_in_its_order(tmp_path: Path) -> None:
    root = _glossary(tmp_path)
    slugs = [f"term-{n:02}" for n in range(ITEMS_MAX + 10, 0, -1)]  # 60, named last to first
    for slug in slugs:
        (root / "terms" / f"{slug}.yaml").write_text(
            f"{MODELINE}name: {slug}\ntitle: What is {slug}?\ndefinition: A term.\nsection: widgets\n"
            f"body: |\n  The body of {slug}.\n",
            encoding="utf-8",
        )
    _order(root, slugs)
    check = cudagloss(root, "check", "terms")
    assert check.returncode == 0, check.stderr
    done = cudagloss(root, "export", "terms", "--out", "export")
    assert done.returncode == 0, done.stderr
    llms = (root / "export" / "llms.txt").read_text(encoding="utf-8")
    listed = [line.split("]")[0][3:] for line in llms.splitlines() if line.startswith("- [term-")]
    assert listed == slugs


def test_a_sections_file_naming_terms_max_of_the_longest_slugs_is_read(tmp_path: Path) -> None:
    """The file's byte limit follows from the same constants: every term the glossary may hold,
    each by a slug of NAME_MAX characters, fits (no such terms here: a warning each, no error)."""
    root = _glossary(tmp_path)
    slugs = [f"{n:04}-" + "s" * (NAME_MAX - 5) for n in range(TERMS_MAX)]
    _order(root, slugs)
    assert (root / "terms" / "_sections.yaml").stat().st_size > TERMS_MAX * NAME_MAX
    check = cudagloss(root, "check", "terms")
    assert check.returncode == 0 and "larger than" not in check.stderr, check.stderr[:300]
    assert f"{TERMS_MAX} warnings found" in check.stderr


def test_a_reading_order_past_terms_max_is_a_mistake_at_its_place(tmp_path: Path) -> None:
    root = _glossary(tmp_path)
    _order(root, ["warp"] * (TERMS_MAX + 1))
    check = cudagloss(root, "check", "terms")
    assert check.returncode == 1 and "Traceback" not in check.stderr
    said = f"terms/_sections.yaml:{7 + TERMS_MAX}:9: sections[0].terms: has {TERMS_MAX + 1} items; at most {TERMS_MAX}"
    assert check.stderr.startswith(said), check.stderr[:300]  # at the first item past the limit


def test_a_worked_step_matches_the_longest_result_reference_there_is(tmp_path: Path) -> None:
    root = _glossary(tmp_path)
    experiment, result = "e" * EXPERIMENT_ID_MAX, "r" * NAME_MAX
    shutil.rmtree(root / "measurements")
    for node in ("node-a", "node-b"):
        results = [
            Result("warp_size", 32, "threads/warp", "threads per warp"),
            Result("query_median", 1.1, "ms", "time to read the attribute", [1.0, 1.1, 1.2]),
            Result(result, 32, "threads/warp"),
        ]
        provenance = {"node": node, "gpu_name": "Example GPU", "recorded_at": "2026-12-01T10:00:00+00:00"}
        run = Measurement(experiment, "Read it", "sha256:now", "ok", provenance, [Gate("ok", True)], results)
        record(run, root / "measurements")
    warp = root / "terms" / "warp.yaml"
    text = warp.read_text(encoding="utf-8").replace("warp-size", experiment)
    worked = (
        "worked:\n  - id: one-warp\n    title: How wide is a warp?\n    steps:\n"
        f"      - says: A warp is this many threads\n        value: {experiment}.warp_size\n"
        f"        matches: {experiment}.{result}\n"
    )
    text = text.replace("byline:\n", worked + "byline:\n")
    text = text.replace("body: |\n", 'body: |\n  {{ worked("one-warp") }}\n\n')
    warp.write_text(text, encoding="utf-8")
    check = cudagloss(root, "check", "terms")
    assert check.returncode == 0, check.stderr
