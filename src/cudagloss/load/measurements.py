"""Read a glossary's measurement folder: measurements/<experiment>/<node>.json (the last
good run on that node's card), <node>~<stamp>.json (an earlier good run of the same card, by
the same code) and <node>.failed.json (a later run that failed, kept beside it).

Names on disk are untrusted like the files' contents: only folders named by an experiment
id and files named as make verify writes them are read; links, other files and other names
are diagnostics, shown escaped. A node name names one card (cudagloss.model.cards): a name
whose files carry two cards, or a card under two names, is a diagnostic too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from cudagloss.errors import Diagnostic, GlossaryError, UsageError, display_path
from cudagloss.files.inside import first_link
from cudagloss.model.cards import Seen, card_of, conflicts, run_stamp
from cudagloss.model.keys import made_the_same_way, only_summary_moved
from cudagloss.model.measurement import (
    HINT,
    ExperimentInfo,
    Measurement,
    MeasurementError,
    parse_measurement,
    read_measurement_text,
)
from cudagloss.model.measurement_rules import is_experiment_id, is_node_name
from cudagloss.model.measurements import ExperimentRecord, MeasurementSet, NodeRun
from cudagloss.model.project import Project
from cudagloss.model.urls import FAILED_SUFFIX, RUN_MARK, RUN_STAMP, measurement_file_name

MAX_REPORTED = 50
"""Files refused by name per experiment folder that are each named; the rest are counted."""
MAX_EARLIER = 64
"""Earlier runs read per node and experiment (make verify keeps 8); more is not a run's history."""


def _read(path: Path, shown: str, diagnostics: list[Diagnostic]) -> Measurement | None:
    try:
        return parse_measurement(read_measurement_text(path, shown), shown)
    except MeasurementError as exc:
        diagnostics += exc.diagnostics
    return None


def _refuse(diagnostics: list[Diagnostic], shown: str, message: str, hint: str = HINT) -> None:
    diagnostics.append(Diagnostic(shown, 1, 1, message, hint))


def _shown_name(folder: str, name: str) -> str:
    """A file name from disk as a diagnostic shows it: escaped unless plain printable ASCII."""
    return f"{folder}/{name if name.isascii() and name.isprintable() else ascii(name)[1:-1]}"


Files = dict[str, dict[str, Path]]
"""node -> {'good' | 'failed' | <stamp>: path}."""


def _node_files(sub: Path, shown: str, diagnostics: list[Diagnostic]) -> Files:
    """The files named <node>.json, <node>.failed.json or <node>~<stamp>.json, by node; every
    other .json name is refused (it is not something make verify writes)."""
    nodes: Files = {}
    folded: dict[str, str] = {}
    refused: list[Diagnostic] = []
    for entry in sorted(sub.iterdir()):
        name = entry.name
        if not name.endswith(".json"):
            continue
        failed = name.endswith(FAILED_SUFFIX)
        node = name.removesuffix(FAILED_SUFFIX if failed else ".json")
        node, mark, stamp = node.partition(RUN_MARK)
        if not is_node_name(node) or (mark and (failed or not RUN_STAMP.fullmatch(stamp))):
            _refuse(
                refused,
                _shown_name(shown, name),
                "is not named <node>.json, <node>~<stamp>.json or <node>.failed.json with a node name like "
                "'h200-3f1ceb1e' and a stamp like '20261204T175826Z'",
                "make verify writes only those names; remove or rename this file",
            )
            continue
        key = node.lower().replace(".", "-").replace("_", "-")
        if folded.setdefault(key, node) != node:
            _refuse(
                refused,
                _shown_name(shown, name),
                f"node '{node}' cannot be told apart from node '{folded[key]}' on a page",
                "give each node a name that differs in more than case or '.', '-', '_'",
            )
            continue
        runs = nodes.setdefault(node, {})
        if mark and sum(k not in ("good", "failed") for k in runs) >= MAX_EARLIER:
            _refuse(refused, _shown_name(shown, name), f"is more than {MAX_EARLIER} earlier runs of one node")
            continue
        runs[stamp if mark else "failed" if failed else "good"] = entry
    diagnostics += refused[:MAX_REPORTED]  # a folder of a million odd names is one screen, not a million lines
    if len(refused) > MAX_REPORTED:
        more = len(refused) - MAX_REPORTED
        _refuse(diagnostics, shown, f"and {more:,} more files refused for their names or their number")
    return nodes


def _experiment_folders(folder: Path, root: Path | None, diagnostics: list[Diagnostic]) -> Iterator[Path]:
    """The experiment folders that hold .json files; a link, an unreadable folder or a name
    that is not an experiment id is refused."""
    shown_folder = display_path(folder, root)
    try:
        subs = sorted(folder.iterdir())
    except OSError as exc:
        _refuse(diagnostics, shown_folder, f"cannot read: {exc.strerror}")
        return
    for sub in subs:
        shown = _shown_name(shown_folder, sub.name)
        if sub.is_symlink():  # before is_dir(), which would follow it
            _refuse(diagnostics, shown, "is a symbolic link; measurement folders are plain folders")
            continue
        if not sub.is_dir():
            continue
        try:
            if not any(p.name.endswith(".json") for p in sub.iterdir()):
                continue
        except OSError as exc:
            _refuse(diagnostics, shown, f"cannot read: {exc.strerror}")
            continue
        if not is_experiment_id(sub.name):
            _refuse(diagnostics, shown, "is not named by an experiment id like 'ptx-jit'")
            continue
        yield sub


def _linked(folder: Path, root: Path | None) -> str | None:
    """The first component of folder, from root down (the folder alone without a root, or
    outside it), that is a symbolic link, as a diagnostic shows it; None when there is none."""
    return first_link(folder, root if root is not None else Path(os.path.abspath(folder)).parent)


def load_measurements(
    folder: Path, root: Path | None = None, catalog: list[ExperimentInfo] | None = None
) -> tuple[MeasurementSet, list[Diagnostic]]:
    """Read every measurement file under folder; problems come back as diagnostics."""
    known = {info.id: info for info in catalog} if catalog is not None else None
    found = MeasurementSet(folder, catalog=known)
    diagnostics: list[Diagnostic] = []
    for entry in catalog or []:
        found.experiments[entry.id] = ExperimentRecord(entry.id, entry)
    if (link := _linked(folder, root)) is not None:  # its files would be read, and published, from anywhere
        _refuse(
            diagnostics,
            link,
            "is a symbolic link; the measurements folder and the folders above it are plain folders",
            "a pull request may have committed it: remove the link (git rm), keep the measurements in the repository",
        )
        return found, diagnostics
    if not folder.is_dir():
        return found, diagnostics
    for sub in _experiment_folders(folder, root, diagnostics):
        info = known.get(sub.name) if known else None
        shown_sub = display_path(sub, root)  # not a link: file paths are shown under it, unresolved
        files = _node_files(sub, shown_sub, diagnostics)
        if not files:
            continue
        record = found.experiments.setdefault(sub.name, ExperimentRecord(sub.name, info))
        for node, paths in files.items():
            record.runs.append(_node_run(sub, shown_sub, node, paths, info, diagnostics))
    diagnostics += _identity(found)
    return found, diagnostics


def _misplaced(m: Measurement, shown: str, experiment: str, node: str, folder: str) -> Diagnostic | None:
    if m.experiment == experiment and m.node == node:
        return None
    return Diagnostic(
        shown,
        1,
        1,
        f"holds experiment '{m.experiment}' on node '{m.node}', not '{experiment}' on '{node}'",
        "make verify writes <experiment>/<node>.json; "
        f"move it to {folder}/{m.experiment}/{measurement_file_name(m.node)}",
    )


def _node_run(
    sub: Path,
    shown_sub: str,
    node: str,
    paths: dict[str, Path],
    info: ExperimentInfo | None,
    diagnostics: list[Diagnostic],
) -> NodeRun:
    """One node's runs of one experiment, each file held to what make verify writes."""
    read: dict[str, tuple[Measurement | None, str]] = {}
    for key, path in paths.items():
        shown = _shown_name(shown_sub, path.name)
        m = _read(path, shown, diagnostics)
        if m is not None and (wrong := _misplaced(m, shown, sub.name, node, sub.parent.name)):
            diagnostics.append(wrong)
        read[key] = (m, shown)
    good, good_shown = read.pop("good", (None, ""))
    failed, failed_shown = read.pop("failed", (None, ""))
    if good is not None and good.status != "ok":
        diagnostics.append(
            Diagnostic(
                good_shown,
                1,
                1,
                f"status is '{good.status}' in a file for good runs",
                "failed runs belong in <node>.failed.json",
            )
        )
        good = None
    earlier: list[tuple[Measurement, str]] = []
    for stamp, (m, shown) in sorted(read.items()):
        if m is None:
            continue
        problem = _earlier_problem(m, stamp, good, good_shown)
        if problem:
            diagnostics.append(
                Diagnostic(
                    shown,
                    1,
                    1,
                    problem,
                    "an earlier run is a good run of the same card by the same code; remove this file",
                )
            )
        else:
            earlier.append((m, shown))
    moved = bool(info and good and not made_the_same_way(good, info))
    summary_only = bool(moved and good and info and only_summary_moved(good, info))
    kept_raw = bool(good and good.raw is not None)
    return NodeRun(
        node,
        good,
        good_shown if good else "",
        failed,
        moved and not (summary_only and not kept_raw),
        rederivable=summary_only and kept_raw,
        summarised_before=summary_only and not kept_raw,
        earlier=tuple(m for m, _ in earlier),
        earlier_paths=tuple(shown for _, shown in earlier),
        failed_path=failed_shown if failed else "",
    )


def _earlier_problem(m: Measurement, stamp: str, good: Measurement | None, good_shown: str) -> str:
    """Why an earlier-run file cannot be one of the latest good run's card's runs ('' when it can)."""
    if m.status != "ok":
        return f"status is '{m.status}' in a file for an earlier good run"
    if run_stamp(m.provenance.get("recorded_at")) != stamp:
        return f"was recorded at {m.provenance.get('recorded_at')!s:.40}, not at the {stamp} its name says"
    if good is None:
        return "is an earlier run of a node with no latest good run (<node>.json)"
    mine, its = card_of(m.provenance) or "unknown", card_of(good.provenance) or "unknown"
    if mine != its:
        return f"ran on card {mine}, not on the node's card {its} ({good_shown})"
    if not made_the_same_way(m, good):
        return f"was made by another recipe than the latest run ({good_shown})"
    if run_stamp(good.provenance.get("recorded_at")) <= stamp:
        return f"is not earlier than the latest run ({good_shown})"
    return ""


def _identity(found: MeasurementSet) -> list[Diagnostic]:
    """A node name names one card, and a card has one name, across every experiment and every
    file: the latest good run, the earlier ones and a failed one (said last, so that a failed
    run on another card is the file blamed, never the good runs it contradicts)."""
    seen, failed = [], []
    for record in found:
        for run in record.runs:
            for m, shown in ((run.good, run.good_path), *zip(run.earlier, run.earlier_paths, strict=True)):
                if m is not None:
                    seen.append(Seen(run.node, card_of(m.provenance), shown))
            if run.failed is not None:
                failed.append(Seen(run.node, card_of(run.failed.provenance), run.failed_path))
    return [Diagnostic(c.shown, 1, 1, c.message, c.hint) for c in conflicts([*seen, *failed])]


def project_measurements(project: Project, folder: str | None = None) -> MeasurementSet:
    """The project's measurements (or those of folder), with the verifier's catalog: what the
    verbs that list them read (`values`, `cards`); GlossaryError with every problem found."""
    from cudagloss.load.catalog import load_catalog

    where = Path(folder) if folder else project.measurements_dir
    if where is None:
        raise UsageError("this glossary has no measurements (extra.glossary.measurements_dir is null)")
    if folder and not where.is_dir():  # a mistyped folder is no 'nothing measured yet'
        raise UsageError(f"{ascii(display_path(where, project.root))[1:-1]} is not a folder of measurements")
    measurements, diagnostics = load_measurements(where, project.root, load_catalog(project.root))
    if any(not d.warning for d in diagnostics):
        raise GlossaryError(diagnostics)
    return measurements
