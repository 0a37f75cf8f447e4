"""An experiment a GPU's compute capability cannot run is a refusal in NVRTC's own words, decided
before anything reaches the GPU (verifier/targets.not_for, called by the runner): NVRTC for real."""

from __future__ import annotations

import pytest
from verifier.experiments import blackwell_on_hopper, tensor_core
from verifier.registry import CONTRACTS
from verifier.targets import Needs, not_for

BY_ID = {c.id: c for c in CONTRACTS}


def _why(experiment: str, capability: str) -> str | None:
    contract = BY_ID[experiment]
    return not_for(contract.module, contract.kernels(), capability)


def test_every_experiment_is_for_hopper() -> None:
    """The cards that measured so far: nothing is turned away on them."""
    assert [c.id for c in CONTRACTS if _why(c.id, "9.0")] == []


def test_wgmma_turns_the_tensor_core_experiment_away_from_ampere_in_ptxas_words() -> None:
    why = _why("tensor-core", "8.0")
    assert why is not None and why.startswith("verifier/kernels/wgmma.py:SOURCE: ")
    assert "; sm_80: ptxas: " in why and "requires .target sm_90 or higher" in why


def test_clusters_turn_distributed_shared_memory_away_from_ada() -> None:
    why = _why("distributed-shared-memory", "8.9")
    assert why is not None and "sm_89: ptxas: " in why and "requires .target sm_90 or higher" in why


@pytest.mark.parametrize("capability", ["7.5", "8.0", "10.0", "12.0"])
def test_an_experiment_that_asks_about_other_gpus_runs_anywhere(capability: str) -> None:
    assert isinstance(blackwell_on_hopper.RUNS_ON, Needs)
    assert _why("blackwell-on-hopper", capability) is None


def test_a_declared_runs_on_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tensor_core, "RUNS_ON", Needs("needs Hopper's wgmma", only=("sm_90a",)), raising=False)
    assert _why("tensor-core", "9.0") is None
    assert _why("tensor-core", "12.0") == "needs Hopper's wgmma (not sm_120)"
