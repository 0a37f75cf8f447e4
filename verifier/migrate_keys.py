"""Write the recipe and summary keys into measurement files that are current by their code hash.

    PYTHONPATH=src:. python3 -m verifier.migrate_keys [measurements] [--dry-run]

Files older than format 4 go stale by their code hash: the experiment's module and every line
of the plumbing it runs through. A file whose code hash matches the code as it is now was made
by the recipe and the summary the code has now, so both keys can be written into it on the CPU
(issue 40: migration without a GPU). Each such file becomes format 4 and nothing else in it
changes: a file whose text would change otherwise (it was not written by `make verify` as
it is) is left alone and named. Files that are stale, failed runs included, are left as they
are: a GPU run brings them back. Writes are atomic, never through a link.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from cudagloss.errors import GlossaryError
from cudagloss.files.atomic import write_text_atomic
from cudagloss.files.inside import refuse_links, refuse_read_links
from cudagloss.model.measurement import ExperimentInfo, parse_measurement, read_measurement_text
from verifier.registry import catalog


def migrate(folder: Path, infos: dict[str, ExperimentInfo], write: bool) -> tuple[list[str], list[str], list[str]]:
    """(written, left stale, left because their text is not make verify's), as paths shown."""
    refuse_read_links(folder, what="the measurements folder")
    written, stale, odd = [], [], []
    for path in sorted(folder.glob("*/*.json")):
        shown = path.as_posix()
        text = read_measurement_text(path, shown)
        m = parse_measurement(text, shown)
        info = infos.get(m.experiment)
        if m.recipe or info is None:
            continue
        if m.code_hash != info.code_hash:
            stale.append(shown)
            continue
        if m.to_json() != text:
            odd.append(shown)
            continue
        if write:
            refuse_links(path)
            keyed = dataclasses.replace(m, recipe=info.recipe, summary=info.summary)
            write_text_atomic(path, keyed.to_json())
        written.append(shown)
    return written, stale, odd


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m verifier.migrate_keys", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("folder", nargs="?", default="measurements", type=Path)
    parser.add_argument("--dry-run", action="store_true", help="say what would be written, write nothing")
    args = parser.parse_args(argv)
    try:
        written, stale, odd = migrate(args.folder, {i.id: i for i in catalog()}, not args.dry_run)
    except GlossaryError as exc:
        for d in exc.diagnostics:
            print(d.format(), file=sys.stderr)
        return 2
    for shown in odd:
        print(f"{shown}: left alone: its text is not what make verify writes for it", file=sys.stderr)
    verb = "would write" if args.dry_run else "wrote"
    print(
        f"{verb} the keys into {len(written)} files; {len(stale)} stale files left for a GPU run; {len(odd)} left alone"
    )
    return 1 if odd else 0


if __name__ == "__main__":
    raise SystemExit(main())
