"""`make verify`: run the experiments on this GPU node and write measurements/.

    python3 -m verifier --list
    python3 -m verifier [--experiment ID | --all] [--repeats N] [--out measurements] [--format json]

By default it runs the experiments that the terms cite. Every process it starts has
CUDA_CACHE_PATH set to a private or fresh folder: the user's own JIT cache is never used.
Each new result is compared with the node's committed file before it is replaced, and the
report printed (verifier/rerun.py; --format json prints it as JSON).

Exit codes: 0 all experiments passed their gates; 1 some failed (their failure is
written beside the last good file), changed a discrete result or broke a term's claim (the new
file is written beside the committed one, <node>.json.new, for review); 2 usage, terms that
cannot be read to tell which experiments they cite, or a node name committed for another card
(or this card committed under another name: cudagloss.merge.identity); 3 no GPU (or no cuda-python) here; 5 a file
(or the output) that could not be written: disk full, read-only file system, no permission;
130 Ctrl-C. Each is one line, never a traceback: the error boundary is the command line's own
(cudagloss.boundary).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cudagloss.boundary import guarded
from cudagloss.errors import ExitCode, GlossaryError, UsageError, complain
from cudagloss.files.inside import read_links_in, refuse_read_links
from cudagloss.load.project import load_project
from cudagloss.model.project import CONFIG, Project
from verifier.experiment import ROOT
from verifier.registry import CONTRACTS
from verifier.runner import choose, cited_experiments, run_all

PROG = "make verify"
LINK = "is a symbolic link"
"""How a refused link's line begins (cudagloss.files.inside.read_link_mistake)."""


def main(argv: list[str] | None = None) -> int:
    """_main inside the error boundary: what the user can fix is reported, never a traceback;
    terms that cannot be read are input it cannot choose experiments from (USAGE)."""
    return guarded(PROG, lambda: _main(argv), mistakes=ExitCode.USAGE, show=_unreadable_terms)


def _unreadable_terms(exc: GlossaryError) -> None:
    print(exc.report(), file=sys.stderr)
    if any(d.message.startswith(LINK) for d in exc.errors):  # ARGS=--all would be refused the same
        return
    complain(PROG, "cannot tell which experiments the terms cite: fix the files above, or ARGS=--all")


def _project() -> Project:
    """Where the terms and measurements are, as every verb asks; a GPU node without PyYAML
    cannot read mkdocs.yml (nor the terms: it runs what its command line names) and takes the
    project's defaults."""
    try:
        return load_project(ROOT / CONFIG)
    except ModuleNotFoundError as exc:
        if exc.name != "yaml":
            raise
        return Project.default(ROOT)


def _main(argv: list[str] | None) -> int:
    project = _project()
    if project.measurements_dir is None:
        raise UsageError(f"{CONFIG} names no measurements folder (extra.glossary.measurements_dir): give --out")
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="list the experiments, one line each")
    parser.add_argument("--experiment", help="run only this experiment id")
    parser.add_argument("--all", action="store_true", help="run every experiment, cited or not")
    parser.add_argument("--terms", default=str(project.terms_dir), help="terms folder whose citations choose (default)")
    parser.add_argument("--repeats", type=int, default=5, help="fresh-process repeats per timing (default 5)")
    parser.add_argument("--out", default=str(project.measurements_dir), help="measurements folder (the project's)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="the re-run report's format")
    parser.add_argument("--timing", help="also write where the time went (per experiment and phase) to this JSON file")
    args = parser.parse_args(argv)
    # A committed link at the terms or measurements folder, or above: never list or open through it.
    refuse_read_links(Path(args.terms), ROOT, "the terms folder")
    refuse_read_links(Path(args.out), ROOT, "the measurements folder")
    if linked := read_links_in(Path(args.terms), ROOT, "the term files"):  # before the loader resolves them
        raise GlossaryError(linked)
    if args.list:
        try:
            cited: list[str] | None = cited_experiments(Path(args.terms))
        except (GlossaryError, UsageError):  # the list is still worth showing, without the marks
            cited = None
        for experiment in CONTRACTS:
            mark = "" if cited is None or experiment.id in cited else "  (cited by no term)"
            print(f"{experiment.id:<20} {experiment.purpose}{mark}")
        return ExitCode.OK
    chosen = choose(args)
    if not chosen:
        print("make verify: no term cites an experiment; run one with EXPERIMENT=id or all with ARGS=--all")
        return ExitCode.OK
    return run_all(chosen, args)


if __name__ == "__main__":
    sys.exit(main())
