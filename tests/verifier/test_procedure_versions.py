"""Every procedure module declares its VERSION (issue 40, CONTRIBUTING.md): a verifier module an
experiment's run() reaches, found by verifier.recipe.anatomy as the recipe key finds it (never a
hand-kept list), so a new procedure cannot join the recipe as `VERSION = None` unnoticed."""

from __future__ import annotations

import importlib

from verifier.recipe import anatomy
from verifier.registry import EXPERIMENTS


def procedures() -> dict[str, set[str]]:
    """Each procedure module -> the experiments whose run() reaches it (kernels apart: keyed by source)."""
    found: dict[str, set[str]] = {}
    for module in EXPERIMENTS:
        for name in anatomy(module).run.modules:
            if not name.startswith("verifier.kernels"):
                found.setdefault(name, set()).add(str(module.ID))
    return found


def test_every_procedure_module_declares_a_version() -> None:
    found = procedures()
    assert "verifier.timing" in found  # the analysis sees the procedures at all
    missing = {
        name: sorted(users)
        for name, users in sorted(found.items())
        if not (isinstance(v := getattr(importlib.import_module(name), "VERSION", None), int) and v >= 1)
        or isinstance(v, bool)
    }
    assert not missing, f"declare `VERSION = 1` (an int, bumped by hand) in: {missing}"
