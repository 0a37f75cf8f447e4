"""`cudagloss render --out DIR`: the site as a plain docs tree that any builder builds.

The tree (cudagloss.site.tree) holds every page as Markdown, the static files and a
generated mkdocs.yml that MkDocs + Material and Zensical both read, so the glossary does not
depend on MkDocs' hooks to be built. The settings come from the repository's mkdocs.yml
(the live preview's configuration); --site-url and --repo-url override its two variables.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from cudagloss.errors import ExitCode, UsageError, display_path
from cudagloss.files.inside import refuse_links
from cudagloss.model.project import CONFIG
from cudagloss.model.urls import url_problem


def run(args: argparse.Namespace) -> ExitCode:
    from cudagloss.files.folder import replace_folder
    from cudagloss.load.preview import refuse_preview_reads
    from cudagloss.load.project import require_folders
    from cudagloss.site.build import build_site_content
    from cudagloss.site.tree import tree_files

    for target in (Path(args.out), *map(Path, args.site_dir)):  # before anything is read or written
        refuse_links(target)
    config = Path(args.config)
    refuse_preview_reads(config, watched=False)  # hooks, INHERIT, site_dir...: the preview's rule, in make build too
    settings = args.project
    settings = dataclasses.replace(
        settings,
        site_url=settings.site_url if args.site_url is None else args.site_url or None,
        repo_url=settings.repo_url if args.repo_url is None else args.repo_url or None,
        link_report=Path(args.link_report) if args.link_report else None,
    )
    for name, address in (("site URL", settings.site_url), ("repository URL", settings.repo_url)):
        if address and (problem := url_problem(address)):
            raise UsageError(f"the {name} {address!r} is not one a reader may be sent to: {problem}")
    require_folders(settings, config)
    content, corpus = build_site_content(settings)
    if args.require_checked:
        from cudagloss.check.sources_checked import never_checked
        from cudagloss.errors import GlossaryError

        if unchecked := list(never_checked(corpus)):
            raise GlossaryError(unchecked)
    if corpus.warnings:
        from cudagloss.commands.check import print_diagnostics

        print_diagnostics(corpus.warnings, "text")
        if args.strict:
            return ExitCode.FAILED
    out = Path(args.out)
    count = replace_folder(out, tree_files(content, settings))
    print(f"wrote {count} files into {display_path(out)}: build it with `mkdocs build` or `zensical build` there")
    return ExitCode.OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    render = sub.add_parser(
        "render", help="write the site as a plain docs tree (pages, static files, mkdocs.yml) for any builder"
    )
    render.add_argument("--out", default="build/site-tree", help="folder to write (default: build/site-tree)")
    render.add_argument("--config", default=CONFIG, help=f"the site's settings (default: {CONFIG})")
    render.add_argument(
        "--site-dir",
        action="append",
        default=[],
        help="a folder a builder writes next (make build: site): refused, like --out, where a link leads there",
    )
    render.add_argument("--site-url", help="the published address (default: site_url in the config)")
    render.add_argument("--repo-url", help="the repository's address, for edit links (default: repo_url)")
    render.add_argument("--strict", action="store_true", help="write nothing when there are warnings")
    render.add_argument(
        "--link-report",
        metavar="FILE",
        help="a `cudagloss links --format json` report: pages say what it found (unreachable, not checkable)",
    )
    render.add_argument(
        "--require-checked",
        action="store_true",
        help="write nothing while a source was never found reachable (the publish job; off by default)",
    )
    render.set_defaults(run=run)
