"""Read a glossary's measurement folder: measurements/<experiment>/<node>.json (the last
good run on that node) and <node>.failed.json (a later run that failed, kept beside it).

Names on disk are untrusted like the files' contents: only folders named by an experiment
id and files named <node>.json or <node>.failed.json (a node name as make verify writes
it) are read; links, other files and other names are diagnostics, shown escaped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from cudagloss.errors import Diagnostic, display_path
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
from cudagloss.model.urls import FAILED_SUFFIX, measurement_file_name


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


def _node_files(sub: Path, shown: str, diagnostics: list[Diagnostic]) -> dict[str, dict[bool, Path]]:
    """node -> {failed?: path} for the files named <node>.json or <node>.failed.json; every
    other .json name is refused (it is not something make verify writes)."""
    nodes: dict[str, dict[bool, Path]] = {}
    folded: dict[str, str] = {}
    for entry in sorted(sub.iterdir()):
        name = entry.name
        if not name.endswith(".json"):
            continue
        failed = name.endswith(FAILED_SUFFIX)
        node = name.removesuffix(FAILED_SUFFIX if failed else ".json")
        if not is_node_name(node):
            _refuse(
                diagnostics,
                _shown_name(shown, name),
                "is not named <node>.json or <node>.failed.json with a node name like 'h200-lent'",
                "make verify writes only those names; remove or rename this file",
            )
            continue
        key = node.lower().replace(".", "-").replace("_", "-")
        if folded.setdefault(key, node) != node:
            _refuse(
                diagnostics,
                _shown_name(shown, name),
                f"node '{node}' cannot be told apart from node '{folded[key]}' on a page",
                "give each node a name that differs in more than case or '.', '-', '_'",
            )
            continue
        nodes.setdefault(node, {})[failed] = entry
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
        if not sub.is_dir():
            continue
        shown = _shown_name(shown_folder, sub.name)
        if sub.is_symlink():
            _refuse(diagnostics, shown, "is a symbolic link; measurement folders are plain folders")
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


def load_measurements(
    folder: Path, root: Path | None = None, catalog: list[ExperimentInfo] | None = None
) -> tuple[MeasurementSet, list[Diagnostic]]:
    """Read every measurement file under folder; problems come back as diagnostics."""
    known = {info.id: info for info in catalog} if catalog is not None else None
    found = MeasurementSet(folder, catalog=known)
    diagnostics: list[Diagnostic] = []
    for entry in catalog or []:
        found.experiments[entry.id] = ExperimentRecord(entry.id, entry)
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
            good_file, failed_file = (sub / measurement_file_name(node, failed=f) for f in (False, True))
            good_shown, failed_shown = (_shown_name(shown_sub, p.name) for p in (good_file, failed_file))
            good = _read(good_file, good_shown, diagnostics) if False in paths else None
            failed = _read(failed_file, failed_shown, diagnostics) if True in paths else None
            for m, shown in ((good, good_shown), (failed, failed_shown)):
                if m is not None and (m.experiment != sub.name or m.node != node):
                    diagnostics.append(
                        Diagnostic(
                            shown,
                            1,
                            1,
                            f"holds experiment '{m.experiment}' on node '{m.node}', not '{sub.name}' on '{node}'",
                            f"make verify writes <experiment>/<node>.json; move it to {sub.parent.name}/"
                            f"{m.experiment}/{measurement_file_name(m.node)}",
                        )
                    )
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
            stale = bool(info and good and good.code_hash != info.code_hash)
            record.runs.append(NodeRun(node, good, good_shown if good else "", failed, stale))
    return found, diagnostics
