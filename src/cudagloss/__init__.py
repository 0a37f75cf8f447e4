"""cudagloss: the term model, loading, validation and rendering of the CUDA glossary.

The public surface: :func:`load_corpus` (load and validate a terms folder),
:class:`GlossaryError` (every author mistake, formatted), and the model classes.
MkDocs is not imported here; the site hooks adapt this package to it.
"""

from .diagnostics import Diagnostic, GlossaryError
from .load import load_corpus
from .model import Byline, MeasurementCitation, MeetEntry, Section, Source, Term

__version__ = "0.1.0"

__all__ = [
    "Byline",
    "Diagnostic",
    "GlossaryError",
    "MeasurementCitation",
    "MeetEntry",
    "Section",
    "Source",
    "Term",
    "load_corpus",
]
