"""What the CPU tests of the experiments ask of an outcome: its values by name, and that the
measurement format would record it (the runner refuses a whole run over one refused value)."""

from __future__ import annotations

from typing import Any


def recordable(outcome: Any, module: Any) -> None:
    """The outcome passes the measurement format's rules, which the runner applies before it
    writes a file: a value they refuse (a zero duration, say) loses the whole run on the GPU."""
    from cudagloss.model.measurement import Measurement, parse_measurement

    made = Measurement(
        module.ID, module.PURPOSE, "sha256:fixture", "ok", {"node": "fixture"}, outcome.gates, outcome.results
    )
    parse_measurement(made.to_json(), "fixture.json")


def values(outcome: Any) -> dict[str, Any]:
    """Each result's value by its name."""
    return {r.name: r.value for r in outcome.results}
