"""Merge the measurement folders a fleet of GPU nodes wrote into the committed ones.

Each folder is what `make verify` writes on one node (<experiment>/<node>.json), arriving as
a CI artifact or copied back from a cluster: untrusted input. Every file is read by the
same rules as the site reads measurements (load.measurements), then held to what a merge
needs: a known experiment whose code is the code in this repository (no stale run), a good
run whose gates all passed, complete provenance, and one source per node (two folders may
not both speak for a node). A folder speaks for one node only (a host and its cards, `<host>`
and `<host>-gpu<N>`, as `make verify DEVICES=all` writes them), so one node's artifact cannot
carry a file that replaces another node's; and a node name that differs from another node's only
by case or `_`/`-` (`H200_Lent` beside `h200-lent`) is refused, not merged as a new node. A node
name names one card (merge.identity): a new name on a committed card (unless `--rename NEW=NAME`
says whose re-run it is), two names for one card, a committed name from another card and one
host's runs (host_id) in two folders are refused; so is an earlier run (<node>~<stamp>.json) in
a node's folder. One refused file refuses the merge: nothing is written. A symbolic link in a
node's folder or in the committed one refuses it before anything is read (merge.guard).

A merge writes what `make verify` would have written on the node itself (merge.rerun): the
report against the committed file, each value's history carried, the run it replaces kept as
an earlier run (merge.runs), and a changed discrete value beside the committed file as
<node>.json.new for review. The writes are atomic each,
and undone together if one fails, so the folder is the old one or the merged one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from cudagloss.errors import Diagnostic, GlossaryError, UsageError, display_path
from cudagloss.files.inside import first_link
from cudagloss.load.measurements import load_measurements
from cudagloss.merge.contributor import contributor, credited
from cudagloss.merge.guard import Undo, link_line, merge_links
from cudagloss.merge.identity import Arriving, card_problems, committed_cards, host_problems, measured_several
from cudagloss.merge.rerun import Rerun, against_committed, write
from cudagloss.merge.runs import earlier_runs, file_node
from cudagloss.model.keys import made_the_same_way, only_summary_moved
from cudagloss.model.measurement import ExperimentInfo, Measurement
from cudagloss.model.urls import RUN_MARK, measurement_path, review_path

REQUIRED_PROVENANCE = (
    "node",
    "gpu_name",
    "compute_capability",
    "driver_version",
    "cuda_driver_version",
    "nvrtc_version",
    "cuda_bindings_version",
    "recorded_at",
    "git_commit",
)
"""What a reviewer needs to know where and with what a run was made; a file without one is refused."""
NOT_FILE = "remove it from the repository (a run and its review copy are files) and collect again"
HINT = "run make verify on the node again with this repository's code, and collect its folder"


@dataclass
class Incoming:
    """One good run from one folder, and where it came from."""

    measurement: Measurement
    shown: str
    folder: Path


@dataclass
class Plan:
    """What a merge would do: the runs to write, with their reports, or why it is refused."""

    runs: list[tuple[Incoming, Rerun]] = field(default_factory=list)
    refused: list[Diagnostic] = field(default_factory=list)

    @property
    def nodes(self) -> list[str]:
        return sorted({incoming.measurement.node for incoming, _ in self.runs})


def _check(m: Measurement, info: ExperimentInfo | None) -> list[str]:
    """Why one good run cannot be merged (empty when it can)."""
    problems = []
    if info is None:
        problems.append(f"experiment '{m.experiment}' is not one this repository's verifier knows")
    elif not (made_the_same_way(m, info) or only_summary_moved(m, info)):
        # Only the summary older: what reached the GPU is today's recipe. Merged; with raw samples,
        # make rederive summarises it anew (check says so), without, it is kept as summarised.
        problems.append("was measured by a recipe that differs from this repository's (a stale run)")
    failed_gates = [g.name for g in m.gates if not g.passed]
    if not m.gates or failed_gates:
        problems.append(f"gates did not pass: {', '.join(failed_gates) or 'none recorded'}")
    missing = [key for key in REQUIRED_PROVENANCE if m.provenance.get(key) in (None, "")]
    if missing:
        problems.append(f"provenance lacks {', '.join(missing)}")
    return problems


CARD = re.compile(r"-gpu[0-9]+$")


def host(node: str) -> str:
    """The host a node name belongs to: 'a-gpu3' and 'a' are both host 'a'."""
    return CARD.sub("", node)


def folded(node: str) -> str:
    """A node name as two names that a reader would take for one compare: case and '_'/'-' folded."""
    return node.casefold().replace("_", "-")


def committed_nodes(into: Path) -> set[str]:
    """The node names of the committed measurement files (good, failed and earlier runs)."""
    return {named[0] for p in into.glob("*/*.json") if (named := file_node(p.name)) is not None}


def _identity(folder: Path, nodes: Iterable[str], shown: str) -> list[Diagnostic]:
    """A folder holding files of more than one host is refused: it would speak for another node."""
    hosts = sorted({host(n) for n in nodes})
    if len(hosts) <= 1:
        return []
    return [
        Diagnostic(
            shown,
            1,
            1,
            f"holds files of more than one node ({', '.join(hosts)}): a node's folder may speak only for "
            "that node and its cards (<node>-gpu<N>)",
            "collect each node's folder as it came from that node; never copy another node's files into it",
        )
    ]


def _lookalikes(incoming: dict[str, str], committed: Iterable[str]) -> list[Diagnostic]:
    """An incoming node (name: a file of it, as shown) whose name folds onto another node's,
    committed or incoming."""
    by_fold: dict[str, set[str]] = {}
    for name in [*committed, *incoming]:
        by_fold.setdefault(folded(name), set()).add(name)
    return [
        Diagnostic(
            incoming[name],
            1,
            1,
            f"node '{name}' differs from node '{other}' only by case or '_'/'-': one node under two names",
            "use the node's name exactly as it is committed (VERIFY_NODE), or a name that no other node folds to",
        )
        for name in sorted(set(incoming))
        for other in sorted(by_fold[folded(name)] - {name})
    ]


def _earlier_runs(folder: Path, root: Path | None) -> list[Diagnostic]:
    """Earlier runs (<node>~<stamp>.json) in an incoming folder are refused: a node's folder
    brings its latest run, and the committed folder keeps the runs it replaces itself."""
    return [
        Diagnostic(
            f"{display_path(p.parent, root)}/{p.name}",
            1,
            1,
            "is an earlier run (<node>~<stamp>.json): collect takes each node's latest run, and the "
            "committed folder keeps the runs it replaces itself",
            "collect a folder that make verify wrote afresh (an empty --out or VERIFY_OUT), or remove the "
            "earlier runs from it",
        )
        for p in sorted(folder.glob(f"*/*{RUN_MARK}*.json"))
        if (named := file_node(p.name)) is not None and named[1]
    ]


def _renamed(m: Measurement, renames: Mapping[str, str]) -> Measurement:
    """m merged as the node --rename names for it (its folder's name otherwise)."""
    target = renames.get(m.node, m.node)
    return m if target == m.node else replace(m, provenance={**m.provenance, "node": target})


def plan(
    folders: Sequence[Path],
    into: Path,
    catalog: list[ExperimentInfo],
    root: Path | None = None,
    renames: Mapping[str, str] | None = None,
) -> Plan:
    """Read and check every folder, and compare each run with the committed file in into.
    renames (collect --rename NEW=NAME): a folder's node NEW is merged as node NAME, held to
    every rule under that name."""
    renames = dict(renames or {})
    if linked := merge_links(folders, into, root):  # before any folder is listed or file read
        return Plan(refused=linked)
    known = {info.id: info for info in catalog}
    found = Plan()
    speaks_for: dict[str, Path] = {}
    incoming: list[Incoming] = []
    arriving: list[Arriving] = []
    for folder in folders:
        shown_folder = display_path(folder, root)
        if folder.is_symlink() or not folder.is_dir():
            found.refused.append(Diagnostic(shown_folder, 1, 1, "is not a folder of measurements", HINT))
            continue
        measurements, diagnostics = load_measurements(folder, root, catalog)
        by = contributor(folder, root)  # a reader's card: who added contributed/<node>/, from git
        earlier = _earlier_runs(folder, root)
        refused_earlier = {d.path for d in earlier}  # the loader may refuse their names, less clearly
        found.refused += [d for d in diagnostics if not d.warning and d.path not in refused_earlier] + earlier
        found.refused += _identity(folder, (run.node for r in measurements for run in r.runs), shown_folder)
        found.refused += [  # the site skips review copies; a merge must not drop one unseen
            Diagnostic(display_path(p, root), 1, 1, "is a review copy (<node>.json.new): review it on its node", HINT)
            for p in sorted(folder.glob("*/*.json.new"))
        ]
        for record in measurements:
            for run in record.runs:
                if run.failed is not None:
                    found.refused.append(
                        Diagnostic(
                            f"{shown_folder}/{record.id}/{run.node}.failed.json",
                            1,
                            1,
                            "is a failed run: a merge takes only runs whose gates passed",
                            HINT,
                        )
                    )
                if run.good is None:
                    continue
                found.refused += [
                    Diagnostic(run.good_path, 1, 1, problem, HINT) for problem in _check(run.good, known.get(record.id))
                ]
                good = credited(_renamed(run.good, renames), by)
                other = speaks_for.setdefault(good.node, folder)
                if other != folder:
                    found.refused.append(
                        Diagnostic(
                            run.good_path,
                            1,
                            1,
                            f"node '{good.node}' also has files in {display_path(other, root)}: "
                            "one folder per node, so that no run silently replaces another",
                            "give each node its own VERIFY_NODE name",
                        )
                    )
                incoming.append(Incoming(good, run.good_path, folder))
                several = measured_several(good)
                arriving.append(Arriving(good.node, run.node, run.good_path, shown_folder, good.provenance, several))
    unknown = sorted(set(renames) - {a.named for a in arriving})
    if unknown:
        raise UsageError(f"--rename {unknown[0]}={renames[unknown[0]]}: no folder holds node '{unknown[0]}'")
    if not incoming and not found.refused:
        found.refused.append(
            Diagnostic(", ".join(display_path(f, root) for f in folders), 1, 1, "hold no measurement files", HINT)
        )
    first_file = {i.measurement.node: i.shown for i in reversed(incoming)}
    found.refused += _lookalikes(first_file, committed_nodes(into))
    found.refused += card_problems(committed_cards(into, root), arriving)
    found.refused += host_problems(arriving)
    found.refused += _not_files(incoming, into, root)
    if not found.refused:
        found.runs = [(i, against_committed(i.measurement, into)) for i in incoming]
    return found


def _not_files(incoming: list[Incoming], into: Path, root: Path | None) -> list[Diagnostic]:
    """A committed path a merge would write or remove (the run, its failure, its review copy
    <node>.json.new) that is a folder, a FIFO or a device: a line each, before anything is written."""
    paths = {
        path
        for i in incoming
        for path in (
            measurement_path(into, i.measurement.experiment, i.measurement.node),
            measurement_path(into, i.measurement.experiment, i.measurement.node, failed=True),
            review_path(into, i.measurement.experiment, i.measurement.node),
        )
    }
    return [
        Diagnostic(display_path(p, root), 1, 1, "is not a regular file: a merge writes or removes this path", NOT_FILE)
        for p in sorted(paths)
        if p.exists() and not p.is_symlink() and not p.is_file()
    ]


def apply(found: Plan, into: Path) -> list[Path]:
    """Write every planned run (write() chooses the file or its review copy), all or none: every
    path is checked for links before anything is read, and a failed merge restores only what it
    changed, never through a link (merge.guard.Undo)."""
    paths: list[Path] = []
    for incoming, _ in found.runs:
        m = incoming.measurement
        if (shown := first_link(into / m.experiment)) is not None:  # before its folder is listed
            raise GlossaryError([link_line(shown)])
        paths += [
            measurement_path(into, m.experiment, m.node),
            measurement_path(into, m.experiment, m.node, failed=True),  # a good run clears an old failure
            review_path(into, m.experiment, m.node),
            *earlier_runs(into, m.experiment, m.node).values(),  # a re-run keeps one and drops others
        ]
    if linked := sorted({shown for path in paths if (shown := first_link(path)) is not None}):
        raise GlossaryError([link_line(shown) for shown in linked])
    undo = Undo()
    for path in paths:
        undo.remember(path)
    written: list[Path] = []
    try:
        for incoming, rerun in found.runs:
            written.append(write(incoming.measurement, into, rerun))
    except BaseException:
        for incoming, _ in found.runs:  # an earlier run kept by this merge was not there before
            m = incoming.measurement
            for path in earlier_runs(into, m.experiment, m.node).values():
                undo.created(path)
        undo.restore()
        raise
    return written
