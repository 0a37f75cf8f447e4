"""`cudagloss schema`: the JSON Schemas generated from the model, written or (`--check`) compared."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cudagloss.errors import ExitCode
from cudagloss.files.atomic import write_text_atomic
from cudagloss.files.inside import refuse_links, refuse_read_links
from cudagloss.model.schema import SCHEMAS, schema_text


def run(args: argparse.Namespace) -> ExitCode:
    out = Path(args.out)
    stale = []
    for name in SCHEMAS:  # a committed link (the file or a folder above it): never read nor written through
        refuse_read_links(out / name, None, "the schema") if args.check else refuse_links(out / name)
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
        return ExitCode.FAILED
    return ExitCode.OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    schema = sub.add_parser("schema", help="write the JSON Schemas generated from the model")
    schema.add_argument("--out", default="schema", help="folder to write into (default: schema)")
    schema.add_argument("--check", action="store_true", help="only report whether the files are up to date")
    schema.set_defaults(run=run)
