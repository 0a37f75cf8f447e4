"""`cudagloss collect DIR...`: merge measurement folders from several GPU nodes into measurements/.

The folders come from CI artifacts, a cluster's shared storage or a rented machine; each is
checked (cudagloss.merge.collect) and a single refused file refuses the merge. The report
says, per node and experiment, what the merge changes against the committed files: SAME,
CHANGED, FASTER, SLOWER (the rule of cudagloss.model.compare), environment drift, GPU times
that moved under an unchanged recipe (merge.undeclared), and which runs wait beside the
committed file for review (<node>.json.new). A node name names one card:
`--rename NEW=NAME` merges a folder's node NEW as NAME (a committed card's re-run that came
back under a new name); a re-run keeps the run it replaces as an earlier run (merge.runs).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cudagloss.errors import ExitCode, GlossaryError, UsageError, display_path


def run(args: argparse.Namespace) -> ExitCode:
    from cudagloss.load.catalog import load_catalog
    from cudagloss.merge.collect import apply, plan
    from cudagloss.merge.guard import merge_links
    from cudagloss.merge.undeclared import counts, summary
    from cudagloss.model.compare import RULE

    root = args.project.root
    catalog = load_catalog(root)
    if catalog is None:
        raise UsageError("no verifier/registry.py here: run collect in the glossary's repository")
    into = Path(args.into) if args.into else args.project.measurements_dir
    if into is None:
        raise UsageError("this glossary has no measurements folder to merge into: give --into")
    if linked := merge_links([Path(d) for d in args.folders], into, root):  # before any is listed or resolved
        raise GlossaryError(linked)
    if into.exists() and not into.is_dir():
        raise UsageError(f"{display_path(into)} is not a folder")
    found = plan([Path(d) for d in args.folders], into, catalog, root, renames(args.rename))
    if found.refused:
        raise GlossaryError(found.refused)  # the boundary prints each; nothing was written
    written = [] if args.dry_run else apply(found, into)
    review = [p for p in written if p.name.endswith(".json.new")]
    if args.format == "json":
        report = {
            "timing_rule": RULE,
            "dry_run": args.dry_run,
            "nodes": found.nodes,
            "undeclared": counts(rerun.undeclared for _, rerun in found.runs),
            "experiments": [rerun.to_dict() for _, rerun in found.runs],
            "review": [display_path(p) for p in review],
        }
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        for node in found.nodes:
            runs = [(i, r) for i, r in found.runs if i.measurement.node == node]
            gpu = runs[0][0].measurement.provenance.get("gpu_name", "unknown GPU")
            named = next((new for new, old in renames(args.rename).items() if old == node), None)
            came = f"from {display_path(runs[0][0].folder)}" + (f" as node {named}" if named else "")
            print(f"node {node} ({gpu}), {came}: {len(runs)} experiments")
            for incoming, rerun in runs:
                print(f"  {incoming.measurement.experiment}")
                print("\n".join(rerun.lines()))
        print(f"timings compared by {RULE}")
        if moved := summary(rerun.undeclared for _, rerun in found.runs):
            print(moved)
        verb = "would merge" if args.dry_run else "merged"
        print(f"{verb} {len(found.runs)} runs from {len(found.nodes)} nodes into {display_path(into)}", file=sys.stderr)
        for path in review:
            print(f"waits for review (a discrete value changed): {display_path(path)}", file=sys.stderr)
    return ExitCode.OK


def rename(text: str) -> tuple[str, str]:
    """--rename NEW=NAME: two node names."""
    from cudagloss.model.measurement_rules import is_node_name

    new, equals, name = text.partition("=")
    if not (equals and is_node_name(new) and is_node_name(name)):
        raise argparse.ArgumentTypeError(f"{text!r} is not NEW=NAME, two node names like h200-b=h200-a")
    return new, name


def renames(pairs: list[tuple[str, str]] | None) -> dict[str, str]:
    """The --rename options as NEW -> NAME; a NEW named twice is a usage error."""
    found: dict[str, str] = {}
    for new, name in pairs or []:
        if found.setdefault(new, name) != name:
            raise UsageError(f"--rename names node '{new}' twice ({found[new]}, {name})")
    return found


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    collect = sub.add_parser("collect", help="merge measurement folders from several GPU nodes into measurements/")
    collect.add_argument("folders", nargs="+", help="each node's measurements folder, as make verify writes it")
    collect.add_argument("--into", help="the folder to merge into (default: the project's, measurements/)")
    collect.add_argument("--format", choices=("text", "json"), default="text", help="the report's format")
    collect.add_argument("--dry-run", action="store_true", help="check and report, write nothing")
    collect.add_argument(
        "--rename",
        action="append",
        type=rename,
        metavar="NEW=NAME",
        help="merge the runs a folder names NEW as node NAME: a committed card's re-run under a new name (repeatable)",
    )
    collect.set_defaults(run=run)
