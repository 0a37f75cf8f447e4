"""blackwell-on-hopper on the CPU: NVRTC here compiles the tensor memory kernel for sm_100a and
refuses it for sm_90a, naming the instruction, and the gates and results come out of fixture
answers as the page will show them."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import CudaError, compile_source, supported_archs
from verifier.experiments import blackwell_on_hopper as bh

from outcomes import recordable, values

REFUSAL = (
    "ptxas application ptx input, line 34; error   : Instruction 'tcgen05.alloc' not supported on .target "
    "'sm_90a'\nptxas application ptx input, line 34; error   : Feature '.cta_group::1' not supported on .target "
    "'sm_90a'\nptxas fatal   : Ptx assembly aborted due to errors\n"
)


def load_error(name: str, code: int, message: str, log: str = "") -> dict[str, Any]:
    return {
        "ok": False,
        "call": "cuModuleLoadDataEx",
        "error_name": name,
        "error_code": code,
        "error_message": message,
        "jit_log": log,
    }


def fixture(**change: Any) -> dict[str, Any]:
    """The answers predicted for an H200 node, written by hand for this test: not measurements."""
    no_image = load_error(
        "CUDA_ERROR_NO_BINARY_FOR_GPU", 209, "no kernel image is available for execution on the device"
    )
    refused = {"ok": False, "error_name": "NVRTC_ERROR_COMPILATION", "log": REFUSAL}
    compiled = {"ok": True, "kind": "cubin", "bytes": 9680, "log": ""}
    raw = {
        "nvrtc": "13.0",
        "archs": [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121],
        "compile": {
            "sm_100a": compiled,
            "sm_100f": compiled,
            "sm_100": refused | {"log": REFUSAL.replace("sm_90a", "sm_100")},
            "sm_90a": refused,
            "compute_90a": {"ok": True, "kind": "ptx", "bytes": 1391, "log": ""},
        },
        "load": {
            "sm_100a": no_image,
            "sm_100f": no_image,
            "compute_90a": load_error("CUDA_ERROR_INVALID_PTX", 218, "a PTX JIT compilation failed", REFUSAL),
        },
        "control": {"ok": True, "jit_log": "", "address": 0, "ran": True},
    }
    return raw | change


def test_nvrtc_refuses_tensor_memory_for_hopper_and_names_the_instruction() -> None:
    with pytest.raises(CudaError) as refused:
        compile_source(bh.SOURCE, "tmem.cu", "sm_90a")
    assert refused.value.name == "NVRTC_ERROR_COMPILATION"
    assert bh.one_line(refused.value.log).endswith(
        "error : Instruction 'tcgen05.alloc' not supported on .target 'sm_90a'"
    )
    ptx = compile_source(bh.SOURCE, "tmem.cu", "compute_90a")  # PTX is not assembled: the refusal waits for the JIT
    assert ptx.kind == "ptx" and b"tcgen05.alloc" in ptx.image and b".target sm_90a" in ptx.image
    assert compile_source(bh.CONTROL_SOURCE, "control.cu", "sm_90").image[:4] == b"\x7fELF"


@pytest.mark.skipif(100 not in supported_archs(), reason="this NVRTC does not know sm_100")
def test_nvrtc_compiles_tensor_memory_for_sm_100a() -> None:
    assert compile_source(bh.SOURCE, "tmem.cu", "sm_100a").image[:4] == b"\x7fELF"


def test_one_line_is_the_first_error_with_its_spaces_squeezed() -> None:
    assert bh.one_line("ptxas info : x\nptxas  error   : bad\nlater error") == "ptxas error : bad"
    assert bh.one_line("only   info") == "only info" and bh.one_line("") == ""


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = bh.summarise(fixture(), "9.0")
    recordable(outcome, bh)
    assert [(g.name, g.passed) for g in outcome.gates] == [
        ("the control (no tensor memory, built for this GPU) loads and runs", True),
        ("NVRTC refuses the tcgen05 kernel for sm_90a (it is Blackwell-only code)", True),
        ("the sm_100a cubin runs only on a compute capability 10.0 GPU", True),
    ]
    got = values(outcome)
    assert got["nvrtc_version"] == "13.0" and got["nvrtc_knows_sm_100"] is True
    assert got["sm_100a_compile"] == "compiled" and got["sm_100a_compile_log"] is None
    assert got["sm_100a_load"] == "CUDA_ERROR_NO_BINARY_FOR_GPU" and got["sm_100a_load_error_code"] == 209
    assert got["sm_90a_compile"] == "NVRTC_ERROR_COMPILATION" and "sm_90a_load" not in got
    assert got["sm_90a_refusal"].endswith("Instruction 'tcgen05.alloc' not supported on .target 'sm_90a'")
    assert got["compute_90a_load"] == "CUDA_ERROR_INVALID_PTX" and "tcgen05.alloc" in got["compute_90a_load_jit_log"]
    assert got["sm_100_refusal"].endswith("not supported on .target 'sm_100'")


def test_on_a_blackwell_gpu_the_cubin_must_run_and_on_hopper_it_must_not() -> None:
    raw = fixture()
    raw["load"]["sm_100a"] = {"ok": True, "jit_log": "", "address": 0, "ran": True}
    assert bh.summarise(raw, "10.0").gates[-1].passed
    recordable(bh.summarise(raw, "10.0"), bh)
    assert values(bh.summarise(raw, "10.0"))["sm_100a_load"] == "runs"
    hopper = bh.summarise(raw, "9.0").gates[-1]
    assert not hopper.passed and hopper.detail == "9.0: ran"
    assert not bh.summarise(fixture(), "10.0").gates[-1].passed


def test_an_nvrtc_without_sm_100a_or_a_kernel_hopper_accepts_is_said_so() -> None:
    raw = fixture()
    raw["compile"]["sm_100a"] = {"ok": False, "error_name": "NVRTC_ERROR_INVALID_OPTION", "log": "invalid arch"}
    del raw["load"]["sm_100a"]
    outcome = bh.summarise(raw, "9.0")
    assert outcome.gates[-1].passed and "not compiled by NVRTC 13.0" in outcome.gates[-1].detail
    raw["compile"]["sm_90a"] = {"ok": True, "kind": "cubin", "bytes": 1, "log": ""}
    raw["load"]["sm_90a"] = {"ok": True, "jit_log": "", "address": 0, "ran": True}
    assert not bh.summarise(raw, "9.0").gates[1].passed


def test_a_control_that_fails_stops_the_results() -> None:
    raw = fixture(control=load_error("CUDA_ERROR_INVALID_IMAGE", 200, "device kernel image is invalid"))
    outcome = bh.summarise(raw, "9.0")
    recordable(outcome, bh)
    assert [g.passed for g in outcome.gates] == [False] and outcome.results == []
    assert "CUDA_ERROR_INVALID_IMAGE" in outcome.gates[0].detail
