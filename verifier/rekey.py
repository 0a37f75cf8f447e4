"""Re-key the committed measurements whose keys moved by a change of rule or of plumbing alone.

Every procedure module (a verifier module an experiment's `run()` reaches) now declares a
`VERSION` (issue 40). Before, none did, and the recipe key named each one with `VERSION = None`;
declaring `VERSION = 1` moves every experiment's recipe key although nothing that reaches the GPU
changed, so every committed file would read as stale. This migration rewrites a file's `recipe`
to the current key where, and only where, it equals the key the current code gives under the old
rule (every procedure's VERSION taken as None): the same kernels, run constants and METHOD.

With `--summary-since REV` it rewrites a file's `summary` too where that is the key the summary
modules' text at REV gives and nothing the summary reaches in them has changed since
(verifier/rekey_summary.py): moving profile.py's command-line entry out moved coalescing's.

Every other field keeps its meaning (the file is parsed and written back by the model,
atomically). A file made by another recipe or summary, or one that cannot be read (a link, not
a measurement), is reported and left alone: only a GPU run makes it current.

    PYTHONPATH=src:. python3 -m verifier.rekey [--summary-since REV] [--measurements DIR] [--dry-run]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType

from cudagloss.files.atomic import write_text_atomic
from cudagloss.model.measurement import MeasurementError, parse_measurement, read_measurement_text
from verifier.recipe import ROOT, _key, recipe_key, recipe_payload, summary_key
from verifier.registry import EXPERIMENTS
from verifier.rekey_summary import OldText, old_summary_key


@dataclass
class Tally:
    """What became of one experiment's files."""

    rekeyed: int = 0
    current: int = 0
    left: list[str] = field(default_factory=list)
    """Each file left alone, with why."""


def old_rule_key(module: ModuleType) -> str:
    """The recipe key the code as it is now gives when no procedure module declares a VERSION."""
    payload = recipe_payload(module)
    payload["procedures"] = dict.fromkeys(payload["procedures"])
    return _key(payload)


def at_revision(revision: str) -> OldText:
    """A file's text at revision of this repository (git show), None where it had none."""

    def read(path: str) -> str | None:
        done = subprocess.run(["git", "show", f"{revision}:{path}"], cwd=ROOT, capture_output=True, check=False)
        return done.stdout.decode() if done.returncode == 0 else None

    return read


def rekey(
    folder: Path, experiments: Iterable[ModuleType], *, since: OldText | None = None, write: bool = True
) -> dict[str, Tally]:
    """Re-key every <experiment>/*.json under folder (latest files and earlier runs alike) that
    the old rule (and, given since, the summary code then) made; by experiment folder."""
    modules = {str(m.ID): m for m in experiments}
    keys: dict[str, tuple[str, str, str, str | None]] = {}
    found: dict[str, Tally] = {}
    for path in sorted(folder.glob("*/*.json")):
        tally = found.setdefault(path.parent.name, Tally())
        shown = path.relative_to(folder).as_posix()
        try:
            measurement = parse_measurement(read_measurement_text(path, shown), shown)
        except MeasurementError as exc:
            tally.left.append(f"{shown}: not read ({str(exc).splitlines()[0]})")
            continue
        module = modules.get(measurement.experiment)
        if module is None or measurement.experiment != path.parent.name:
            tally.left.append(f"{shown}: no experiment '{measurement.experiment}' in this folder's name")
            continue
        if measurement.experiment not in keys:
            old_summary = old_summary_key(module, since) if since else None
            keys[measurement.experiment] = (recipe_key(module), old_rule_key(module), summary_key(module), old_summary)
        recipe, old_recipe, summary, old_summary = keys[measurement.experiment]
        if measurement.recipe not in (recipe, old_recipe):
            tally.left.append(f"{shown}: made by another recipe ({measurement.recipe or 'none'}); re-run it on a GPU")
        elif measurement.summary not in (summary, old_summary):
            tally.left.append(f"{shown}: made by another summary ({measurement.summary or 'none'})")
        elif (measurement.recipe, measurement.summary) == (recipe, summary):
            tally.current += 1
        else:
            if write:
                write_text_atomic(path, replace(measurement, recipe=recipe, summary=summary).to_json())
            tally.rekeyed += 1
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m verifier.rekey", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--measurements", type=Path, default=ROOT / "measurements", help="the folder to re-key")
    parser.add_argument("--summary-since", metavar="REV", help="re-key summaries made by the code at this git revision")
    parser.add_argument("--dry-run", action="store_true", help="count, write nothing")
    args = parser.parse_args(argv)
    since = at_revision(args.summary_since) if args.summary_since else None
    found = rekey(args.measurements, EXPERIMENTS, since=since, write=not args.dry_run)
    verb = "would re-key" if args.dry_run else "re-keyed"
    for experiment, tally in found.items():
        print(f"{experiment}: {verb} {tally.rekeyed}, already current {tally.current}, left {len(tally.left)}")
        for why in tally.left:
            print(f"  left alone: {why}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
