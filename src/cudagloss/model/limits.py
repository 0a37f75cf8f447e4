"""Bounds on what one file may hold, and the field metadata every model class documents itself
with: shared by the term model and the parts of it that live in modules of their own."""

from __future__ import annotations

import datetime as dt
from typing import Any

FIRST_DAY = dt.date(2026, 12, 2)
"""The project's first day (its first commit): nothing of ours (a link report, a day read from
the glossary's git history) is older; a date before it from outside is refused, never shown."""

# Bounds on what one file may hold: a mistake (or an attack) past them is an error with its
# position, never a slow build. Generous: ten times what the longest real value needs.
NAME_MAX = 100
"""Characters in a name, alias, abbreviation, plural or byline name."""
LINE_MAX = 300
"""Characters in a one-line text: a title, a label, a source title, an error string."""
NOTE_MAX = 1_000
"""Characters in a sentence-sized text: a definition, a note, a section description."""
BODY_MAX = 40_000
"""Characters in a body (a long article is about 30,000)."""
QUOTE_MAX = 400
"""Characters in a source's quote: two sentences of a guide (the link checker looks for it on the page)."""
QUOTE_MIN_WORDS = 4
"""Words a quote needs at least: fewer would be found on almost any page, and prove nothing."""
URL_MAX = 2_000
"""Characters in a URL (what browsers and servers reliably accept)."""
COUNT_MAX = 1_000_000
"""The largest counter a tool writes into a term (failed_checks)."""
ITEMS_MAX = 50
"""Items in any one list of a term (aliases, sources, related terms...)."""
TERMS_MAX = 5000
"""Terms one section's reading order may name (the glossary is built for thousands): the terms
folder's limit too, so a section may list every term."""
RESULTS_MAX = 10_000
"""Results one experiment may record: a term's citation may name any of them for its table."""
EXPERIMENT_ID_MAX = 64
"""Characters in an experiment's id (it names a folder of measurements/)."""
REF_MAX = EXPERIMENT_ID_MAX + 1 + NAME_MAX
"""Characters in a reference to a measured result, experiment.result (a result's name is a name)."""
SECTIONS_MAX = 200
"""Sections in terms/_sections.yaml."""


def doc(text: str, **extra: Any) -> dict[str, Any]:
    """Field metadata: the doc string, plus optional JSON Schema extras (e.g. pattern)."""
    return {"doc": text, **extra}
