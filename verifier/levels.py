"""Which memory level served a read, as Nsight Compute counts it: the memory-bandwidth cross-check.

The bandwidth experiment builds each level into its kernel (cache operators and footprints); this
module says which counters show it, what each level must show, and turns the counters of the
profiled launches (verifier/profile.py, one launch per case in PROFILED order) into results and
gates. Where ncu did not run, one text result says why, and nothing is claimed.
"""

from __future__ import annotations

from typing import Any

from cudagloss.model.measurement import Result
from verifier.experiment import Outcome
from verifier.profile import launches

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

L1_HIT, L2_HIT, DRAM_READ = "l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct", "dram__bytes_read.sum"
METRICS = (L1_HIT, L2_HIT, DRAM_READ)

EXPECT: dict[str, tuple[tuple[str, str, float], ...]] = {
    "l1": ((L1_HIT, ">=", 90.0),),
    "l2": ((L1_HIT, "<=", 5.0), (L2_HIT, ">=", 90.0), ("dram_per_byte", "<=", 0.05)),
    "hbm": (("dram_per_byte", ">=", 0.9),),
}
"""What each level's kernel must show: L1 serves the L1 read; the L2 read skips L1 and L2 serves
it with almost no DRAM traffic; the HBM read takes almost every byte from DRAM."""


def crosscheck(outcome: Outcome, counters: Any, cases: dict[str, dict[str, Any]]) -> None:
    """Results and gates from the profiled launches; cases maps each profiled case (in launch
    order) to its level and the bytes its one launch reads."""
    found_all = launches(outcome, counters, len(cases), "the levels", "ncu profiled one launch per case")
    if found_all is None:
        return
    wrong: list[str] = []
    for (name, case), found in zip(cases.items(), found_all, strict=True):
        values = {
            L1_HIT: float(found.get(L1_HIT, -1.0)),
            L2_HIT: float(found.get(L2_HIT, -1.0)),
            "dram_per_byte": float(found.get(DRAM_READ, -1.0)) / case["bytes"] if case["bytes"] else -1.0,
        }
        what = f"{name.replace('_', ' ')} under Nsight Compute (--clock-control none), one launch"
        outcome.add(
            Result(f"{name}_l1_hit", round(values[L1_HIT], 1), "%", f"L1 sector hit rate, {what}"),
            Result(f"{name}_l2_hit", round(values[L2_HIT], 1), "%", f"L2 sector hit rate, {what}"),
            Result(
                f"{name}_dram_per_byte",
                round(values["dram_per_byte"], 3),
                "B/B",
                f"DRAM bytes read per byte the kernel read, {what}",
            ),
        )
        for metric, sense, bound in EXPECT.get(case["level"], ()):
            value = values[metric]
            if not (value >= bound if sense == ">=" else value <= bound):
                wrong.append(f"{name}: {metric} {value:.3g} (expected {sense} {bound:g})")
    outcome.gate(
        "each level served its kernel, by the counters", not wrong, "; ".join(wrong) or "L1, L2 and HBM as built"
    )
