"""MkDocs events turned into calls to the site stage, for site_hooks/glossary.py to forward.

The live preview, and nothing more: `cudagloss render` writes the same pages as a plain
docs tree that any builder builds (cudagloss.site.tree). One GlossaryAdapter per MkDocs
configuration (`mkdocs serve` loads a new one for every rebuild): it loads and renders the
glossary from the configuration's options and hands MkDocs the tree's page texts and files
in memory, each saying whether it changed. The sanitiser runs inside the Markdown
conversion (cudagloss.site.sanitise, which the configuration must list) and the JSON-LD
travels in the front matter, exactly as in the tree. What must outlive one configuration
(every memo of the render stage, which pages changed, compiled templates) is STATE, this
process's one cudagloss.site.state.RenderState.

What goes wrong is sorted by the programs' one classification (cudagloss.boundary.classify),
but reported the MkDocs way, as MkDocs owns the process: mistakes in the terms (GlossaryError)
through a child of the 'mkdocs' logger, one diagnostic at a time, and the build aborted, so
nothing is built from bad input (the preview shows them in the browser instead, but for a
committed link, which stops it too: `cudagloss serve` refuses one before MkDocs starts); another
failure the user can fix (a UsageError, a write that failed) as one logged line and an
abort; a bug keeps its traceback, and Ctrl-C is MkDocs' own.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any, cast

import jinja2
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort
from mkdocs.structure.files import File, Files, InclusionLevel

from cudagloss.boundary import classify
from cudagloss.errors import Diagnostic
from cudagloss.files.inside import LINKED
from cudagloss.load.project import project_from
from cudagloss.mkdocs import compat
from cudagloss.model.project import DEFAULT_EDIT_URI_TEMPLATE, Project, ProjectError
from cudagloss.site.build import build_site_content
from cudagloss.site.failed import failed_content
from cudagloss.site.incremental import page_fingerprints, shared_fingerprint
from cudagloss.site.sanitise import NAME as SANITISER
from cudagloss.site.state import RenderState
from cudagloss.site.tree import page_text

log = logging.getLogger("mkdocs.hooks.glossary")
WATCH_POLL_S = 0.1


class GlossaryFile(File):
    """A generated page that says whether it changed, which is what --dirty asks."""

    modified = True

    def is_modified(self) -> bool:
        return self.modified


STATE = RenderState()
"""The render stage's memory for this process: it outlives each configuration's adapter, as
`mkdocs serve` makes a new configuration for every rebuild (cudagloss.site.state)."""
_preview: dict[str, bool] | None = None
"""Under `mkdocs serve`: the pages of the last good build (src_uri: in the nav), which show the
diagnostics while the glossary cannot be built. None for `mkdocs build`, which aborts instead."""


def on_startup(dirty: bool, serving: bool = False) -> None:
    """Once per process, before any configuration is built."""
    global _preview
    _preview = {} if serving else None
    compat.report_versions(compat.installed_versions())
    if dirty:
        compat.exact_dirty_builds()


def on_serve(server: Any) -> Any:
    """Once per `mkdocs serve`, before the folders under `watch:` are watched."""
    compat.poll_every(server, WATCH_POLL_S)
    compat.never_follow_links(server)
    return server


def on_build_error() -> None:
    """A build failed part way: the next one rebuilds every page."""
    STATE.builds.forget()


def _report(diagnostics: list[Diagnostic]) -> None:
    """Each diagnostic as a log line; in the preview printed past MkDocs' counter instead,
    as a counted one would make a strict configuration stop serving (the page shows it)."""
    for diagnostic in diagnostics:
        if _preview is not None:
            print(f"{'WARNING' if diagnostic.warning else 'ERROR':<8}-  {diagnostic.format()}", file=sys.stderr)
        else:
            (log.warning if diagnostic.warning else log.error)(diagnostic.format())


def _project(config: MkDocsConfig) -> Project:
    """The project of MkDocs' own configuration (as MkDocs read it: `!ENV` resolved, a URL
    given on its command line); a mistake in `extra: glossary:` is logged and the build aborted."""
    data = {
        "site_name": config.site_name,
        "site_url": config.site_url,
        "repo_url": config.repo_url,
        "edit_uri_template": str(config.edit_uri_template or DEFAULT_EDIT_URI_TEMPLATE),  # a UserString
        "extra": config.extra,
    }
    try:
        return project_from(data, Path(config.config_file_path))
    except ProjectError as exc:
        log.error(f"Config value '{exc.key}': {exc.problem}")
        raise Abort(f"Aborted with an error in '{exc.key}'") from None


class GlossaryAdapter:
    """The glossary's part in building one MkDocs configuration."""

    def __init__(self, config: MkDocsConfig) -> None:
        """Read the project and build every page, or log each mistake and abort."""
        self.settings = _project(config)
        if SANITISER not in config.markdown_extensions:  # without it no page would be sanitised
            log.error(f"Config value 'markdown_extensions': add '{SANITISER}', the page sanitiser, to the list")
            raise Abort("Aborted: the page sanitiser is not configured")
        self.rebuilt: set[str] = set()
        """URLs of the pages this build renders (all of them unless --dirty)."""
        try:
            self.content, corpus = build_site_content(self.settings, state=STATE)
        except Exception as exc:
            failure = classify(exc, "glossary")
            if failure is None or not (failure.mistakes or failure.line):
                raise  # a bug: MkDocs shows its traceback
            STATE.builds.forget()
            if failure.mistakes is None:
                log.error(failure.line)
                raise Abort(f"Aborted: {failure.line}") from None
            mistakes = failure.mistakes
            _report(mistakes.diagnostics)
            n = len(mistakes.errors)
            errors = f"{n} error{'s' if n != 1 else ''}"
            linked = any(d.message.startswith(LINKED) for d in mistakes.diagnostics)  # a committed link: never served
            if _preview is None or linked:
                raise Abort(f"{errors} in term or measurement files; nothing was built") from None
            log.info(f"the preview shows the {errors} on every page until they are fixed")
            self.content = failed_content(mistakes.diagnostics, _preview.items())
            return
        if _preview is not None:
            _preview.clear()
            _preview.update((page.src_uri, page.in_nav) for page in self.content.pages)
        _report(corpus.warnings)  # --strict turns these into a failed build, but not in the preview

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        config.nav = self.content.nav
        config.edit_uri = config.edit_uri_template = None  # edit links come from each page's front matter
        return config

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        """The generated pages and files, each saying whether it changed since the last build."""
        config_text = Path(config.config_file_path).read_text(encoding="utf-8") + repr(config.site_url)
        pages = self.content.pages
        changed = STATE.builds.changed(shared_fingerprint(self.content, config_text), page_fingerprints(self.content))
        if len(changed) < len(pages):
            log.info(f"{len(changed)} of {len(pages)} glossary pages changed")
        for page in pages:
            inclusion = InclusionLevel.UNDEFINED if page.in_nav else InclusionLevel.NOT_IN_NAV
            text = page_text(page, self.settings)
            made = GlossaryFile.generated(config, page.src_uri, content=text, inclusion=inclusion)
            generated = cast(GlossaryFile, made)
            generated.modified = page.src_uri in changed
            if generated.modified:  # as Page.url (and so the search index) writes it: '' for the home page
                self.rebuilt.add("" if generated.url in (".", "./") else generated.url)
            files.append(generated)
        for raw in (*self.content.files, *self.content.exports):
            files.append(File.generated(config, raw.src_uri, content=raw.content))
        return files

    def on_post_build(self, config: MkDocsConfig) -> None:
        """The whole search index, and this build becomes the one the next compares with."""
        compat.keep_search_entries(config, self.rebuilt)
        STATE.builds.completed()

    def on_env(self, env: jinja2.Environment) -> jinja2.Environment:
        """MkDocs makes a new theme environment per build; let it reuse compiled templates."""
        env.bytecode_cache = STATE.bytecode
        return env
