"""The re-run report, from the package (cudagloss.merge.rerun): `make verify` and `cudagloss
collect` compare a new run with the committed file, and keep its history, the same way."""

from cudagloss.merge.rerun import (
    CONFIRMED,
    ENVIRONMENT,
    Rerun,
    Row,
    against_committed,
    compare,
    compare_result,
    report_json,
    with_history,
    write,
)

__all__ = [
    "CONFIRMED",
    "ENVIRONMENT",
    "Rerun",
    "Row",
    "against_committed",
    "compare",
    "compare_result",
    "report_json",
    "with_history",
    "write",
]
