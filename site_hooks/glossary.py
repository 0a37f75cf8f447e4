"""MkDocs hooks: the entry point `hooks:` in mkdocs.yml names, and nothing more.

MkDocs loads this file by path, outside the normal import path, once per process, and
builds one configuration at a time (`mkdocs serve` loads a new one for every rebuild). So
each event is forwarded to cudagloss.mkdocs.adapter: on_config starts the GlossaryAdapter
of the configuration being built, and the later events of that build go to it. The
options are read from `extra: glossary:` (cudagloss.mkdocs.config).
"""

from __future__ import annotations

from typing import Any

import jinja2
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import Files

from cudagloss.mkdocs import adapter
from cudagloss.mkdocs.adapter import GlossaryAdapter

_current: GlossaryAdapter | None = None
"""The adapter of the configuration being built: the one module global, as MkDocs calls
hooks as plain functions of a file it loads once per process."""


def _adapter() -> GlossaryAdapter:
    assert _current is not None, "on_config starts every build"
    return _current


def on_startup(command: str, dirty: bool) -> None:
    adapter.on_startup(dirty, serving=command == "serve")


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    global _current
    _current = GlossaryAdapter(config)
    return _current.on_config(config)


def on_serve(server: Any, config: MkDocsConfig, builder: Any) -> Any:
    return adapter.on_serve(server)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    return _adapter().on_files(files, config)


@event_priority(50)  # before the search plugin writes its index
def on_post_build(config: MkDocsConfig) -> None:
    _adapter().on_post_build(config)


def on_env(env: jinja2.Environment, config: MkDocsConfig, files: Files) -> jinja2.Environment:
    return _adapter().on_env(env)


def on_build_error(error: Exception) -> None:
    adapter.on_build_error()
