"""The verifier on a machine without a GPU: NVRTC compiles for real, the runner says no GPU plainly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from cudagloss.errors import GlossaryError, UsageError

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import CudaError, compile_source, ptx_isa_version
from verifier.experiments import ptx_jit
from verifier.kernels import saxpy
from verifier.registry import EXPERIMENTS

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}


def test_ptx_jit_kernel_compiles_to_ptx_and_to_a_cubin_on_the_cpu() -> None:
    ptx = compile_source(saxpy.SOURCE, "saxpy.cu", ptx_jit.VIRTUAL_ARCH)
    assert ptx.kind == "ptx"
    assert b".target sm_75" in ptx.image and b".entry saxpy" in ptx.image
    assert ptx_isa_version(ptx.image)[0].isdigit()
    cubin = compile_source(saxpy.SOURCE, "saxpy.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"


def test_compile_errors_carry_nvrtc_log() -> None:
    with pytest.raises(CudaError) as info:
        compile_source("not C++ at all", "bad.cu", "compute_75")
    assert info.value.name == "NVRTC_ERROR_COMPILATION"
    assert "bad.cu(1): error" in info.value.log


def test_list_shows_every_experiment_one_line_each() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "verifier", "--list"], cwd=ROOT, env=ENV, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0
    lines = run.stdout.strip().splitlines()
    assert [line.split()[0] for line in lines] == [m.ID for m in EXPERIMENTS]


@pytest.mark.skipif(os.path.exists("/dev/nvidia0"), reason="this machine has a GPU")
def test_no_gpu_is_one_clear_line_and_a_nonzero_exit() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "verifier", "--all"], cwd=ROOT, env=ENV, capture_output=True, text=True, check=False
    )
    assert run.returncode == 3
    assert "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert run.stderr.startswith("make verify: no usable CUDA GPU on this machine")


AWAITING_FIRST_RUN: set[str] = set()
"""Experiments registered on a branch made without a GPU, whose first measurement the lead commits
after running them on a GPU node; each leaves this set with its first committed file."""


def test_committed_measurements_were_made_by_the_current_experiment_code() -> None:
    """Every committed file carries the recipe and summary keys (format 4) and both are the
    code's now, but for the summary of a file that kept no raw samples (NodeRun.summarised_before);
    its code hash is provenance only (issue 40)."""
    from verifier.registry import catalog

    from conftest import load_measurement
    from cudagloss.model.keys import made_the_same_way

    by_id = {m.ID: m for m in EXPERIMENTS}
    infos = {i.id: i for i in catalog()}
    files = sorted((ROOT / "measurements").glob("*/*.json"))
    measured = {f.parent.name for f in files}
    assert measured == set(by_id) - AWAITING_FIRST_RUN, "every experiment has a committed measurement"
    for path in files:
        m = load_measurement(path)
        assert m.status == "ok" and not path.name.endswith(".failed.json"), path
        assert m.recipe and m.summary, f"{path} carries no recipe key: re-run it with make verify"
        if m.raw is None and m.recipe == infos[m.experiment].recipe:
            continue  # summarised by older code with no raw samples to derive again: noted, not stale
        assert made_the_same_way(m, infos[m.experiment]), (
            f"{m.experiment}'s recipe or summary changed since {path.name} was made: run make rederive, "
            "or make verify on a GPU node"
        )


def test_fat_binaries_are_built_from_ptx_and_cubins_on_the_cpu() -> None:
    from verifier.cuda import make_fatbin

    ptx = compile_source(saxpy.SOURCE, "saxpy.cu", "compute_75")
    cubin = compile_source(saxpy.SOURCE, "saxpy.cu", "sm_80")
    ptx_only = make_fatbin([ptx], ["compute_75"])
    both = make_fatbin([cubin, ptx], ["sm_80", "compute_75"])
    assert ptx_only[:4] == both[:4] == bytes.fromhex("50ed55ba")  # the fat binary magic, 0xBA55ED50
    assert len(both) > len(ptx_only) + len(cubin.image) // 2


def test_arch_matrix_covers_the_targets_the_issue_asks_for_and_each_compiles() -> None:
    from verifier.cuda import supported_archs
    from verifier.experiments import arch_matrix

    targets = arch_matrix.targets(supported_archs())
    for wanted in ("sm_75", "sm_90", "sm_90a", "sm_120", "compute_75", "compute_90a", "compute_120"):
        assert wanted in targets
    for target in targets:
        compiled = compile_source(saxpy.SOURCE, "saxpy.cu", target)
        assert compiled.kind == ("ptx" if target.startswith("compute_") else "cubin")


def test_no_kernel_image_picks_an_incompatible_sass_and_a_newer_ptx_target() -> None:
    from verifier.experiments.no_kernel_image import newer_virtual_arch, other_arch

    supported = [75, 80, 86, 89, 90, 100, 120]
    assert other_arch(90, supported) == "sm_80"
    assert other_arch(80, supported) == "sm_75"
    assert newer_virtual_arch(90, supported) == "compute_100"
    assert newer_virtual_arch(86, supported) == "compute_90"
    assert newer_virtual_arch(120, supported) is None


def test_an_unsupported_ptx_version_is_explained_with_both_versions_named() -> None:
    from verifier.experiment import failure

    text = failure(
        {
            "ok": False,
            "error_name": "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
            "error_code": 222,
            "error_message": "the provided PTX was compiled with an unsupported toolchain.",
            "jit_log": "",
        }
    )
    assert text.startswith("CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)")
    assert "NVRTC newer than this driver" in text


def test_by_default_make_verify_runs_the_experiments_the_terms_cite(tmp_path: Path) -> None:
    from verifier.runner import cited_experiments

    cited = cited_experiments(ROOT / "terms")
    assert cited == sorted(cited) and set(cited) <= {m.ID for m in EXPERIMENTS}
    assert {"ptx-jit", "jit-cache", "no-kernel-image", "arch-matrix"} <= set(cited)
    (tmp_path / "one.yaml").write_text((ROOT / "terms" / "jit-cache.yaml").read_text())
    assert cited_experiments(tmp_path) == ["jit-cache"]
    (tmp_path / "two.yaml").write_text("name: [unclosed\n")
    with pytest.raises(GlossaryError) as caught:
        cited_experiments(tmp_path)
    assert {d.path.rsplit("/", 1)[-1] for d in caught.value.errors} == {"two.yaml"}
    assert any(d.line == 2 and "YAML syntax error" in d.message for d in caught.value.errors)
    with pytest.raises(UsageError, match="no terms folder"):
        cited_experiments(tmp_path / "missing")


def test_provenance_records_the_ptx_isa_nvrtc_emits() -> None:
    from verifier.provenance import _nvrtc_ptx_isa

    major, minor = _nvrtc_ptx_isa().split(".")
    assert major.isdigit() and minor.isdigit()


@pytest.mark.parametrize("how", ["exec", "fork"])
def test_a_step_runs_in_a_fresh_process_either_way_and_its_phases_are_recorded(
    how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NVRTC needs no GPU, so the compile-only step runs here: in an exec'd interpreter and in
    a child of the zygote, with the step's own environment, its result and phase times back."""
    from verifier import spawn

    monkeypatch.setattr(spawn, "SPAWN", how)
    monkeypatch.setattr(spawn, "LEDGER", [])
    result = spawn.spawn("kernels.saxpy", "compile_only", {"arch": "compute_75"}, {"CUDA_CACHE_PATH": str(tmp_path)})
    assert result["ok"] and result["kind"] == "ptx"
    assert result["compile_s"] > 0
    [entry] = spawn.LEDGER
    assert entry["step"] == "compile_only" and entry["wall_s"] > entry["compile_s"] > 0
    assert all(entry[k] >= 0 for k in ("start_s", "import_s", "exit_s", "other_step_s"))


def test_a_zygote_child_that_dies_is_a_step_failure_not_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    from verifier import spawn

    monkeypatch.setattr(spawn, "SPAWN", "fork")
    with pytest.raises(spawn.StepFailed, match="no_such_step"):
        spawn.spawn("kernels.saxpy", "no_such_step", {}, {}, timeout=60)


def test_the_host_cpu_is_named_from_the_machine_itself() -> None:
    from verifier.provenance import _cpu

    cpu = _cpu()
    assert cpu and cpu != "unknown" and "  " not in cpu and "\t" not in cpu and len(cpu) <= 200
    assert cpu in Path("/proc/cpuinfo").read_text().replace("\t", " ") or " " in cpu


def test_every_gate_name_an_experiment_writes_is_one_the_format_accepts() -> None:
    """A gate name the format refuses loses the whole run on the GPU ('not recorded'): three
    experiments did, on their first H200 run. Names are read from the source, placeholders filled."""
    import re

    from cudagloss.model.measurement_rules import GATE_NAME

    names = []
    for path in sorted((ROOT / "verifier").rglob("*.py")):
        for found in re.finditer(r'\.gate\(\s*f?"([^"]*)"', path.read_text(encoding="utf-8")):
            names.append((path.name, re.sub(r"\{[^}]*\}", "1", found[1])))
    assert len(names) > 40
    assert [n for n in names if not GATE_NAME.fullmatch(n[1])] == []
