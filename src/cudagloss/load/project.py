"""The project read from mkdocs.yml, without MkDocs: the one place a folder or the site's name
is decided (cudagloss.model.project).

The file is read as YAML, resolving `!ENV` the way MkDocs does (the first variable that is set,
else the last item as the default). `extra: glossary:` is typed here: an unknown option is
refused with the one it may be a misspelling of, and a folder must be named by a string.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cudagloss.errors import GlossaryError, UsageError, did_you_mean, display_path
from cudagloss.files.inside import first_link_in, link_diagnostic, read_link_mistake, refuse_read_links
from cudagloss.model.project import (
    CONFIG,
    DEFAULT_EDIT_URI_TEMPLATE,
    DEFAULT_SITE_NAME,
    FOLDERS,
    OPTIONS,
    Project,
    ProjectError,
)

SHARED_KEYS = ("site_name", "site_description", "copyright")
"""Plain settings both builders read, copied as they are."""
THEME_KEYS = ("name", "font", "features", "palette", "language", "icon", "favicon", "logo")
"""Theme settings both builders read (custom_dir is copied as a folder, so it is set anew)."""


if TYPE_CHECKING:
    import yaml


def _env(environ: Mapping[str, str]) -> Any:
    import yaml

    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
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


def load_project(config: Path = Path(CONFIG), environ: Mapping[str, str] = os.environ) -> Project:
    """The project of a mkdocs.yml, or the defaults beside it where there is none; GlossaryError
    (one line) for a link at it or a folder above it from the working folder down; UsageError
    (one line) when it cannot be read, ProjectError for a mistake in a setting. PyYAML is
    imported only here: a GPU node without it runs experiments named on its command line."""
    refuse_read_links(config, None, "the configuration")  # a committed link: settings from anywhere
    if not config.exists():  # the folders as the user names them (paths show so); the root absolute
        return dataclasses.replace(Project.default(config.parent), root=Path(os.path.abspath(config.parent)))
    return refuse_folders_outside(project_from(read_settings(config, environ), config), config)


def read_settings(config: Path, environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """The settings of a configuration file as written (no `INHERIT:` followed), read with
    SafeLoader plus `!ENV`: a tag that would run Python (MkDocs' own loader allows
    `!!python/object`) is refused like any other mistake; UsageError (one line)."""
    import yaml

    class Loader(yaml.SafeLoader):
        """SafeLoader plus MkDocs' `!ENV` tag, read from this call's environment; nothing else
        a configuration could ask for."""

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
    return data


def refuse_folders_outside(project: Project, config: Path) -> Project:
    """project, or ProjectError (one line) for a folder the configuration names outside its own
    folder (the repository): a pull request's mkdocs.yml could name `docs_dir: /etc` and every
    command would read, and publish, from there. Only the configuration's folders: a folder typed
    on the command line (TERMS=, a terms argument) is the user's. Not the preview's hooks,
    whose configurations the tests and benchmarks write beside the folders they name."""
    named = (
        ("docs_dir", project.docs_dir),
        ("theme.custom_dir", project.custom_dir),
        ("extra.glossary.terms_dir", project.terms_dir),
        ("extra.glossary.templates_dir", project.templates_dir),
        ("extra.glossary.measurements_dir", project.measurements_dir),
        ("extra.glossary.computed_dir", project.computed_dir),
    )
    for key, folder in named:
        if folder is not None and not Path(os.path.abspath(folder)).is_relative_to(project.root):
            problem = f"{display_path(folder)!r} is outside the repository (the folder of {display_path(config)})"
            raise ProjectError(Path(display_path(config)), key, problem)
    return project


def _folder(config: Path, value: object, key: str) -> Path:
    if not isinstance(value, str) or not value:
        raise ProjectError(Path(display_path(config)), key, f"must be a folder name, not {value!r}")
    return config.parent / value


def glossary_folders(glossary: object, config: Path) -> dict[str, Path | None]:
    """The folders of `extra: glossary:`, each resolved against the configuration's folder."""
    where = Path(display_path(config))
    if glossary is None:
        glossary = {}
    if not isinstance(glossary, dict):
        raise ProjectError(where, "extra.glossary", f"must be a mapping of options, not {glossary!r}")
    for key in glossary:
        if key not in OPTIONS:
            raise ProjectError(where, "extra.glossary", f"unknown option {key!r}{did_you_mean(str(key), OPTIONS)}")
    found: dict[str, Path | None] = {}
    for key, default in FOLDERS.items():
        value = glossary.get(key, default)
        if key in ("measurements_dir", "computed_dir") and value in (None, ""):
            found[key] = None  # a glossary without measurements (or computed tables)
        else:
            found[key] = _folder(config, value, f"extra.glossary.{key}")
    return found


def project_from(data: Mapping[str, Any], config: Path) -> Project:
    """The project of a configuration already read (MkDocs' own, in the preview)."""
    theme = data.get("theme") or {}
    theme = theme if isinstance(theme, dict) else {"name": theme}
    folders = glossary_folders((data.get("extra") or {}).get("glossary"), config)
    return Project(
        root=Path(os.path.abspath(config.parent)),
        site_name=str(data.get("site_name") or DEFAULT_SITE_NAME),
        site_url=data.get("site_url") or None,
        repo_url=data.get("repo_url") or None,
        edit_uri_template=str(data.get("edit_uri_template") or DEFAULT_EDIT_URI_TEMPLATE),
        shared={k: data[k] for k in SHARED_KEYS if data.get(k) is not None},
        theme={k: theme[k] for k in THEME_KEYS if k in theme},
        extra_css=tuple(str(c) for c in data.get("extra_css") or ()),
        extra_javascript=tuple(str(j) for j in data.get("extra_javascript") or ()),
        markdown_extensions=tuple(data.get("markdown_extensions") or ()),
        docs_dir=_folder(config, data.get("docs_dir", "docs"), "docs_dir"),
        custom_dir=_folder(config, theme["custom_dir"], "theme.custom_dir") if theme.get("custom_dir") else None,
        terms_dir=folders["terms_dir"] or config.parent / "terms",
        templates_dir=folders["templates_dir"] or config.parent / "templates",
        measurements_dir=folders["measurements_dir"],
        computed_dir=folders["computed_dir"],
        commit=_commit(((data.get("extra") or {}).get("glossary") or {}).get("commit"), config),
    )


def _commit(value: object, config: Path) -> str | None:
    """A commit id (7 to 40 hex digits, as git and GitHub write them), or None where unset."""
    if value in (None, ""):
        return None
    if not (isinstance(value, str) and re.fullmatch(r"[0-9a-f]{7,40}", value)):
        raise ProjectError(Path(display_path(config)), "extra.glossary.commit", f"must be a commit id, not {value!r}")
    return value


def refuse_folder_links(project: Project) -> None:
    """GlossaryError (one line) for a terms, templates, docs or theme folder that is, or lies
    under, a symbolic link from the project's root down, or for a link anywhere in the docs or
    theme folder (copied whole, into the tree or by MkDocs): its files would be read, and
    published, from anywhere (read_link_mistake, the rule writes follow). Render, export and
    the preview alike. ProjectError for an extra_css or extra_javascript file outside docs."""
    named = (("the terms folder", project.terms_dir), ("the templates folder", project.templates_dir))
    for what, folder in named:
        if (mistake := read_link_mistake(folder, project.root, what)) is not None:
            raise GlossaryError([mistake])
    whole = (
        ("the docs folder, its files", project.docs_dir),
        ("the theme's custom_dir, its files", project.custom_dir),
    )
    for what, copied in whole:
        if copied is not None and (shown := first_link_in(copied, project.root)) is not None:
            raise GlossaryError([link_diagnostic(shown, what)])
    for key, entries in (("extra_css", project.extra_css), ("extra_javascript", project.extra_javascript)):
        for entry in entries:
            local = "://" not in entry and not entry.startswith("//")  # else an address, never read
            if local and (os.path.isabs(entry) or os.path.normpath(entry).split(os.sep)[0] == ".."):
                where = Path(display_path(project.root / CONFIG))
                raise ProjectError(where, key, f"{entry!r} is not a file of the docs folder (nor an address)")


def require_folders(project: Project, config: Path) -> None:
    """GlossaryError for a folder under a link (refuse_folder_links); UsageError for a terms or
    templates folder that is not there."""
    refuse_folder_links(project)
    for folder in (project.terms_dir, project.templates_dir):
        if not folder.is_dir():
            raise UsageError(f"no folder {display_path(folder)} (named in {display_path(config)})")
