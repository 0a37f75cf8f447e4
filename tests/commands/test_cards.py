"""`cudagloss cards` (issue 38, part 2): measurements/README.md says what is there (cards, runs,
days) from the files, never typed; --write replaces only its generated block, atomically, and
never through a link."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, cudagloss
from cudagloss.load.catalog import load_catalog
from cudagloss.load.measurements import load_measurements
from cudagloss.site.cards_table import BEGIN, END, card_rows, cards_markdown, with_summary


def test_the_committed_readme_says_what_the_files_hold() -> None:
    measurements, problems = load_measurements(ROOT / "measurements", ROOT, load_catalog(ROOT))
    assert [d for d in problems if not d.warning] == []
    readme = (ROOT / "measurements" / "README.md").read_text(encoding="utf-8")
    summary = cards_markdown(measurements)
    assert f"{BEGIN}\n{summary}{END}" in readme, "run `.venv/bin/cudagloss cards --write` and commit the README"
    files = list((ROOT / "measurements").glob("*/*.json"))
    rows = card_rows(measurements)
    assert sum(r.runs for r in rows) == len(files)  # every file is one run, counted once
    uuids = {json.loads(p.read_text(encoding="utf-8"))["provenance"]["gpu_uuid"] for p in files}
    assert {r.card for r in rows} == uuids  # one row per card, every card a row


def test_a_card_run_twice_is_one_card_with_two_runs(tmp_path: Path) -> None:
    from fleets import FLEETS, fleet_files

    folder = tmp_path / "m" / "copy-bench"
    folder.mkdir(parents=True)
    for name, record in fleet_files(FLEETS["one-card-twice"]):
        (folder / name).write_text(json.dumps(record), encoding="utf-8")
    measurements, problems = load_measurements(tmp_path / "m", tmp_path)
    assert problems == []
    (row,) = card_rows(measurements)
    assert (row.node, row.runs, sorted(row.days)) == ("h200-a", 2, ["2026-11-20", "2026-11-21"])
    assert cards_markdown(measurements).startswith("1 card of 1 GPU model (1 H200 card) ran 1 experiment in 2 runs")


def test_write_replaces_only_the_generated_block() -> None:
    readme = f"# Measurements\n\nWords kept.\n\n{BEGIN}\nold\n{END}\n\nMore words kept.\n"
    assert (
        with_summary(readme, "new\n") == f"# Measurements\n\nWords kept.\n\n{BEGIN}\nnew\n{END}\n\nMore words kept.\n"
    )
    assert with_summary("# M\n", "new\n") == f"# M\n\n{BEGIN}\nnew\n{END}\n"


@pytest.mark.processes
def test_the_command_writes_the_readme_and_refuses_a_link(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for name in ("terms", "templates", "verifier", "measurements"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    readme = root / "measurements" / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("| `h200-", "| `stale-"), encoding="utf-8")
    done = cudagloss(root, "cards", "--write")
    assert done.returncode == 0, done.stderr
    assert readme.read_text(encoding="utf-8") == (ROOT / "measurements" / "README.md").read_text(encoding="utf-8")
    assert "already up to date" in cudagloss(root, "cards", "--write").stdout
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("not ours\n", encoding="utf-8")
    readme.unlink()
    os.symlink(elsewhere, readme)
    refused = cudagloss(root, "cards", "--write")
    assert refused.returncode != 0 and "symbolic link" in refused.stderr and "Traceback" not in refused.stderr
    assert elsewhere.read_text(encoding="utf-8") == "not ours\n"


def test_every_string_from_json_in_the_table_is_escaped(tmp_path: Path) -> None:
    """The README is Markdown rendered on GitHub: a GPU name, UUID or host id from a pull
    request's JSON can neither add a column ('|'), end a code span ('`') nor be HTML."""
    from fleets import FLEETS, fleet_files

    folder = tmp_path / "m" / "copy-bench"
    folder.mkdir(parents=True)
    for name, record in fleet_files(FLEETS["one-card-twice"]):
        record = json.loads(json.dumps(record))
        record["provenance"] |= {
            "gpu_uuid": "GPU-a`|<b>x</b>-zz",
            "gpu_name": "NVIDIA H200 | <i>pwn</i> `x`",
            "host_id": "|<b>|</b>|xx",
        }
        (folder / name).write_text(json.dumps(record), encoding="utf-8")
    measurements, problems = load_measurements(tmp_path / "m", tmp_path)
    assert problems == []
    summary = cards_markdown(measurements)
    assert "<" not in summary.replace("`<node>~<stamp>.json`", "")
    row = summary.splitlines()[-1]
    assert row.replace("\\|", "").count("|") == 8  # seven cells, no more
    assert row.count("`") - row.count("\\`") == 2  # only the node's own code span
