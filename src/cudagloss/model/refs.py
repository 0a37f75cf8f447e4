"""A measured value as author text names it, `experiment.result`: its grammar and bounds, once.

The claims language, the body directives and the measurement files all read these names; an
experiment id is lowercase words joined by single hyphens (at most sixteen), a result name a
lowercase identifier of at most a hundred characters.
"""

from __future__ import annotations

import re

EXPERIMENT = r"[a-z0-9]+(?:-[a-z0-9]+){0,15}"
RESULT = r"[a-z][a-z0-9_]{0,99}"
EXPERIMENT_ID = re.compile(EXPERIMENT)
RESULT_NAME = re.compile(RESULT)
REF = re.compile(rf"({EXPERIMENT})\.({RESULT})")
"""experiment.result in one string, the two names as groups 1 and 2."""
Ref = tuple[str, str]


def read_ref(text: str) -> Ref | None:
    """(experiment, result) of text written experiment.result, or None."""
    match = REF.fullmatch(text)
    return (match.group(1), match.group(2)) if match else None
