"""Every path MkDocs will read, watch or import for a configuration, refused before it starts (issue 39).

`mkdocs serve` and `mkdocs build` read more than the glossary's folders: the hooks they import
(Python files, run as they load), each file `INHERIT:` names, docs_dir and the theme's custom_dir
(collected whole), site_dir, the folders under `watch:` (walked by the file watcher), a plugin's
folder options and a Markdown extension importable from the repository's root. A pull request can
name a path outside the repository in mkdocs.yml, or commit a link on the way to one, and MkDocs
would follow either: once MkDocs has started, a hook from anywhere has already run. So the process
that starts MkDocs (`cudagloss serve`; `cudagloss render`, the first step of `make build`) runs
files.inside's one rule over each of them first: a path outside the repository is one line naming
the setting (ProjectError), a link on the way to it or below a folder read whole one diagnostic
(GlossaryError), and MkDocs never starts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from cudagloss.errors import GlossaryError, display_path
from cudagloss.files.inside import first_link, first_link_in, link_diagnostic, read_links_in
from cudagloss.load.project import project_from, read_settings, refuse_folder_links, refuse_folders_outside
from cudagloss.model.project import ProjectError

MAX_INHERIT = 8
"""How deep an `INHERIT:` chain may go (MkDocs follows a loop until Python's recursion limit)."""


def refuse_preview_reads(config: Path, environ: Mapping[str, str] = os.environ, *, watched: bool = True) -> None:
    """ProjectError or GlossaryError (one line) for any path MkDocs would read through a link or
    from outside the configuration's folder; nothing is read but the configuration files. watched:
    also the folders `mkdocs serve` watches and the hooks read whole (`cudagloss render` leaves the
    glossary's folders to its loaders, which say more, and builds nothing that watches)."""
    root = Path(os.path.abspath(config.parent))
    data = preview_settings(config, root, environ)
    where = Path(display_path(config))
    for hook in _strings(data.get("hooks"), where, "hooks"):
        _refuse(root, where, "hooks", hook, "a hook", whole=False)
        folder = Path(os.path.abspath(root / hook)).parent  # on sys.path while the hook loads
        if folder != root and (linked := read_links_in(folder, root, "the files beside a hook")):
            raise GlossaryError(linked[:1])
    project = refuse_folders_outside(project_from(data, config), config)
    refuse_folder_links(project)  # the terms, templates, docs and theme folders, as render says it
    if watched:
        glossary = {"terms": project.terms_dir, "templates": project.templates_dir}
        for name, read in {**glossary, "measurements": project.measurements_dir}.items():
            if read is not None and (shown := first_link_in(read, root)) is not None:  # read whole, and watched
                raise GlossaryError([link_diagnostic(shown, f"the {name} folder, its files")])
    theme: dict[str, Any] = data["theme"] if isinstance(data.get("theme"), dict) else {}
    named = [("docs_dir", data.get("docs_dir", "docs"), "the docs folder, its files", True)]
    named += [("site_dir", data.get("site_dir", "site"), "the site folder", False)]
    if theme.get("custom_dir") is not None:
        named += [("theme.custom_dir", theme["custom_dir"], "the theme's custom_dir, its files", True)]
    watch = _strings(data.get("watch"), where, "watch")
    named += [("watch", entry, "a watched folder, its files", True) for entry in watch if watched]
    named += [(f"plugins.{name}", value, "a plugin's folder, its files", True) for name, value in _plugin_paths(data)]
    for key, value, what, whole in named:
        _refuse(root, where, key, value, what, whole=whole)
    for module in _extension_modules(data.get("markdown_extensions")):
        for candidate in (module, f"{module}.py"):  # `python -m mkdocs` imports from the working folder first
            if os.path.lexists(root / candidate):
                _refuse(root, where, "markdown_extensions", candidate, "a Markdown extension, its files", whole=True)


def preview_settings(config: Path, root: Path, environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """The settings MkDocs builds from: config's over those of each file its `INHERIT:` chain names
    (each in root and reached through no link, else refused), merged as MkDocs merges them
    (mergedeep: mappings key by key, anything else the child's)."""
    chain: list[dict[str, Any]] = []
    here, where = config, Path(display_path(config))
    while True:
        chain.append(data := read_settings(here, environ))
        parent = data.pop("INHERIT", None)
        if parent is None:
            break
        if len(chain) > MAX_INHERIT:
            raise ProjectError(where, "INHERIT", f"more than {MAX_INHERIT} configurations inherited (a loop?)")
        here = _refuse(root, where, "INHERIT", parent, "an inherited configuration", whole=False, base=here.parent)
    merged: dict[str, Any] = {}
    for data in reversed(chain):
        merged = _merge(merged, data)
    return merged


def _merge(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    merged = dict(parent)
    for key, value in child.items():
        both = isinstance(merged.get(key), dict) and isinstance(value, dict)
        merged[key] = _merge(merged[key], value) if both else value
    return merged


def _refuse(
    root: Path, where: Path, key: str, value: object, what: str, *, whole: bool, base: Path | None = None
) -> Path:
    """The path a setting names (relative to base, default root), or ProjectError where it is not a
    path or lies outside root, or GlossaryError for a link at a component of it from root down
    (whole: or anywhere below it). Nothing is followed."""
    if not isinstance(value, str) or not value:
        raise ProjectError(where, key, f"must be a path, not {value!r}")
    path = Path(os.path.abspath(os.path.join(base if base is not None else root, value)))
    if not path.is_relative_to(root):
        raise ProjectError(where, key, f"{value!r} is outside the repository (the folder of {where})")
    if (shown := first_link_in(path, root) if whole else first_link(path, root)) is not None:
        raise GlossaryError([link_diagnostic(shown, what)])
    return path


def _strings(value: object, where: Path, key: str) -> list[str]:
    """A setting that lists paths (hooks, watch), or ProjectError."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ProjectError(where, key, f"must be a list of paths, not {value!r}")
    return value


def _plugin_paths(data: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(plugin, option value) for each option of a plugin that looks like a path: it has a slash or
    starts with a dot, and is no address. A plugin itself is an installed package, never a path."""
    plugins = data.get("plugins") or ()
    entries = plugins.items() if isinstance(plugins, dict) else (_entry(e) for e in plugins)
    for name, options in entries:
        for text in _texts(options):
            if "://" not in text and ("/" in text or os.sep in text or text.startswith(".")):
                yield str(name), text


def _entry(entry: object) -> tuple[object, object]:
    if isinstance(entry, dict) and len(entry) == 1:
        return next(iter(entry.items()))
    return entry, None


def _texts(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def _extension_modules(extensions: object) -> Iterator[str]:
    """The top-level module of each Markdown extension the configuration names."""
    for entry in extensions if isinstance(extensions, list) else ():
        name = next(iter(entry), None) if isinstance(entry, dict) else entry
        if isinstance(name, str) and (top := name.split(":")[0].split(".")[0]):
            yield top
