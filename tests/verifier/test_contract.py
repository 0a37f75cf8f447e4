"""The experiment contract (verifier/contract.py, issue 40): a module that is not an experiment is
refused by name; every registered one builds; its keys are the module's; and a run that compiles a
kernel source it does not declare fails a gate. NVRTC compiles for real; no GPU is needed."""

from __future__ import annotations

import importlib.util
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest
from verifier.anatomy import kernels
from verifier.contract import GATE, ContractError, Experiment, procedure_modules, run_checked
from verifier.experiment import ROOT
from verifier.kernels import saxpy
from verifier.recipe import recipe_key, summary_key
from verifier.registry import CONTRACTS, EXPERIMENTS, catalog

from verifier import compiled, spawn

pytest.importorskip("cuda.bindings.nvrtc")
FAKE = Path(__file__).resolve().parent / "contract_fake.py"


def fake() -> ModuleType:
    spec = importlib.util.spec_from_file_location("contract_fake", FAKE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def without(name: str) -> ModuleType:
    module = fake()
    delattr(module, name)
    return module


@pytest.mark.parametrize("name", ["run", "ID", "PURPOSE", "summarise"])
def test_a_module_lacking_a_part_is_refused_by_name(name: str) -> None:
    with pytest.raises(ContractError, match=rf"contract_fake .*contract_fake\.py.*\bno {name}\b"):
        Experiment.from_module(without(name))


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("ID", "Contract Fake", "is not an id"),
        ("PURPOSE", "  ", "PURPOSE is not"),
        ("METHOD", 0, "METHOD 0 is neither"),
        ("run", lambda device: None, r"does not take \(device, repeats, workdir\)"),
        ("USES", ("no_such.py",), "USES"),
    ],
)
def test_a_part_of_the_wrong_kind_is_refused(name: str, value: object, said: str) -> None:
    module = fake()
    setattr(module, name, value)
    with pytest.raises(ContractError, match=said):
        Experiment.from_module(module)


def test_every_experiment_module_is_registered_and_builds() -> None:
    package = ROOT / "verifier" / "experiments"
    names = {f"verifier.experiments.{m.name}" for m in pkgutil.iter_modules([str(package)])}
    assert {e.module.__name__ for e in CONTRACTS} == names
    assert [e.module for e in CONTRACTS] == EXPERIMENTS
    assert len({e.id for e in CONTRACTS}) == len(CONTRACTS)
    assert [e.id for e in CONTRACTS] == [m.ID for m in EXPERIMENTS]


def test_the_keys_through_the_contract_are_the_modules() -> None:
    """The contract changes no measurement's keys: they are computed from the module, as before."""
    by_module = {m.ID: (recipe_key(m), summary_key(m)) for m in EXPERIMENTS}
    assert {e.id: e.keys() for e in CONTRACTS} == by_module
    assert {i.id: (i.recipe, i.summary) for i in catalog()} == by_module
    assert all(e.kernels() == kernels(e.module, ROOT) for e in CONTRACTS)


def test_what_an_experiment_may_compile_is_its_kernels_and_its_procedures() -> None:
    contracts = {e.id: e for e in CONTRACTS}
    assert "verifier.gpu" in procedure_modules(contracts["occupancy"].module)
    assert "verifier.gpu" in procedure_modules(contracts["peer-copy"].module)  # Gpu() in a spawned step's class
    assert "verifier.registry" not in procedure_modules(contracts["memory-bandwidth"].module)
    assert compiled.digest(saxpy.SOURCE) in contracts["ptx-jit"].declared()
    assert compiled.digest(saxpy.SOURCE) not in contracts["occupancy"].declared()


def test_a_run_that_compiles_only_what_it_declares_passes(tmp_path: Path) -> None:
    outcome = run_checked(fake(), "gpu", 3, tmp_path)
    gate = next(g for g in outcome.gates if g.name == GATE)
    assert gate.passed and "1 sources compiled, all declared" in gate.detail


def test_a_run_that_compiles_an_undeclared_source_fails(tmp_path: Path) -> None:
    module = fake()
    outcome = run_checked(module, "drift", 3, tmp_path)
    gate = next(g for g in outcome.gates if g.name == GATE)
    drifted = compiled.digest(module.SOURCE.replace("1.0f", "2.0f"))
    assert not gate.passed and drifted[:12] in gate.detail and "1 compiled but not declared" in gate.detail


def test_what_a_spawned_step_compiles_is_the_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh process (here an exec'd one) sends its compiles back with its result."""
    monkeypatch.setattr(spawn, "SPAWN", "exec")
    monkeypatch.setattr(spawn, "LEDGER", [])
    with compiled.recording() as outer, compiled.recording() as inner:
        result = spawn.spawn("kernels.saxpy", "compile_only", {"arch": "compute_75"}, {})
    assert result["ok"] and compiled.KEY not in result, result
    assert outer == inner == [compiled.digest(saxpy.SOURCE)]
    compiled.note("after")  # no recording in progress: nothing kept, nothing raised
