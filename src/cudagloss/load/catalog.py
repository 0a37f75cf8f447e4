"""The verifier's catalog of experiments, asked for by the site build and `cudagloss check`.

The verifier lives in the repository (verifier/), not in this package, and it owns the
list of experiments and what code each runs. Its registry module imports without a GPU or
cuda-python, so the site imports it from the repository root to learn the experiment ids
and the hash of each one's code now.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from cudagloss.errors import Diagnostic, GlossaryError
from cudagloss.model.measurement import ExperimentInfo


def load_catalog(root: Path, package: str = "verifier") -> list[ExperimentInfo] | None:
    """The experiments of root/<package>/registry.py, or None when root has no verifier."""
    if not (root / package / "registry.py").is_file():
        return None
    where = str(root.resolve())
    if where not in sys.path:
        sys.path.insert(0, where)
    try:
        registry = importlib.import_module(f"{package}.registry")
        return list(registry.catalog())
    except (ImportError, AttributeError, OSError) as exc:
        raise GlossaryError(
            [
                Diagnostic(
                    f"{package}/registry.py",
                    1,
                    1,
                    f"the verifier's catalog cannot be read: {exc}",
                    "run `python3 -m verifier --list` to see the problem",
                )
            ]
        ) from None
