"""The plain docs tree: what any builder needs to build the site, with no hooks.

`cudagloss render --out DIR` writes DIR/docs (every generated page as Markdown with a front
matter, the static files, the raw measurement JSON and the files published at the root),
DIR/overrides (the theme overrides) and DIR/mkdocs.yml, a configuration that uses only
what MkDocs + Material and Zensical both read. The live preview (cudagloss.mkdocs) hands
MkDocs the same page texts, so both paths build the same pages.

Two things a page needs beyond Markdown travel in its front matter, read by overrides/:
`json_ld` (the page's JSON-LD, already safe inside <script>, put into <head>) and
`edit_url` (the term file a reader edits, shown as the page's edit button).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from cudagloss.errors import GlossaryError
from cudagloss.files.inside import first_link_in, link_diagnostic
from cudagloss.model.project import CONFIG, Project
from cudagloss.site.output import GeneratedPage, SiteContent
from cudagloss.site.sanitise import NAME as SANITISER

DOCS = "docs"
OVERRIDES = "overrides"
NOT_IN_NAV = ("/terms/", "/measurements/*.md", "!/measurements/index.md")
"""Pages reached from the home, section and measurement pages, never from the sidebar."""
_HEADER = (
    "# Written by `cudagloss render`; every run replaces this folder. Edit the repository's\n"
    "# mkdocs.yml, terms/ and templates/ instead. MkDocs + Material and Zensical both build it.\n"
)


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Multi-line strings as literal blocks, as a person would write them. libyaml's emitter
    where PyYAML has it: the Python one cost 0.7 ms a page, as much as rendering the page."""


_Dumper.add_representer(
    str,
    lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None),
)


def _dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=1 << 30, default_flow_style=False)


def page_text(page: GeneratedPage, settings: Project) -> str:
    """A page's Markdown with its front matter, as both the preview and the tree hand it over."""
    meta = _front_matter(page.json_ld, settings.edit_url(page.edit_uri))
    if not meta:
        return page.markdown
    if page.markdown.startswith("---\n") and (end := page.markdown.find("\n---\n", 3)) != -1:
        # the template wrote a front matter of its own (search boost, say): ours joins it
        return f"{page.markdown[: end + 1]}{meta}{page.markdown[end + 1 :]}"
    return f"---\n{meta}---\n\n{page.markdown}"


@functools.lru_cache(maxsize=1 << 14)
def _front_matter(json_ld: str, edit_url: str | None) -> str:
    """Our front matter's lines (YAML, '' for none). Memoised: `mkdocs serve` hands MkDocs every
    page after each edit, and dumping YAML for each cost as much as rendering them all."""
    meta = {"json_ld": json_ld} if json_ld else {}
    if edit_url:
        meta["edit_url"] = edit_url
    return _dump(meta) if meta else ""


def with_sanitiser(extensions: tuple[Any, ...]) -> list[Any]:
    """The Markdown extensions, with the page sanitiser (cudagloss.site.sanitise) last."""
    named = [e for e in extensions if (next(iter(e)) if isinstance(e, dict) else e) != SANITISER]
    return [*named, SANITISER]


def builder_config(settings: Project, nav: list[dict[str, Any]]) -> str:
    """The tree's mkdocs.yml: the site's settings, its navigation (sections, not terms), the
    theme overrides, and the extensions, the sanitiser among them."""
    config: dict[str, Any] = {"site_name": settings.site_name, **settings.shared}
    if settings.site_url:
        config["site_url"] = settings.site_url
    if settings.repo_url:
        config["repo_url"] = settings.repo_url
    config["edit_uri"] = ""  # edit links come from each page's front matter (overrides/partials/actions.html)
    config["docs_dir"] = DOCS
    config["theme"] = {**settings.theme, **({"custom_dir": OVERRIDES} if settings.custom_dir else {})}
    if settings.extra_css:
        config["extra_css"] = list(settings.extra_css)
    if settings.extra_javascript:
        config["extra_javascript"] = list(settings.extra_javascript)
    config["markdown_extensions"] = with_sanitiser(settings.markdown_extensions)
    config["plugins"] = ["search"]
    config["nav"] = nav
    config["not_in_nav"] = "\n".join(NOT_IN_NAV) + "\n"
    return _HEADER + _dump(config)


def _copied(folder: Path, under: str, root: Path) -> Iterator[tuple[str, bytes]]:
    """The regular files of a folder of the repository; a link in it, or at it or above it up
    to root, was refused before anything was read (load.project.refuse_folder_links), and is
    refused again here, should one have been made since."""
    if (shown := first_link_in(folder, root)) is not None:
        raise GlossaryError([link_diagnostic(shown, "a file the site copies")])
    for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
        if path.is_file():
            yield f"{under}/{path.relative_to(folder).as_posix()}", path.read_bytes()


def tree_files(content: SiteContent, settings: Project) -> Iterator[tuple[str, bytes]]:
    """Every file of the tree, as (path inside it, bytes)."""
    yield CONFIG, builder_config(settings, content.nav).encode()
    generated = {page.src_uri for page in content.pages} | {f.src_uri for f in (*content.files, *content.exports)}
    for path, data in _copied(settings.docs_dir, DOCS, settings.root):
        if path.removeprefix(f"{DOCS}/") not in generated:  # a generated page wins over a stray copy
            yield path, data
    if settings.custom_dir is not None:
        yield from _copied(settings.custom_dir, OVERRIDES, settings.root)
    for page in content.pages:
        yield f"{DOCS}/{page.src_uri}", page_text(page, settings).encode()
    for file in (*content.files, *content.exports):
        yield f"{DOCS}/{file.src_uri}", file.content.encode()
