"""Every place the glossary reaches into MkDocs, Material or watchdog internals, in one module.

Each workaround was written against the versions in WRITTEN_FOR, and each does nothing when
the internal it touches is gone, so an upgrade costs at most the speed-up or the fix it
brings, never a build. When the installed versions differ, one info line (never a warning:
--strict would fail the build) says which workarounds may no longer apply.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
from collections.abc import Mapping
from typing import Any

from mkdocs.config.defaults import MkDocsConfig

log = logging.getLogger("mkdocs.hooks.glossary")

WRITTEN_FOR = {"mkdocs": "1.6.1", "mkdocs-material": "9.8.2", "watchdog": "7.1.0"}
"""The versions each workaround below was written for (requirements.lock pins them)."""
WORKAROUNDS = {
    "mkdocs": ("the dirty-build warning filter", "the watch interval"),
    "mkdocs-material": ("the search-index merge",),
    "watchdog": ("the watch interval",),
}
"""Which workarounds depend on each package's internals."""
DIRTY_NOTICE = "A 'dirty' build is being performed"
"""How mkdocs.commands.build begins the warning it logs for every --dirty build."""


def installed_versions() -> dict[str, str]:
    """The installed version of each package in WRITTEN_FOR ('none' when it is missing)."""
    found = {}
    for name in WRITTEN_FOR:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "none"
    return found


def version_note(installed: Mapping[str, str]) -> str | None:
    """A line naming the packages that changed and the workarounds that may no longer
    apply, or None when every version is the one the workarounds were written for."""
    changed = [name for name, version in WRITTEN_FOR.items() if installed.get(name) != version]
    if not changed:
        return None
    versions = ", ".join(f"{name} {installed.get(name, 'none')} (written for {WRITTEN_FOR[name]})" for name in changed)
    affected = dict.fromkeys(w for name in changed for w in WORKAROUNDS[name])
    return f"cudagloss.mkdocs.compat: {versions}; may no longer apply: {', '.join(affected)}"


def report_versions(installed: Mapping[str, str]) -> None:
    """The note as an info line: upgrading is not a mistake, and --strict fails on warnings."""
    note = version_note(installed)
    if note is not None:
        log.info(note)


class ExactDirtyBuilds(logging.Filter):
    """MkDocs warns that a dirty build may leave stale links, and strict mode makes that
    warning an error. The glossary's pages say exactly when they changed, so the warning
    does not apply to them; the adapter logs what was rebuilt instead. Should MkDocs reword
    the warning, this filter lets it through and a strict dirty build fails, as without it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(DIRTY_NOTICE)


def exact_dirty_builds() -> None:
    """Install the filter once per process on the logger MkDocs' build warns through."""
    build_log = logging.getLogger("mkdocs.commands.build")
    if not any(isinstance(f, ExactDirtyBuilds) for f in build_log.filters):
        build_log.addFilter(ExactDirtyBuilds())


def poll_every(server: Any, seconds: float) -> None:
    """MkDocs polls what it watches every 0.5 s, and has no option to change that: on
    average a quarter of a second of every edit loop. The folders under `watch:` (terms,
    templates, measurements) are scheduled after on_serve, so setting the polling observer's
    private interval then polls them every `seconds`. Should the observer change, the
    default interval simply stays."""
    observer = getattr(server, "observer", None)
    if observer is not None and isinstance(getattr(observer, "_timeout", None), (int, float)):
        observer._timeout = seconds


def never_follow_links(server: Any) -> None:
    """watchdog's polling snapshots stat each entry of a watched folder following links (and the
    folder of mkdocs.yml, the repository's root, is watched whole): lstat instead, in the emitters
    made already and those made next, so that the watcher never reaches through a link. Should
    the observer change, it stays as it is (cudagloss serve refuses such links before)."""
    try:
        from watchdog.observers.polling import PollingEmitter
        from watchdog.utils.dirsnapshot import DirectorySnapshot
    except ImportError:
        return
    observer = getattr(server, "observer", None)
    if not isinstance(getattr(observer, "_emitter_kwargs", None), dict):
        return
    observer._emitter_kwargs = {**observer._emitter_kwargs, "stat": os.lstat}  # type: ignore[union-attr]
    for emitter in getattr(observer, "emitters", ()):
        if isinstance(emitter, PollingEmitter):
            emitter._take_snapshot = _lstat_snapshot(DirectorySnapshot, emitter.watch)


def _lstat_snapshot(snapshot: Any, watch: Any) -> Any:
    """A watch's snapshot taker, as watchdog's own but with lstat."""
    return lambda: snapshot(watch.path, recursive=watch.is_recursive, stat=os.lstat)


def keep_search_entries(config: MkDocsConfig, rebuilt: set[str]) -> None:
    """A dirty build indexes only the pages it rebuilt (`rebuilt`: their URLs as the index
    writes them). Material's search merges that with the last index, but assumes one page
    was rebuilt (and drops everything when it is the home page); so merge here instead:
    last entries of pages not rebuilt, then new ones. Without the attributes it reads,
    Material's own merge stays."""
    search: Any = config.plugins.get("material/search")
    previous = getattr(getattr(search, "search_index_prev", None), "entries", None)
    index: Any = getattr(search, "search_index", None)
    if previous is None or not isinstance(getattr(index, "entries", None), list):
        return
    kept = [e for e in previous if e["location"].partition("#")[0] not in rebuilt]
    index.entries = kept + index.entries
    search.search_index_prev = None
