"""The command line: `cudagloss check terms/`, `new`, `export`, `schema` and `links`.

`check` reads the terms with the measurements they cite (measurements/ beside the terms
folder) and the verifier's catalog (verifier/ in the working directory), as the site does.

Author mistakes print as `path:line:col: message` with a hint, every one of them, and
exit with status 1; nothing here prints a traceback for a user's mistake. A file that
cannot be written (disk full, no permission, read-only file system) is one line and
exit status 5 (atomic.EXIT_WRITE).
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from cudagloss.errors import Diagnostic, GlossaryError, count, did_you_mean, display_path, report
from cudagloss.files.atomic import EXIT_WRITE, WriteFailed, write_text_atomic
from cudagloss.load.glossary import load_glossary
from cudagloss.model.schema import SCHEMAS, schema_text

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


def _escape(text: str, *, prop: bool = False) -> str:
    """GitHub's workflow-command escaping (properties also escape ':' and ',')."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def github_annotation(d: Diagnostic) -> str:
    """One diagnostic as a GitHub Actions annotation, shown on the line of the pull request."""
    kind = "warning" if d.warning else "error"
    where = f"file={_escape(d.path, prop=True)},line={d.line},col={d.col}"
    message = f"{d.message}\nhint: {d.hint}" if d.hint else d.message
    return f"::{kind} {where},title=cudagloss check::{_escape(message)}"


def _print_diagnostics(diagnostics: list[Diagnostic], form: str) -> None:
    if form == "github":
        for d in sorted(diagnostics):
            print(github_annotation(d))
        print(count(diagnostics), file=sys.stderr)
    else:
        print(report(diagnostics), file=sys.stderr)


def _check(args: argparse.Namespace) -> int:
    terms = Path(args.terms)
    measurements = Path(args.measurements) if args.measurements else terms.parent / "measurements"
    try:
        corpus = load_glossary(terms, None if args.no_measurements else measurements, repo_root=Path.cwd())
    except GlossaryError as exc:
        _print_diagnostics(exc.diagnostics, args.format)
        return EXIT_ERRORS
    if corpus.warnings:
        _print_diagnostics(corpus.warnings, args.format)
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


NEW_FROM_ENV = ("CUDAGLOSS_NEW_TERM", "CUDAGLOSS_NEW_SECTION", "CUDAGLOSS_NEW_TERMS")
"""Where `new --from-env` finds the name, section and folder: `make new` hands them over in
the environment, so a name is never text that a shell (or make) could run."""


def _new(args: argparse.Namespace) -> int:
    from cudagloss.commands.new import new_term

    name, section, terms = args.name, args.section, args.terms
    if args.from_env:
        if name is not None:
            print("cudagloss new: give the name or --from-env, not both", file=sys.stderr)
            return EXIT_USAGE
        name = os.environ.get(NEW_FROM_ENV[0])
        section = os.environ.get(NEW_FROM_ENV[1]) or section
        terms = os.environ.get(NEW_FROM_ENV[2]) or terms
    if name is None:
        print('usage: cudagloss new "Fat binary" [--section SLUG] (or --from-env)', file=sys.stderr)
        return EXIT_USAGE
    try:
        path = new_term(name, Path(terms), section=section, slug=args.slug)
    except GlossaryError as exc:
        print(exc.report(), file=sys.stderr)
        return EXIT_ERRORS
    except WriteFailed as exc:
        print(f"cudagloss new: {exc}", file=sys.stderr)
        return EXIT_WRITE
    print(f"wrote {display_path(path)}: fill it in, then run 'make check' and 'make serve'")
    return EXIT_OK


def _export(args: argparse.Namespace) -> int:
    from cudagloss.site.export import export_files

    terms = Path(args.terms)
    try:
        files = export_files(terms, terms.parent / "measurements", repo_root=Path.cwd(), site_url=args.site_url)
    except GlossaryError as exc:
        print(exc.report(), file=sys.stderr)
        return EXIT_ERRORS
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for exported in files:
        write_text_atomic(out / exported.src_uri, exported.content)
        print(f"wrote {display_path(out / exported.src_uri)}")
    return EXIT_OK


def _values(args: argparse.Namespace) -> int:
    """What a body can cite: experiments, and each one's results with their values."""
    from cudagloss.load.catalog import load_catalog
    from cudagloss.load.measurements import load_measurements
    from cudagloss.model.measurements import format_value, verify_command

    root = Path.cwd()
    measurements, diags = load_measurements(Path(args.measurements), root, load_catalog(root))
    if [d for d in diags if not d.warning]:
        print(report(diags), file=sys.stderr)
        return EXIT_ERRORS
    records = [r for r in measurements if args.experiment in (None, r.id)]
    if args.experiment and not records:
        known = [r.id for r in measurements]
        print(f"no experiment '{args.experiment}'{did_you_mean(args.experiment, known)}", file=sys.stderr)
        return EXIT_ERRORS
    for record in records:
        print(f"{record.id}: {record.purpose}")
        if not record.measured:
            print(f"  not measured yet: run `{verify_command(record.id)}` on a GPU node")
        for name in record.result_names():
            shown = " / ".join(f"{format_value(result)} ({run.node})" for run, result in record.values(name))
            print(f'  {{{{ measured("{record.id}", "{name}") }}}}  {shown}')
    return EXIT_OK


def _links(args: argparse.Namespace) -> int:
    from cudagloss.links.run import main as links_main

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
    check.add_argument(
        "--format",
        choices=("text", "github"),
        default="github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text",
        help="text (path:line:col: message) or github (annotations on the pull request; "
        "the default inside GitHub Actions)",
    )
    check.set_defaults(run=_check)
    new = sub.add_parser("new", help='write terms/<slug>.yaml for a new term: cudagloss new "Fat binary"')
    new.add_argument("name", nargs="?", help="the term as readers know it")
    new.add_argument(
        "--from-env", action="store_true", help=f"take the name, section and folder from {', '.join(NEW_FROM_ENV)}"
    )
    new.add_argument("--terms", default="terms", help="the terms folder (default: terms)")
    new.add_argument("--section", help="its section's slug (default: the first in _sections.yaml)")
    new.add_argument("--slug", help="the file name without .yaml (default: made from the name)")
    new.set_defaults(run=_new)
    values = sub.add_parser("values", help="list the measured values a term body can cite, with how to cite each")
    values.add_argument("experiment", nargs="?", help="one experiment's id (default: all)")
    values.add_argument("--measurements", default="measurements", help="the measurements folder")
    values.set_defaults(run=_values)
    export = sub.add_parser("export", help="write the whole glossary as one Markdown file and an llms.txt")
    export.add_argument("terms", nargs="?", default="terms", help="the terms folder (default: terms)")
    export.add_argument("--out", default="export", help="folder to write into (default: export)")
    export.add_argument("--site-url", help="the published site's address, for absolute links")
    export.set_defaults(run=_export)
    schema = sub.add_parser("schema", help="write the JSON Schemas generated from the model")
    schema.add_argument("--out", default="schema", help="folder to write into (default: schema)")
    schema.add_argument("--check", action="store_true", help="only report whether the files are up to date")
    schema.set_defaults(run=_schema)
    # listed for `cudagloss -h` only: main hands everything after "links" to linkrun's own parser
    sub.add_parser("links", help="check every source URL and stamp the terms (see `links -h`)", add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["links"]:  # linkrun parses the rest itself: `links -h`, options before the folder
        args = argparse.Namespace(command="links", rest=argv[1:], run=_links)
    else:
        args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `cudagloss values | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:  # `export` or `schema` on a full disk: one line, never a traceback
        if not isinstance(exc, WriteFailed) and exc.errno not in _NO_ROOM_OR_RIGHT:
            raise
        shown = exc if isinstance(exc, WriteFailed) else f"cannot write {exc.filename}: {exc.strerror}"
        print(f"cudagloss {args.command}: {shown}", file=sys.stderr)
        return EXIT_WRITE


_NO_ROOM_OR_RIGHT = (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS)


if __name__ == "__main__":
    sys.exit(main())
