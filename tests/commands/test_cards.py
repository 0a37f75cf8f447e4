"""`cudagloss cards` (issue 38, part 2): measurements/README.md says what is there (cards, runs,
days) from the files, never typed; --write replaces only its generated block, atomically, and
never through a link."""

from __future__ import annotations

import copy
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


@pytest.mark.parametrize(
    ("readme", "where", "message"),
    [
        (f"# M\n{END}\nkept\n{BEGIN}\nold\n", "README.md:2:1", "END marker comes before BEGIN"),
        (f"# M\n{BEGIN}\na\n{END}\n{BEGIN}\nb\n{END}\n", "README.md:5:1", "BEGIN marker is here again"),
        (f"# M\n{BEGIN}\nold\n", "README.md:2:1", "BEGIN marker without its END"),
        (f"# M\n\n{END}\n", "README.md:3:1", "END marker without its BEGIN"),
    ],
)
def test_write_refuses_markers_that_bound_no_one_block(readme: str, where: str, message: str) -> None:
    """END before BEGIN used to add a second block on every run; text between misplaced
    markers would be lost: such a README is refused where its markers are, never rewritten."""
    from cudagloss.errors import GlossaryError

    with pytest.raises(GlossaryError) as caught:
        with_summary(readme, "new\n")
    assert where in str(caught.value) and message in str(caught.value)


def test_the_readme_is_read_with_a_bound_and_never_waited_on(tmp_path: Path) -> None:
    from cudagloss.commands.cards import MAX_README_BYTES, read_readme
    from cudagloss.errors import GlossaryError

    assert read_readme(tmp_path / "none.md", "none.md") is None
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# M\nok \xff\n")
    with pytest.raises(GlossaryError, match=r"bad.md:2:4: is not UTF-8: byte 0xFF"):
        read_readme(bad, "bad.md")
    big = tmp_path / "big.md"
    big.write_bytes(b"a" * (MAX_README_BYTES + 1))
    with pytest.raises(GlossaryError, match="larger than"):
        read_readme(big, "big.md")
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    with pytest.raises(GlossaryError, match="not a regular file"):
        read_readme(fifo, "fifo.md")


@pytest.mark.processes
def test_a_readme_not_utf8_is_a_diagnostic_not_a_traceback(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for name in ("terms", "templates", "verifier", "measurements"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    readme = root / "measurements" / "README.md"
    readme.write_bytes(b"# M\n\xfe\n")
    refused = cudagloss(root, "cards", "--write")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "measurements/README.md:2:1: is not UTF-8" in refused.stderr
    assert readme.read_bytes() == b"# M\n\xfe\n"


def test_two_cards_whose_first_groups_agree_are_shown_apart(tmp_path: Path) -> None:
    """The table shows the start of each UUID; two cards that share a first group would read
    as one card: each is shown with as many groups as tell it apart."""
    from cudagloss.model.cards import short_cards
    from fleets import FLEETS, fleet_files

    folder = tmp_path / "m" / "copy-bench"
    folder.mkdir(parents=True)
    for (name, record), tail in zip(fleet_files(FLEETS["two-nodes-alike"]), ("aaaa-1", "bbbb-1"), strict=True):
        record["provenance"]["gpu_uuid"] = f"GPU-3f1ceb1e-{tail}"
        (folder / name).write_text(json.dumps(record), encoding="utf-8")
    measurements, problems = load_measurements(tmp_path / "m", tmp_path)
    assert problems == []
    summary = cards_markdown(measurements)
    assert "| GPU-3f1ceb1e-aaaa |" in summary and "| GPU-3f1ceb1e-bbbb |" in summary
    many = [f"GPU-3f1ceb1e-{'-'.join(['a'] * 40)}-{i}" for i in range(3000)]
    shown = short_cards(many)
    assert len({shown[u] for u in many}) == len(many)  # apart, and in linear time (a hostile fleet)
    assert short_cards(["GPU-3f1ceb1e-aaaa-1", "GPU-00000000-aaaa-1"])["GPU-3f1ceb1e-aaaa-1"] == "GPU-3f1ceb1e"


def test_a_gpu_name_cannot_end_the_generated_block(tmp_path: Path) -> None:
    """A GPU name is JSON from a pull request: one that reads as the END marker would end the
    block early in the README, and every later --write would refuse or lose text."""
    from cudagloss.site.cards_table import marker_problems
    from fleets import FLEETS, fleet_files

    folder = tmp_path / "m" / "copy-bench"
    folder.mkdir(parents=True)
    for name, shared in fleet_files(FLEETS["one-node"]):
        record = copy.deepcopy(shared)  # FLEETS is every test's: never change it in place
        record["provenance"]["gpu_name"] = f"NVIDIA {END} H200"
        (folder / name).write_text(json.dumps(record), encoding="utf-8")
    measurements, problems = load_measurements(tmp_path / "m", tmp_path)
    assert problems == []
    readme = with_summary("# M\n", cards_markdown(measurements))
    assert readme.count(END) == 1 and marker_problems(readme, "README.md") == []


@pytest.mark.processes
def test_a_measurements_folder_that_is_not_there_is_a_usage_error(tmp_path: Path) -> None:
    """A mistyped --measurements read as 'No card has measured anything yet.' (exit 0)."""
    root = tmp_path / "repo"
    for name in ("terms", "templates", "verifier"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    run = cudagloss(root, "cards", "--measurements", "mesurements")
    assert run.returncode == 2 and run.stderr == "cudagloss cards: mesurements is not a folder of measurements\n"
