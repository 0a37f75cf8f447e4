"""The project: where a glossary's files are and what its site is called, decided in one place.

Every verb, the verifier, the preview and `render` are handed one Project (read from mkdocs.yml
by cudagloss.load.project, or the defaults where there is none) and ask it for the terms, the
templates, the measurements and the computed tables; no other module decides a folder, a root or the site's name.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudagloss.errors import UsageError

DEFAULT_SITE_NAME = "CUDA Glossary"
DEFAULT_EDIT_URI_TEMPLATE = "edit/main/{path}"
CONFIG = "mkdocs.yml"
FOLDERS = {
    "terms_dir": "terms",
    "templates_dir": "templates",
    "measurements_dir": "measurements",
    "computed_dir": "computed",
}
"""The options under `extra: glossary:` that are folders relative to the configuration's, and their defaults."""
OPTIONS = (*FOLDERS, "commit")
"""Every option under `extra: glossary:`; `commit` is the commit the site is built from (the
publish job's GLOSSARY_COMMIT), which a page's problem report names."""


class ProjectError(UsageError):
    """A mistake in the configuration: the setting it is in and what is wrong with it."""

    def __init__(self, config: Path, key: str, problem: str) -> None:
        self.config, self.key, self.problem = config, key, problem
        super().__init__(f"{config}: '{key}': {problem}")


@dataclass(frozen=True)
class Project:
    """What the renderer, the checks, the verifier and the builder configuration need to know."""

    root: Path
    """The folder of mkdocs.yml, the repository: every folder below is resolved against it."""
    site_name: str = DEFAULT_SITE_NAME
    site_url: str | None = None
    repo_url: str | None = None
    edit_uri_template: str = DEFAULT_EDIT_URI_TEMPLATE
    terms_dir: Path = Path("terms")
    templates_dir: Path = Path("templates")
    measurements_dir: Path | None = Path("measurements")
    """None for a glossary without measurements (`measurements_dir: null` or empty)."""
    computed_dir: Path | None = None
    """The tables computed by NVIDIA's tools that terms cite (`computed:`): a configuration's
    `computed_dir` (default computed/); None for a glossary without any, whose citations are not checked."""
    shared: dict[str, Any] = field(default_factory=dict)
    """The plain settings both builders read (site_description, copyright), as written."""
    theme: dict[str, Any] = field(default_factory=dict)
    extra_css: tuple[str, ...] = ()
    extra_javascript: tuple[str, ...] = ()
    markdown_extensions: tuple[Any, ...] = ()
    docs_dir: Path = Path("docs")
    commit: str | None = None
    """The commit the site is built from (hex), or None where not known."""
    link_report: Path | None = None
    """A link check's JSON report for the pages to say what it found (`render --link-report`)."""
    custom_dir: Path | None = None

    @classmethod
    def default(cls, root: Path) -> Project:
        """A project with no configuration: the default folders under root."""
        return cls(root, **{key: root / folder for key, folder in FOLDERS.items()})  # type: ignore[arg-type]

    def for_terms(self, terms: Path) -> Project:
        """This project, or, for a terms folder that is not its own (`TERMS=folder` to check
        another glossary in the repository), that glossary: its measurements and templates
        beside its terms. The repository, and so how paths are shown, stays the same."""
        if os.path.abspath(terms) == os.path.abspath(self.terms_dir):
            return self
        beside = {key: terms.parent / folder for key, folder in FOLDERS.items()} | {"terms_dir": terms}
        return dataclasses.replace(self, **beside)  # type: ignore[arg-type]

    def with_measurements(self, folder: Path | None) -> Project:
        """This project with another measurements folder (None: none at all)."""
        return dataclasses.replace(self, measurements_dir=folder)

    def edit_url(self, repo_path: str | None) -> str | None:
        """Where a reader edits the file a page comes from, or None without a repository."""
        if not self.repo_url or not repo_path:
            return None
        return f"{self.repo_url.rstrip('/')}/{self.edit_uri_template.format(path=repo_path)}"
