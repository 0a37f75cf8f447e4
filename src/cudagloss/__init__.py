"""cudagloss: the CUDA glossary, from term files to a published site, stage by stage.

    model/     the nouns: a term, the corpus, a measurement file, the measurements, URLs
    load/      term YAML and measurement JSON read into the model, with positions
    check/     the rules across fields and files, and author text (directives parsed, never run)
    site/      page views, the renderer and its Jinja environment, escaping, exports
    links/     the link checker, git history and the stamps written back into term YAML
    commands/  one module per CLI verb; main() runs each inside the error boundary
    mkdocs/    the adapter MkDocs loads (through site_hooks/); nothing else imports it
    errors.py  Diagnostic, GlossaryError, ExitCode and report(), for every command
    boundary.py the one error boundary of `cudagloss` and `make verify`: each failure, its line and exit status
    files/     atomic writes that keep modes, line endings and concurrent edits
    text/      Markdown structure, e-mail addresses, confusable characters, strict JSON

The public surface below is lazy: importing the package (or the model, or the measurement
format, which is what the verifier does on a GPU node) loads neither Jinja2, MkDocs nor
PyYAML; each name is imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_PUBLIC = {
    "Diagnostic": "cudagloss.errors",
    "GlossaryError": "cudagloss.errors",
    "ExitCode": "cudagloss.errors",
    "load_corpus": "cudagloss.load.corpus",
    "load_glossary": "cudagloss.load.glossary",
    "Byline": "cudagloss.model.term",
    "MeasurementCitation": "cudagloss.model.term",
    "MeetEntry": "cudagloss.model.term",
    "Section": "cudagloss.model.term",
    "Source": "cudagloss.model.term",
    "Term": "cudagloss.model.term",
}

__all__ = [
    "Byline",
    "Diagnostic",
    "ExitCode",
    "GlossaryError",
    "MeasurementCitation",
    "MeetEntry",
    "Section",
    "Source",
    "Term",
    "load_corpus",
    "load_glossary",
]

if TYPE_CHECKING:
    from cudagloss.errors import Diagnostic, ExitCode, GlossaryError
    from cudagloss.load.corpus import load_corpus
    from cudagloss.load.glossary import load_glossary
    from cudagloss.model.term import Byline, MeasurementCitation, MeetEntry, Section, Source, Term


def __getattr__(name: str) -> Any:
    """PEP 562: a public name's module is imported when the name is first asked for."""
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'cudagloss' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
