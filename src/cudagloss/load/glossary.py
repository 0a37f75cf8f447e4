"""Everything a glossary is made of, loaded and checked together: the terms, the
measurements they cite and the verifier's catalog. The site, `cudagloss check` and the
link checker all start here."""

from __future__ import annotations

from cudagloss.errors import Diagnostic
from cudagloss.load.catalog import load_catalog
from cudagloss.load.corpus import CheckReport, check_corpus, load_corpus
from cudagloss.load.link_report import load_link_report
from cudagloss.load.measurements import load_measurements
from cudagloss.model.computed_set import ComputedSet
from cudagloss.model.corpus import Corpus
from cudagloss.model.measurements import MeasurementSet
from cudagloss.model.project import Project


def load_glossary(project: Project) -> Corpus:
    """The project's terms, the measurements they cite and the verifier's catalog, all checked
    together; raises GlossaryError with every mistake (warnings are kept on the corpus)."""
    checks = load_link_report(project.link_report) if project.link_report is not None else None
    measurements, found = load_project_measurements(project)
    corpus = load_corpus(
        project.terms_dir,
        project.root,
        measurements=measurements,
        found_before=found,
        computed=project_computed(project),
    )
    corpus.link_checks = checks
    return corpus


def check_glossary(project: Project, *, cache: bool = True) -> CheckReport:
    """load_glossary's verdict, without keeping the terms: unchanged term files are taken
    from the check cache (cudagloss.load.cache) unless cache is False."""
    measurements, found = load_project_measurements(project)
    report = check_corpus(
        project.terms_dir,
        project.root,
        measurements=measurements,
        found_before=found,
        cache=cache,
        computed=project_computed(project),
    )
    records = measurements.experiments.values() if measurements is not None else ()
    report.summarised_before = sorted(run.good_path for r in records for run in r.runs if run.summarised_before)
    return report


def load_project_measurements(project: Project) -> tuple[MeasurementSet | None, list[Diagnostic]]:
    """The project's measurements with the verifier's catalog (None for a glossary without any)."""
    if project.measurements_dir is None:
        return None, []
    return load_measurements(project.measurements_dir, project.root, load_catalog(project.root))


def project_computed(project: Project) -> ComputedSet | None:
    """The project's computed tables, read as terms cite them (None for a glossary without any)."""
    return ComputedSet(project.computed_dir, project.root) if project.computed_dir is not None else None
