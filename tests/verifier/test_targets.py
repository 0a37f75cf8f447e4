"""make kernels (issue 41): every experiment's kernels compiled by NVRTC, for real, for every target
it supports, each declaration of what a kernel needs checked against the compiler's own verdict."""

from __future__ import annotations

import types

import pytest
from verifier.cuda import compile_source
from verifier.kernels import mma_sync, saxpy
from verifier.targets import VERBOSE, Needs, cc_of, cell, entries, is_for

from cudagloss.model.measurement import KernelSource
from verifier import targets_cli

SAXPY = KernelSource("verifier/kernels/saxpy.py:SOURCE", "cuda", saxpy.SOURCE)
MMA = KernelSource("verifier/kernels/mma_sync.py:SOURCE", "cuda", mma_sync.SOURCE)


def declaring(where: str, needs: Needs) -> types.ModuleType:
    """An experiment module that declares needs for the source at where."""
    module = types.ModuleType("declaring")
    module.NEEDS = {where: needs}  # type: ignore[attr-defined]
    return module


def near(needs: Needs, target: str) -> bool:
    """Every source on every target, but one declared for named targets only (wgmma: sm_90a) on
    those and the targets of their own and the neighbouring compute capabilities, which bracket the
    declaration: wgmma's source takes NVRTC about 13 s a target, refused or not, and `make kernels`
    (every target) is run for the note; CI checks the bracket."""
    if not needs.only:
        return True
    ccs = sorted({cc_of(t) for t in targets_cli.every_target()})
    mine = {ccs.index(cc_of(t)) for t in needs.only}
    return any(abs(ccs.index(cc_of(target)) - i) <= 1 for i in mine)


@pytest.mark.processes
def test_every_kernel_compiles_where_it_is_declared_for_and_is_refused_elsewhere() -> None:
    """The matrix as CI runs it: every target NVRTC takes (its real architectures and their a and
    f variants), every source (near() brackets the arch-specific ones), no declaration the compiler
    contradicts, and each refusal in NVRTC's words."""
    every = targets_cli.every_target()
    assert any(t.endswith("a") for t in every) and len(every) > len({cc_of(t) for t in every})
    found = [c for _, c in targets_cli.cells(every, jobs=4, keep=near)]
    assert [f"{c.where} on {c.target}: {c.detail}" for c in found if c.verdict == "error"] == []
    assert {c.target for c in found} == set(every)
    refused = [c for c in found if c.verdict == "refused"]
    assert refused and all("; NVRTC: " in c.detail and "error" in c.detail for c in refused)
    assert {c.target for c in refused if "wgmma" in c.detail} >= {"sm_90", "sm_100a"}


def test_a_declaration_too_strict_is_an_error_and_the_compiler_says_why() -> None:
    strict = declaring(SAXPY.where, Needs("pretends to need clusters", least=90))
    found = cell(SAXPY, "sm_80", strict)
    assert found.verdict == "error" and "but NVRTC compiled it" in found.detail
    assert cell(SAXPY, "sm_90", strict).verdict == "compiled"


def test_a_declaration_too_loose_is_an_error_with_nvrtcs_words() -> None:
    loose = declaring(MMA.where, Needs("claims every target"))
    found = cell(MMA, "sm_75", loose)
    assert found.verdict == "error" and "NVRTC refused it" in found.detail and "m16n8k16" in found.detail
    declared = cell(MMA, "sm_75")  # the module's own NEEDS
    assert declared.verdict == "refused" and declared.detail.startswith(mma_sync.NEEDS.why)


def test_arch_specific_targets_are_declared_by_name() -> None:
    only = Needs("wgmma", only=("sm_90a",))
    assert is_for(only, "sm_90a") and not is_for(only, "sm_90") and not is_for(only, "sm_100a")
    assert is_for(Needs("cp.async", least=80), "sm_90a") and not is_for(Needs("x", least=80), "sm_75")
    with pytest.raises(ValueError, match="not a target"):
        cc_of("compute_90")


def test_registers_spills_and_shared_memory_come_from_ptxas_own_log() -> None:
    log = compile_source(saxpy.SOURCE, "saxpy.cu", "sm_90", VERBOSE).log
    (entry,) = entries(log)
    used = next(line for line in log.splitlines() if "Used" in line and "registers" in line)
    assert entry.name == "saxpy" and f"Used {entry.registers} registers" in used
    assert entry.spill_bytes == 0 and entry.shared_bytes == 0
    fake = (
        "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
        "ptxas info    : Function properties for k\n"
        "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem\n"
    )
    (k,) = entries(fake)
    assert (k.registers, k.spill_bytes, k.shared_bytes, k.stack_bytes) == (255, 12, 4096, 16)


def test_a_target_that_is_not_one_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert targets_cli.main(["--target", "sm_9x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'sm_9x' is not a target" in err and "Traceback" not in err
