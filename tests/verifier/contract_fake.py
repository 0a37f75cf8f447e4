"""A fake experiment for test_contract.py: run() compiles its declared SOURCE with NVRTC (no GPU),
and, given device 'drift', also a source it builds on the spot, which no constant declares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from verifier.cuda import compile_source
from verifier.experiment import Outcome

ID = "contract-fake"
PURPOSE = "Compile the kernel it declares, and when told one it does not."
ARCH = "compute_75"
SOURCE = 'extern "C" __global__ void declared(float* x) { x[0] = 1.0f; }'


def run(device: Any, repeats: int, workdir: Path) -> Outcome:
    compile_source(SOURCE, "declared.cu", ARCH)
    if device == "drift":
        compile_source(SOURCE.replace("1.0f", "2.0f"), "drifted.cu", ARCH)
    return summarise({"repeats": repeats})


def summarise(raw: dict[str, Any]) -> Outcome:
    outcome = Outcome(repeats=raw["repeats"])
    outcome.gate("it ran", True)
    return outcome
