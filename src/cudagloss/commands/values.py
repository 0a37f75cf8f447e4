"""`cudagloss values [experiment]`: what a term body can cite, and how to cite each value."""

from __future__ import annotations

import argparse
import sys

from cudagloss.errors import ExitCode, did_you_mean
from cudagloss.model.display import format_value, verify_command


def run(args: argparse.Namespace) -> ExitCode:
    """Each experiment with its purpose, then each result's citation and its values by node."""
    from cudagloss.load.measurements import project_measurements  # the measurement files, for this verb only

    measurements = project_measurements(args.project, args.measurements)
    records = [r for r in measurements if args.experiment in (None, r.id)]
    if args.experiment and not records:
        known = [r.id for r in measurements]
        print(f"no experiment '{args.experiment}'{did_you_mean(args.experiment, known)}", file=sys.stderr)
        return ExitCode.FAILED
    for record in records:
        print(f"{record.id}: {record.purpose}")
        if not record.measured:
            print(f"  not measured yet: run `{verify_command(record.id)}` on a GPU node")
        for name in record.result_names():
            shown = " / ".join(f"{format_value(result)} ({run.node})" for run, result in record.values(name))
            print(f'  {{{{ measured("{record.id}", "{name}") }}}}  {shown}')
    return ExitCode.OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    values = sub.add_parser("values", help="list the measured values a term body can cite, with how to cite each")
    values.add_argument("experiment", nargs="?", help="one experiment's id (default: all)")
    values.add_argument("--measurements", help="the measurements folder (default: the project's, measurements/)")
    values.set_defaults(run=run)
