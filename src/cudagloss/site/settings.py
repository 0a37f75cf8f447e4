"""The site's settings as the preview configuration (mkdocs.yml) states them, read without MkDocs.

`cudagloss render` must not need MkDocs to know the site's name, theme and Markdown
extensions, so it reads mkdocs.yml as YAML, resolving `!ENV` the way MkDocs does (the first
variable that is set, else the last item as the default). Only the settings that both
MkDocs + Material and Zensical read are kept (tree.builder_config writes them out); the
MkDocs-only ones (hooks, watch, validation, the glossary's `extra:` options) stay behind.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cudagloss.errors import UsageError, display_path

SHARED_KEYS = ("site_name", "site_description", "copyright")
"""Plain settings copied as they are."""
THEME_KEYS = ("name", "font", "features", "palette", "language", "icon", "favicon", "logo")
"""Theme settings both builders read (custom_dir is copied as a folder, so it is set anew)."""
DEFAULT_EDIT_URI_TEMPLATE = "edit/main/{path}"


class _Loader(yaml.SafeLoader):
    """SafeLoader plus MkDocs' `!ENV` tag; nothing else a configuration could ask for."""


def _env(environ: Mapping[str, str]) -> Any:
    def construct(loader: _Loader, node: yaml.Node) -> Any:
        if isinstance(node, yaml.ScalarNode):
            names, default = [loader.construct_scalar(node)], None
        elif isinstance(node, yaml.SequenceNode):
            items = loader.construct_sequence(node)
            names, default = items[:-1], items[-1] if len(items) > 1 else None
        else:
            raise yaml.constructor.ConstructorError(None, None, "!ENV takes a name or a list", node.start_mark)
        for name in names:
            if isinstance(name, str) and environ.get(name):
                return environ[name]
        return default

    return construct


@dataclass(frozen=True)
class SiteSettings:
    """What the renderer and the builder configuration need from mkdocs.yml."""

    root: Path
    """The folder of mkdocs.yml: every folder below is resolved against it."""
    site_name: str
    site_url: str | None = None
    repo_url: str | None = None
    edit_uri_template: str = DEFAULT_EDIT_URI_TEMPLATE
    shared: dict[str, Any] = field(default_factory=dict)
    theme: dict[str, Any] = field(default_factory=dict)
    extra_css: tuple[str, ...] = ()
    extra_javascript: tuple[str, ...] = ()
    markdown_extensions: tuple[Any, ...] = ()
    docs_dir: Path = Path("docs")
    custom_dir: Path | None = None
    terms_dir: Path = Path("terms")
    templates_dir: Path = Path("templates")
    measurements_dir: Path | None = Path("measurements")

    def edit_url(self, repo_path: str | None) -> str | None:
        """Where a reader edits the file a page comes from, or None without a repository."""
        if not self.repo_url or not repo_path:
            return None
        return f"{self.repo_url.rstrip('/')}/{self.edit_uri_template.format(path=repo_path)}"


def _folder(root: Path, value: object, key: str) -> Path:
    if not isinstance(value, str) or not value:
        raise UsageError(f"mkdocs.yml: '{key}' must be a folder name, not {value!r}")
    return root / value


def read_settings(config: Path, environ: Mapping[str, str] = os.environ) -> SiteSettings:
    """The settings of a mkdocs.yml; UsageError (one line) when it cannot be read."""

    class Loader(_Loader):
        """Its own class: the tag reads this call's environment."""

    Loader.add_constructor("!ENV", _env(environ))
    try:
        data = yaml.load(config.read_text(encoding="utf-8"), Loader=Loader)
    except OSError as exc:
        raise UsageError(f"cannot read {display_path(config)}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise UsageError(f"{display_path(config)}{where}: not a configuration MkDocs could read") from None
    if not isinstance(data, dict):
        raise UsageError(f"{display_path(config)}: not a configuration (a mapping of settings)")
    root = config.parent
    theme = data.get("theme") or {}
    theme = theme if isinstance(theme, dict) else {"name": theme}
    glossary = (data.get("extra") or {}).get("glossary") or {}
    measurements = glossary.get("measurements_dir", "measurements")
    return SiteSettings(
        root=root,
        site_name=str(data.get("site_name") or "CUDA Glossary"),
        site_url=data.get("site_url") or None,
        repo_url=data.get("repo_url") or None,
        edit_uri_template=str(data.get("edit_uri_template") or DEFAULT_EDIT_URI_TEMPLATE),
        shared={k: data[k] for k in SHARED_KEYS if data.get(k) is not None},
        theme={k: theme[k] for k in THEME_KEYS if k in theme},
        extra_css=tuple(str(c) for c in data.get("extra_css") or ()),
        extra_javascript=tuple(str(j) for j in data.get("extra_javascript") or ()),
        markdown_extensions=tuple(data.get("markdown_extensions") or ()),
        docs_dir=_folder(root, data.get("docs_dir", "docs"), "docs_dir"),
        custom_dir=_folder(root, theme["custom_dir"], "theme.custom_dir") if theme.get("custom_dir") else None,
        terms_dir=_folder(root, glossary.get("terms_dir", "terms"), "extra.glossary.terms_dir"),
        templates_dir=_folder(root, glossary.get("templates_dir", "templates"), "extra.glossary.templates_dir"),
        measurements_dir=_folder(root, measurements, "extra.glossary.measurements_dir") if measurements else None,
    )
