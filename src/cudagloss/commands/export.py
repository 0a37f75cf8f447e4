"""`cudagloss export terms/`: the whole glossary as one Markdown file and an llms.txt."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from cudagloss.errors import ExitCode, UsageError, display_path
from cudagloss.files.atomic import write_text_atomic
from cudagloss.files.inside import refuse_links
from cudagloss.load.project import refuse_folder_links


def run(args: argparse.Namespace) -> ExitCode:
    from cudagloss.site.export import export_files  # the site stage (Jinja2) only for this verb

    project = args.project.for_terms(Path(args.terms)) if args.terms else args.project
    if args.site_url is not None:
        project = dataclasses.replace(project, site_url=args.site_url or None)
    refuse_folder_links(project)  # terms and templates: never read through a committed link
    if not project.templates_dir.is_dir():
        beside = display_path(project.terms_dir)
        raise UsageError(f"no templates folder beside {beside} (looked for {display_path(project.templates_dir)})")
    files = export_files(project)
    out = Path(args.out)
    for exported in files:  # every target checked before the first is written
        refuse_links(out / exported.src_uri)
    out.mkdir(parents=True, exist_ok=True)
    for exported in files:
        write_text_atomic(out / exported.src_uri, exported.content)
        print(f"wrote {display_path(out / exported.src_uri)}")
    return ExitCode.OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser("export", help="write the whole glossary as one Markdown file and an llms.txt")
    export.add_argument("terms", nargs="?", help="the terms folder (default: the project's, terms/)")
    export.add_argument("--out", default="export", help="folder to write into (default: export)")
    export.add_argument(
        "--site-url", help="the published site's address, for absolute links (default: site_url in mkdocs.yml)"
    )
    export.set_defaults(run=run)
