"""The templates' Jinja environment: how every printed value is escaped, and the filters.

The templates are trusted designer files; every plain string they print passes
`escape.text` (inert as Markdown and as HTML), and what is already Markdown comes in as
Markup. What `escape.text` makes of plain text is readable Markdown, so one environment
serves the pages and the exports alike.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import jinja2
from jinja2.loaders import split_template_path
from markupsafe import Markup
from markupsafe import escape as markupsafe_escape

from cudagloss.errors import GlossaryError, display_path
from cudagloss.files.inside import read_link_mistake
from cudagloss.model.term import PENDING
from cudagloss.site import escape
from cudagloss.site.set_apart import one_line, set_apart
from cudagloss.text.markdown import neutralize_html

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def isodate(value: object) -> str:
    """A date as YYYY-MM-DD, or 'pending' for one not given yet."""
    return value.isoformat() if isinstance(value, dt.date) else PENDING


def href(path: str) -> Markup:
    """A link we computed between pages of the site, percent-encoded beyond doubt."""
    return Markup(quote(path, safe="/#.-_~%"))


def author_markdown(text: str) -> Markup:
    """Author Markdown (a definition, a note) as a page prints it: raw HTML shown as text."""
    return Markup(neutralize_html(text))


def _finalize(value: object) -> object:
    """Every value a template prints: ready Markdown (Markup) as it is, anything else as
    plain text made inert by the one escaping rule."""
    if value is None or hasattr(value, "__html__"):
        return value
    return escape.text(value)


def _join(items: object, separator: str = ", ") -> Markup:
    """Jinja's join, with each item through the same rule as a printed value."""
    return Markup(separator).join(
        item if hasattr(item, "__html__") else escape.text(item)
        for item in items  # type: ignore[attr-defined]
    )


class _PlainTemplates(jinja2.FileSystemLoader):
    """Templates read only as plain files of the folder: a committed link as a template (or as a
    folder under the templates folder) is refused with one line (read_link_mistake), never
    followed; the templates folder itself is guarded before (load.project.refuse_folder_links)."""

    def __init__(self, folder: Path) -> None:
        super().__init__(str(folder))
        self.folder = folder

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        path = self.folder.joinpath(*split_template_path(template))  # TemplateNotFound for '..'
        if (mistake := read_link_mistake(path, self.folder, "a template")) is not None:
            shown = f"{display_path(self.folder)}/{mistake.path}"
            raise GlossaryError([dataclasses.replace(mistake, path=shown)])
        return super().get_source(environment, template)


def make_environment(templates_dir: Path, bytecode: jinja2.BytecodeCache | None = None) -> jinja2.Environment:
    """Our templates' environment; bytecode, the render state's compiled templates."""
    env = jinja2.Environment(
        loader=_PlainTemplates(templates_dir),
        autoescape=True,
        finalize=_finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        bytecode_cache=bytecode,
    )
    env.filters["code"] = escape.code
    env.filters["isodate"] = isodate
    env.filters["cell"] = escape.text
    env.filters["html"] = escape.html_text
    env.filters["linktitle"] = escape.link_title
    env.filters["join"] = _join
    env.filters["set_apart"] = lambda body: Markup(set_apart(str(markupsafe_escape(body))))  # stays as safe as it came
    env.filters["one_line"] = lambda text: Markup(one_line(str(markupsafe_escape(text))))  # so does this
    return env


def render(env: jinja2.Environment, template: str, view: DataclassInstance) -> str:
    """A template rendered with a view's fields as its names (the fields themselves, not
    copies as `dataclasses.asdict` makes: nested views stay views)."""
    context = {f.name: getattr(view, f.name) for f in dataclasses.fields(view)}
    return env.get_template(template).render(context)
