"""The command line: `cudagloss check terms/` and `cudagloss schema`.

`check` reads the terms with the measurements they cite (measurements/ beside the terms
folder) and the verifier's catalog (verifier/ in the working directory), as the site does.

Author mistakes print as `path:line:col: message` with a hint, every one of them, and
exit with status 1; nothing here prints a traceback for a user's mistake.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .atomic import write_text_atomic
from .diagnostics import GlossaryError, report
from .schema import SCHEMAS, schema_text
from .site import load_glossary

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


def _check(args: argparse.Namespace) -> int:
    terms = Path(args.terms)
    measurements = Path(args.measurements) if args.measurements else terms.parent / "measurements"
    try:
        corpus = load_glossary(terms, None if args.no_measurements else measurements, repo_root=Path.cwd())
    except GlossaryError as exc:
        print(exc.report(), file=sys.stderr)
        return EXIT_ERRORS
    if corpus.warnings:
        print(report(corpus.warnings), file=sys.stderr)
        if args.strict:
            return EXIT_ERRORS
    if not args.quiet:
        print(f"{args.terms}: {len(corpus)} terms in {len(corpus.sections)} sections, no errors")
    return EXIT_OK


def _schema(args: argparse.Namespace) -> int:
    out = Path(args.out)
    stale = []
    for name, (model, title) in SCHEMAS.items():
        path, text = out / name, schema_text(model, title)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        if args.check:
            stale.append(str(path))
        else:
            out.mkdir(parents=True, exist_ok=True)
            write_text_atomic(path, text)
            print(f"wrote {path}")
    if stale:
        print(f"{', '.join(stale)}: out of date with the model; run 'make schema'", file=sys.stderr)
        return EXIT_ERRORS
    return EXIT_OK


def _links(args: argparse.Namespace) -> int:
    from .linkrun import main as links_main

    return links_main(args.rest)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cudagloss", description="Tools for the CUDA glossary.")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="check every term file of a folder and report all mistakes")
    check.add_argument("terms", nargs="?", default="terms", help="the terms folder (default: terms)")
    check.add_argument("-q", "--quiet", action="store_true", help="print nothing when there is no error")
    check.add_argument(
        "--measurements", help="the measurements folder the terms cite (default: measurements/ beside the terms)"
    )
    check.add_argument("--no-measurements", action="store_true", help="check the terms without their measurements")
    check.add_argument("--strict", action="store_true", help="fail on warnings too (e.g. stale measurements)")
    check.set_defaults(run=_check)
    schema = sub.add_parser("schema", help="write the JSON Schemas generated from the model")
    schema.add_argument("--out", default="schema", help="folder to write into (default: schema)")
    schema.add_argument("--check", action="store_true", help="only report whether the files are up to date")
    schema.set_defaults(run=_schema)
    links = sub.add_parser("links", help="check every source URL and stamp the terms (see `links -h`)", add_help=False)
    links.add_argument("rest", nargs=argparse.REMAINDER)
    links.set_defaults(run=_links)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
