"""A card's earlier runs: a re-run keeps the run it replaces, so that pages can pool them.

When a good run replaces the node's good `<node>.json` and the run it replaces was made by the
same recipe (the same code_hash) on the same card, that run is kept beside it as
`<node>~<stamp>.json` (the stamp its recorded_at, cards.run_stamp), byte for byte. A card keeps
at most MAX_RUNS runs of an experiment, its latest included: the oldest earlier runs go first.
Earlier runs of another recipe than the new run are removed (stale; git keeps them). A failed
run, and a run written beside the committed file for review, keep and remove nothing.

`make verify` and `cudagloss collect` both write through merge.rerun.write, which calls this.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

from cudagloss.files.atomic import write_text_atomic
from cudagloss.files.inside import refuse_links
from cudagloss.model.cards import card_of, run_stamp
from cudagloss.model.keys import made_the_same_way
from cudagloss.model.measurement import Measurement, MeasurementError, parse_measurement, read_measurement_text
from cudagloss.model.urls import FAILED_SUFFIX, RUN_MARK, RUN_STAMP, measurement_path

MAX_RUNS = 8
"""Runs of one card kept per experiment: the latest (<node>.json) and up to 7 earlier ones."""


def file_node(name: str) -> tuple[str, str] | None:
    """(node, stamp) of a measurement file name: <node>.json and <node>.failed.json have stamp
    '', an earlier run <node>~<stamp>.json its stamp; None for any other name."""
    if not name.endswith(".json"):
        return None
    stem = name.removesuffix(FAILED_SUFFIX) if name.endswith(FAILED_SUFFIX) else name.removesuffix(".json")
    node, mark, stamp = stem.partition(RUN_MARK)
    if mark and not RUN_STAMP.fullmatch(stamp):
        return None
    if mark and name.endswith(FAILED_SUFFIX):
        return None
    return (node, stamp) if node else None


def earlier_runs(folder: Path, experiment: str, node: str) -> dict[str, Path]:
    """The node's earlier runs in folder/<experiment>, by stamp (oldest first)."""
    found = {}
    for path in (folder / experiment).glob(glob.escape(node + RUN_MARK) + "*.json"):
        named = file_node(path.name)
        if named is not None and named[0] == node and named[1]:
            found[named[1]] = path
    return dict(sorted(found.items()))


def _read(path: Path) -> tuple[str, Measurement] | None:
    """A committed file's text and measurement; None where it cannot be read (make check says why)."""
    try:
        text = read_measurement_text(path, path.as_posix())
        return text, parse_measurement(text, path.as_posix())
    except MeasurementError:
        return None


def _same_card(a: Measurement, b: Measurement) -> bool:
    """The same card as the loader holds an earlier run to it (load.measurements): the same
    UUID, or none on either. A file from before gpu_uuid was recorded is not kept beside a run
    that names its card: make check would refuse it as another card's run."""
    return card_of(a.provenance) == card_of(b.provenance)


@dataclass(frozen=True)
class Kept:
    """The earlier run written before the new one replaced <node>.json (path None when none
    was), and the text that file had before (None: it was new)."""

    path: Path | None = None
    before: str | None = None

    def undo(self) -> None:
        """Put it back as it was: the new run was not written, so the latest is still <node>.json."""
        if self.path is None:
            return
        if self.before is None:
            self.path.unlink(missing_ok=True)
        else:
            write_text_atomic(self.path, self.before)


def keep_previous(new: Measurement, folder: Path) -> Kept:
    """Before a good run replaces <node>.json: keep the file it replaces as an earlier run when
    that is a good run of the same recipe on the same card, recorded at another time (the same
    run collected again is one run, not two)."""
    if new.status != "ok":
        return Kept()
    for path in earlier_runs(folder, new.experiment, new.node).values():  # prune() removes some: never a link
        refuse_links(path)
    current = measurement_path(folder, new.experiment, new.node)
    if current.is_symlink() or not current.is_file():
        return Kept()
    read = _read(current)
    if read is None:
        return Kept()
    text, previous = read
    stamp = run_stamp(previous.provenance.get("recorded_at"))
    if (
        previous.status != "ok"
        or not made_the_same_way(previous, new)
        or not _same_card(previous, new)
        or not stamp
        or stamp == run_stamp(new.provenance.get("recorded_at"))
    ):
        return Kept()
    target = measurement_path(folder, new.experiment, new.node, run=stamp)
    refuse_links(target)
    # What is there is put back if the write fails: read as the site reads it (bounded, a plain
    # UTF-8 file, never a FIFO); MeasurementError, nothing written, where it cannot be.
    before = read_measurement_text(target, target.as_posix()) if os.path.lexists(target) else None
    write_text_atomic(target, text)
    return Kept(target, before)


def prune(new: Measurement, folder: Path) -> list[Path]:
    """After a good run was written as <node>.json: remove the node's earlier runs of another
    recipe, and the oldest beyond MAX_RUNS. Returns what it removed; an earlier run that cannot
    be read is left for make check to name."""
    if new.status != "ok":
        return []
    same_recipe: list[Path] = []
    removed: list[Path] = []
    for path in earlier_runs(folder, new.experiment, new.node).values():
        refuse_links(path)
        read = _read(path)
        if read is None:
            continue
        if made_the_same_way(read[1], new):
            same_recipe.append(path)
        else:
            removed.append(path)
    removed += same_recipe[: max(0, len(same_recipe) - (MAX_RUNS - 1))]  # oldest first
    for path in removed:
        path.unlink(missing_ok=True)
    return removed
