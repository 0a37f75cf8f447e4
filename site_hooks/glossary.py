"""MkDocs hooks: a thin adapter from MkDocs events to the cudagloss package.

MkDocs loads this file by path, outside the normal import path, so it holds no logic of
its own: it loads and renders the glossary once per build (on_config), hands the pages to
MkDocs as in-memory files (on_files), writes the exports into the built site
(on_post_build), and reports author mistakes through a child of the
'mkdocs' logger before aborting, so nothing is built from bad input.

Under `mkdocs serve --dirty` (what `make serve` runs) each generated page tells MkDocs
whether it changed since the last build (cudagloss.site.incremental), so an edit rebuilds only
the pages it affects; the search index keeps the other pages' entries.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, cast

import jinja2
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files, InclusionLevel

from cudagloss.errors import GlossaryError
from cudagloss.files.atomic import write_text_atomic
from cudagloss.site.build import build_site_content
from cudagloss.site.bytecode import BYTECODE
from cudagloss.site.escape import clean_html
from cudagloss.site.incremental import MEMORY, page_fingerprints, shared_fingerprint
from cudagloss.site.render import SiteContent

log = logging.getLogger("mkdocs.hooks.glossary")
_content: SiteContent | None = None
_heads: dict[str, str] = {}
"""Each generated page's ready <head> HTML (its JSON-LD), by source path."""
_rebuilt: set[str] = set()
"""URLs of the pages this build renders (all of them unless --dirty)."""
_DIRTY_NOTICE = "A 'dirty' build is being performed"
WATCH_POLL_S = 0.1


class GlossaryFile(File):
    """A generated page that says whether it changed, which is what --dirty asks."""

    modified = True

    def is_modified(self) -> bool:
        return self.modified


class _ExactDirtyBuilds(logging.Filter):
    """MkDocs warns that a dirty build may leave stale links, and strict mode makes that
    warning an error. The glossary's pages say exactly when they changed, so the warning
    does not apply to them; it is replaced by an info line saying what was rebuilt."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(_DIRTY_NOTICE)


def on_startup(command: str, dirty: bool) -> None:
    build_log = logging.getLogger("mkdocs.commands.build")
    if dirty and not any(isinstance(f, _ExactDirtyBuilds) for f in build_log.filters):
        build_log.addFilter(_ExactDirtyBuilds())


def on_serve(server: Any, config: MkDocsConfig, builder: Any) -> Any:
    """MkDocs polls what it watches every 0.5 s, and has no option to change that: on
    average a quarter of a second of every edit loop. The folders under `watch:` (terms,
    templates, measurements) are scheduled after this event, so setting the observer's
    interval now polls them every WATCH_POLL_S. Should watchdog's observer change, the
    default interval simply stays."""
    observer = getattr(server, "observer", None)
    if observer is not None and isinstance(getattr(observer, "_timeout", None), (int, float)):
        observer._timeout = WATCH_POLL_S
    return server


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    global _content
    root = Path(config.config_file_path).parent
    options = config.extra.get("glossary", {})
    measurements = options.get("measurements_dir", "measurements")
    try:
        _content, corpus = build_site_content(
            root / options.get("terms_dir", "terms"),
            root / options.get("templates_dir", "templates"),
            repo_root=root,
            site_name=config.site_name,
            site_url=config.site_url or None,
            measurements_dir=root / measurements if measurements else None,
            repo_url=config.repo_url or None,
        )
    except GlossaryError as exc:
        MEMORY.forget()
        for diagnostic in exc.diagnostics:
            (log.warning if diagnostic.warning else log.error)(diagnostic.format())
        n = len(exc.errors)
        raise Abort(f"{n} error{'s' if n != 1 else ''} in term or measurement files; nothing was built") from None
    for diagnostic in corpus.warnings:  # --strict turns these into a failed build
        log.warning(diagnostic.format())
    config.nav = _content.nav
    if not config.repo_url:  # without a repository an edit link would be a broken relative URL
        config.edit_uri = config.edit_uri_template = None
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    assert _content is not None
    config_text = Path(config.config_file_path).read_text(encoding="utf-8") + repr(config.site_url)
    changed = MEMORY.changed(shared_fingerprint(_content, config_text), page_fingerprints(_content))
    if len(changed) < len(_content.pages):
        log.info(f"{len(changed)} of {len(_content.pages)} glossary pages changed")
    _rebuilt.clear()
    _heads.clear()
    for page in _content.pages:
        if page.head:
            _heads[page.src_uri] = page.head
        inclusion = InclusionLevel.UNDEFINED if page.in_nav else InclusionLevel.NOT_IN_NAV
        generated = cast(
            GlossaryFile, GlossaryFile.generated(config, page.src_uri, content=page.markdown, inclusion=inclusion)
        )
        generated.edit_uri = page.edit_uri
        generated.modified = page.src_uri in changed
        if generated.modified:  # as Page.url (and so the search index) writes it: '' for the home page
            _rebuilt.add("" if generated.url in (".", "./") else generated.url)
        files.append(generated)
    for raw in _content.files:
        files.append(File.generated(config, raw.src_uri, content=raw.content))
    return files


@event_priority(100)  # before anything reads the page's HTML: the search plugin indexes it next
def on_page_content(html: str, page: Any, config: MkDocsConfig, files: Files) -> str:
    """Every page's HTML through the allowlist sanitiser (cudagloss.site.escape), whatever made it."""
    return clean_html(html)


def on_post_page(output: str, page: Any, config: MkDocsConfig) -> str:
    """A page's JSON-LD into its <head>: a script the sanitiser rightly keeps out of the body."""
    head = _heads.get(page.file.src_uri)
    return output.replace("</head>", f"{head}</head>", 1) if head else output


@event_priority(50)  # before the search plugin writes its index
def on_post_build(config: MkDocsConfig) -> None:
    """glossary.md and llms.txt at the site root: MkDocs would turn a .md file into a page."""
    assert _content is not None
    for exported in _content.exports:
        write_text_atomic(Path(config.site_dir) / exported.src_uri, exported.content)
    _keep_search_entries(config)
    MEMORY.completed()


def on_env(env: jinja2.Environment, config: MkDocsConfig, files: Files) -> jinja2.Environment:
    """MkDocs makes a new theme environment per build; let it reuse compiled templates."""
    env.bytecode_cache = BYTECODE
    return env


def on_build_error(error: Exception) -> None:
    MEMORY.forget()


def _keep_search_entries(config: MkDocsConfig) -> None:
    """A dirty build indexes only the pages it rebuilt. Material's search merges that with
    the last index, but assumes one page was rebuilt (and drops everything when it is the
    home page); so merge here instead: last entries of pages not rebuilt, then new ones."""
    search: Any = config.plugins.get("material/search")
    previous = getattr(search, "search_index_prev", None)
    if previous is None:
        return
    kept = [e for e in previous.entries if e["location"].partition("#")[0] not in _rebuilt]
    search.search_index.entries = kept + search.search_index.entries
    search.search_index_prev = None
