"""MkDocs hooks: a thin adapter from MkDocs events to the cudagloss package.

MkDocs loads this file by path, outside the normal import path, so it holds no logic of
its own: it loads and renders the glossary once per build (on_config), hands the pages to
MkDocs as in-memory files (on_files), writes the exports into the built site
(on_post_build), and reports author mistakes through a child of the
'mkdocs' logger before aborting, so nothing is built from bad input.
"""

from __future__ import annotations

import logging
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort
from mkdocs.structure.files import File, Files, InclusionLevel

from cudagloss.atomic import write_text_atomic
from cudagloss.diagnostics import GlossaryError
from cudagloss.render import SiteContent
from cudagloss.site import build_site_content

log = logging.getLogger("mkdocs.hooks.glossary")
_content: SiteContent | None = None


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
    for page in _content.pages:
        inclusion = InclusionLevel.UNDEFINED if page.in_nav else InclusionLevel.NOT_IN_NAV
        generated = File.generated(config, page.src_uri, content=page.markdown, inclusion=inclusion)
        generated.edit_uri = page.edit_uri
        files.append(generated)
    for raw in _content.files:
        files.append(File.generated(config, raw.src_uri, content=raw.content))
    return files


def on_post_build(config: MkDocsConfig) -> None:
    """glossary.md and llms.txt at the site root: MkDocs would turn a .md file into a page."""
    assert _content is not None
    for exported in _content.exports:
        write_text_atomic(Path(config.site_dir) / exported.src_uri, exported.content)
