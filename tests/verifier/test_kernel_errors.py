"""kernel-errors on the CPU: its kernels compile for every target, each case names a trigger, and
the summary of fixture answers (written by hand from the prediction, not measurements) records
the error, the call, both libraries' words and the context after; a case that returned no error,
or a control that did not work, fails a gate."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source, supported_archs
from verifier.experiments import kernel_errors as ke

from outcomes import recordable, values

PREDICTED = {
    "illegal_address": (
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        700,
        "an illegal memory access was encountered",
        "cuCtxSynchronize",
    ),
    "misaligned_address": ("CUDA_ERROR_MISALIGNED_ADDRESS", 716, "misaligned address", "cuCtxSynchronize"),
    "device_assert": ("CUDA_ERROR_ASSERT", 710, "device-side assert triggered", "cuCtxSynchronize"),
    "trap": ("CUDA_ERROR_LAUNCH_FAILED", 719, "unspecified launch failure", "cuCtxSynchronize"),
    "block_too_large": ("CUDA_ERROR_INVALID_VALUE", 1, "invalid argument", "cuLaunchKernel"),
    "out_of_memory": ("CUDA_ERROR_OUT_OF_MEMORY", 2, "out of memory", "cuMemAlloc"),
    "missing_kernel": ("CUDA_ERROR_NOT_FOUND", 500, "named symbol not found", "cuModuleGetFunction"),
}
STICKY = {"illegal_address", "misaligned_address", "device_assert", "trap"}


def fixture() -> dict[str, Any]:
    cases: dict[str, Any] = {"control": {"ok": True, "first": {"raised": False}, "after": "works"}}
    for case, (name, code, message, call) in PREDICTED.items():
        first = {"raised": True, "ok": False, "call": call, "error_name": name, "error_code": code}
        first |= {"error_message": message, "jit_log": "", "runtime_name": f"cuda{case}", "runtime_message": message}
        cases[case] = {"ok": True, "first": first, "after": name if case in STICKY else "works"}
    return {"cases": cases}


@pytest.mark.parametrize("arch", [f"sm_{a}" for a in supported_archs()])
def test_the_kernels_compile_for_every_target(arch: str) -> None:
    assert compile_source(ke.SOURCE, "kernel_errors.cu", arch).image[:4] == b"\x7fELF"


def test_each_case_is_triggered_and_an_unknown_one_is_refused() -> None:
    assert list(ke.CASES) == list(PREDICTED)
    with pytest.raises(ValueError, match="no case 'typo'"):
        ke._trigger("typo", None, None, 0)  # type: ignore[arg-type]
    ke._trigger("control", None, None, 0)  # type: ignore[arg-type]  # the control does nothing wrong


def test_the_prediction_records_every_case_and_passes() -> None:
    outcome = ke.summarise(fixture())
    recordable(outcome, ke)
    assert [g.passed for g in outcome.gates] == [True, True]
    got = values(outcome)
    assert got["illegal_address_error"] == "CUDA_ERROR_ILLEGAL_ADDRESS" and got["illegal_address_code"] == 700
    assert got["illegal_address_message"] == "an illegal memory access was encountered"
    assert got["illegal_address_returned_by"] == "cuCtxSynchronize"
    assert got["illegal_address_context_after"] == "CUDA_ERROR_ILLEGAL_ADDRESS"
    assert got["block_too_large_returned_by"] == "cuLaunchKernel" and got["block_too_large_context_after"] == "works"
    assert got["out_of_memory_runtime_error"] == "cudaout_of_memory"
    assert len(outcome.results) == 7 * len(ke.CASES)


def test_a_case_that_returned_no_error_or_lost_its_process_fails_the_gate() -> None:
    raw = fixture()
    raw["cases"]["trap"] = {"ok": True, "first": {"raised": False}, "after": "works"}
    raw["cases"]["device_assert"] = {"ok": False, "step_failed": "experiments.kernel_errors.case gave no result"}
    outcome = ke.summarise(raw)
    recordable(outcome, ke)
    gate = outcome.gates[-1]
    assert not gate.passed
    assert gate.detail == "device_assert: experiments.kernel_errors.case gave no result; trap: no error returned"
    assert "trap_error" not in values(outcome)


@pytest.mark.parametrize(
    "control",
    [
        {"ok": True, "first": {"raised": False}, "after": "CUDA_ERROR_LAUNCH_FAILED"},
        {"ok": True, "first": {"raised": True}, "after": "works"},
        {"ok": False, "error_name": "CUDA_ERROR_NO_DEVICE"},
        {"ok": False, "step_failed": "exited 1"},
    ],
)
def test_a_control_that_does_not_work_stops_the_results(control: dict[str, Any]) -> None:
    raw = fixture()
    raw["cases"]["control"] = control
    outcome = ke.summarise(raw)
    assert [g.passed for g in outcome.gates] == [False] and outcome.results == []
