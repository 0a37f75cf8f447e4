"""error-strings on the CPU: the runtime's words come from the runtime cuda-bindings carries, so they
are read here for real; the driver's need libcuda, so its answers are fixture data shaped like a node's
(written by hand for this test, not measurements). The summary gives one name and one message per
code and fails a code a library refuses or names otherwise than its enum."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.runtime")

from cuda.bindings import runtime
from verifier.experiments import error_strings as es

from outcomes import recordable, values


def driver_fixture() -> dict[int, dict[str, str]]:
    invalid = "CUDA_ERROR_INVALID_VALUE"
    return {
        0: {"enum": "CUDA_SUCCESS", "name": "CUDA_SUCCESS", "text": "no error"},
        1: {"enum": invalid, "name": invalid, "text": "invalid argument"},
    }


def raw(**change: Any) -> dict[str, Any]:
    real = es._answers(runtime.cudaGetErrorName, runtime.cudaGetErrorString, runtime.cudaError_t)
    return {"driver": driver_fixture(), "runtime": real} | change


def test_every_runtime_code_has_its_words_and_each_becomes_two_results() -> None:
    outcome = es.summarise(raw())
    assert all(g.passed for g in outcome.gates), [g for g in outcome.gates if not g.passed]
    got = values(outcome)
    assert got["cuda_1_name"] == "cudaErrorInvalidValue" and got["cuda_1_message"] == "invalid argument"
    assert got["cu_1_message"] == "invalid argument" and got["cu_codes"] == 2
    assert got["cuda_codes"] == len(list(runtime.cudaError_t)) > 100
    recordable(outcome, es)


def test_a_code_newer_than_the_driver_is_unknown_and_any_other_refusal_or_name_fails() -> None:
    newer = driver_fixture() | {99: {"enum": "CUDA_ERROR_NEWER", "name": es.REFUSED, "text": es.REFUSED}}
    outcome = es.summarise(raw(driver=newer))
    assert all(g.passed for g in outcome.gates)
    got = values(outcome)
    assert got["cu_unknown"] == 1 and got["cu_unknown_codes"] == "CUDA_ERROR_NEWER (99)" and "cu_99_name" not in got
    bad = driver_fixture()
    bad[1]["text"] = "refused: CUDA_ERROR_NOT_INITIALIZED"
    bad[0]["name"] = "CUDA_SOMETHING_ELSE"
    gates = {g.name: g for g in es.summarise(raw(driver=bad)).gates}
    answered = gates["cuGetErrorName and cuGetErrorString answer every driver code, or refuse it as unknown"]
    assert not answered.passed and "CUDA_ERROR_INVALID_VALUE" in answered.detail
    assert not gates["cuGetErrorName gives each driver code its enum name"].passed
