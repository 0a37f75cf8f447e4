"""instruction-availability on the CPU: each feature's kernel is a constant the recipe hashes, its
NEEDS are the committed table's targets, its launch matches its parameters, and the summary of
fixture answers (written by hand, not measurements) says ran, loaded, refused or the error."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.contract import Experiment
from verifier.cuda import compile_source
from verifier.experiment import ROOT
from verifier.experiments import instruction_availability as ia
from verifier.kernels.features import FEATURES
from verifier.targets import not_for

from outcomes import recordable, values

PARAMS = re.compile(r'extern "C" __global__ void (?:__cluster_dims__\([^)]*\) )?k\(([^)]*)\)')


def test_every_feature_is_a_constant_the_recipe_hashes_and_the_page_shows() -> None:
    kernels = {k.where.rpartition(":")[2]: k.source for k in Experiment.from_module(ia).kernels()}
    assert kernels == {ia.constant(f.id): ia.SOURCES[f.id] for f in FEATURES}
    assert ia.constant("mma-f16") == "MMA_F16" and vars(ia)["MMA_F16"] == ia.SOURCES["mma-f16"]


def test_needs_are_the_targets_the_committed_table_compiled() -> None:
    table = json.loads((ROOT / "computed" / "instruction-availability.json").read_text(encoding="utf-8"))
    for feature in FEATURES:
        compiled = {t for t, row in table["values"].items() if row[feature.id] == "compiled"}
        assert set(ia.NEEDS[ia.constant(feature.id)].only) == compiled, feature.id
    assert ia.NEEDS["WGMMA"].only == ("sm_90a",)


def test_the_experiment_runs_on_any_gpu() -> None:
    kernels = Experiment.from_module(ia).kernels()
    assert all(not_for(ia, kernels, cc) is None for cc in ("7.5", "8.0", "9.0", "12.0"))


def test_each_launch_passes_what_its_kernel_takes() -> None:
    for feature in FEATURES:
        found = PARAMS.search(ia.SOURCES[feature.id])
        assert found, feature.id
        params = [p.strip() for p in found[1].split(",")]
        spec = ia.LAUNCHES.get(feature.id, ia.Launch())
        assert len(params) == 1 + len(spec.inputs), feature.id
        assert params[0].endswith("* out")
        for kind, param in zip(spec.inputs, params[1:], strict=True):
            expected = {"in": "*", "desc": "unsigned long long", "u32": "unsigned int", "map": "TensorMap"}[kind]
            assert expected in param, (feature.id, kind, param)
    assert set(ia.LAUNCHES) <= {f.id for f in FEATURES}
    assert "__cluster_dims__(2, 1, 1)" in ia.SOURCES["cluster-dsmem"] and ia.LAUNCHES["cluster-dsmem"].grid == 2


def test_wgmma_descriptor_points_inside_the_dynamic_shared_memory_it_asks_for() -> None:
    spec = ia.LAUNCHES["wgmma"]
    assert spec.block == 128  # a warpgroup
    address = (ia.DESCRIPTOR & 0x3FFF) << 4
    assert address > 0 and address + 64 * 16 * 2 <= spec.shared  # A is 64 x 16 FP16, read from there


def test_the_order_of_targets_tried() -> None:
    assert ia.targets_for("9.0") == ("sm_90", "sm_90a", "sm_90f")
    assert ia.targets_for("12.1") == ("sm_121", "sm_121a", "sm_121f")
    assert compile_source(ia.SOURCES["wgmma"], "wgmma.cu", "sm_90a").image[:4] == b"\x7fELF"


def ran(words: int = 32) -> dict[str, Any]:
    return {"ok": True, "outcome": ia.RAN, "words_written": words, "init_s": 0.1, "load_s": 0.01, "run_s": 0.001}


def fixture() -> dict[str, Any]:
    """What an H200 is predicted to answer (from the committed table): every feature sm_90 or
    sm_90a compiles ran; the rest refused."""
    table = json.loads((ROOT / "computed" / "instruction-availability.json").read_text(encoding="utf-8"))
    features: dict[str, Any] = {}
    for feature in FEATURES:
        refusals: dict[str, str] = {}
        for target in ia.targets_for("9.0"):
            verdict = table["values"].get(target, {}).get(feature.id, "nvrtc: NVRTC_ERROR_INVALID_OPTION")
            if verdict == "compiled":
                features[feature.id] = {"refusals": refusals, "target": target, "run": ran()}
                break
            refusals[target] = verdict
        else:
            features[feature.id] = {"refusals": refusals}
    return {"nvrtc": "13.0", "features": features}


def test_an_h200_as_predicted_passes_and_says_what_ran_and_what_was_refused() -> None:
    outcome = ia.summarise(fixture(), "9.0")
    recordable(outcome, ia)
    assert [g.passed for g in outcome.gates] == [True]
    got = values(outcome)
    assert got["wgmma_on_this_gpu"] == "ran" and got["wgmma_target"] == "sm_90a"
    assert got["mma_f16_on_this_gpu"] == "ran" and got["mma_f16_target"] == "sm_90"
    assert got["tcgen05_alloc_on_this_gpu"] == ia.REFUSED
    assert got["tcgen05_alloc_refusal"] == "ptxas: Instruction 'tcgen05.alloc' not supported on .target 'sm_90'"
    assert "tcgen05_alloc_target" not in got and "mma-e2m1" not in got["features_that_ran"]
    assert got["features_that_ran"].split(", ")[:2] == ["ldmatrix", "stmatrix"]


def test_an_error_a_silent_kernel_or_a_lost_process_fails_the_gate_and_is_named() -> None:
    raw = fixture()
    raw["features"]["wgmma"]["run"] = {
        "ok": False,
        "call": "cuCtxSynchronize",
        "error_name": "CUDA_ERROR_ILLEGAL_ADDRESS",
        "error_code": 700,
        "error_message": "an illegal memory access was encountered",
    }
    raw["features"]["redux-sync"]["run"] = ran(words=0)
    outcome = ia.summarise(raw, "9.0")
    recordable(outcome, ia)
    gate = outcome.gates[0]
    assert not gate.passed
    assert gate.detail == "wgmma (CUDA_ERROR_ILLEGAL_ADDRESS); redux-sync (ran, wrote nothing)"
    got = values(outcome)
    assert got["wgmma_error"] == "cuCtxSynchronize: an illegal memory access was encountered"
    assert "wgmma" not in got["features_that_ran"].split(", ")


def test_tcgen05_mma_is_loaded_not_launched_on_blackwell() -> None:
    raw = fixture()
    raw["features"]["tcgen05-mma"] = {"refusals": {}, "target": "sm_100a", "run": {"ok": True, "outcome": ia.LOADED}}
    assert not ia.LAUNCHES["tcgen05-mma"].launched
    outcome = ia.summarise(raw, "9.0")
    assert outcome.gates[0].passed and values(outcome)["tcgen05_mma_on_this_gpu"] == "loaded"
