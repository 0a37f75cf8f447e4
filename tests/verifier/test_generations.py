"""make generations (issue 41): per-compute-capability facts computed by NVIDIA's cuda_occupancy.h
with the real g++, never typed; the committed file must be what the header computes now."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from verifier.cuda import supported_archs
from verifier.experiments import occupancy
from verifier.generations import FUNCTIONS, BadOutput, cc_name, parse

from cudagloss.errors import UsageError
from verifier import generations

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "computed" / "compute-capabilities.json"

try:
    HEADER: Path | None = generations.find_header(os.environ)
except UsageError:  # no toolkit here: the tests that need one skip
    HEADER = None
needs_tools = pytest.mark.skipif(HEADER is None or shutil.which("g++") is None, reason="needs cuda_occupancy.h and g++")


@pytest.fixture(scope="module")
def computed() -> dict[str, object]:
    if HEADER is None or shutil.which("g++") is None:
        pytest.skip("needs cuda_occupancy.h and g++")
    return generations.compute(HEADER, supported_archs())


def values_of(doc: dict[str, object]) -> dict[str, dict[str, object]]:
    values = doc["values"]
    assert isinstance(values, dict)
    return values


def results(path: Path) -> dict[str, Any]:
    """A committed measurement's values by name."""
    return {r["name"]: r["value"] for r in json.loads(path.read_text(encoding="utf-8"))["results"]}


def header_blocks(
    hdr: dict[str, Any], limits: dict[str, Any], regs: int, static: int, threads: int, dynamic: int
) -> int:
    """Blocks per SM from the header's per-CC values and a card's committed limits, as
    cudaOccMaxActiveBlocksPerMultiprocessor counts them (default carveout, no partitioned caching)."""

    def up(x: int, unit: int) -> int:
        return -(-x // unit) * unit

    warp, warps = limits["warp_size"], -(-threads // limits["warp_size"])
    by_warps = limits["max_threads_per_sm"] // warp // warps
    by_blocks = min(limits["max_blocks_per_sm"], hdr["cudaOccMaxBlocksPerMultiprocessor"])
    smem = up(static + dynamic + limits["reserved_shared_memory_per_block"], hdr["cudaOccSMemAllocationGranularity"])
    sm_shared = min(s for s in hdr["cudaOccAlignUpShmemSizeVoltaPlus"] if s >= limits["shared_memory_per_sm"])
    parts = hdr["cudaOccSubPartitionsPerMultiprocessor"]
    per_warp = up(regs * warp, hdr["cudaOccRegAllocationGranularity"])
    if per_warp * up(warps, parts) > limits["registers_per_block"]:
        by_regs = 0
    else:
        by_regs = (limits["registers_per_sm"] // parts // per_warp) * parts // warps
    barriers = hdr["cudaOccMaxBlocksPerSMBlockBarrierLimit"]
    return int(min(by_warps, by_blocks, sm_shared // smem, by_regs, barriers))


@needs_tools
def test_cc_90_agrees_with_the_occupancy_experiment(computed: dict[str, object]) -> None:
    """The experiment's register unit and sub-partitions are the header's for 9.0, and the header's
    values with each H100/H200's committed limits give every block count the driver measured
    (the worked example: 17 one-warp blocks of 12 KiB on the H200, where the naive count is 19)."""
    hdr = values_of(computed)["9.0"]
    assert isinstance(hdr, dict)
    assert hdr["cudaOccRegAllocationGranularity"] == occupancy.REGISTER_UNIT
    assert hdr["cudaOccSubPartitionsPerMultiprocessor"] == occupancy.SUB_PARTITIONS
    checked = 0
    for run in sorted((ROOT / "measurements" / "occupancy").glob("*.json")):
        limits_file = ROOT / "measurements" / "device-limits" / run.name
        if "~" in run.name or not limits_file.is_file():
            continue
        measured, limits = results(run), results(limits_file)
        for k in occupancy.KERNELS:
            regs, static = measured[f"{k}_registers_per_thread"], measured[f"{k}_static_shared_memory"]
            top = measured[f"{k}_max_threads_per_block"]
            for s in occupancy.SHARED_KIB:
                for b in occupancy.BLOCKS:
                    key = f"{k}_b{b}_s{s}k_blocks"
                    if key not in measured:
                        continue
                    want = 0 if b > top else header_blocks(hdr, limits, regs, static, b, s * 1024)
                    assert measured[key] == want, f"{run.name} {key}"
                    checked += 1
    assert checked >= 60
    h200 = results(ROOT / "measurements" / "occupancy" / "h200-3f1ceb1e.json")
    assert h200["light_b32_s12k_blocks"] == 17


@needs_tools
def test_committed_file_is_what_the_header_computes_now(computed: dict[str, object]) -> None:
    """The values, and what made them (the header's bytes, its toolkit, NVRTC's list): a new header,
    toolkit or NVRTC asks for a rerun. Where the header lies and which g++ built the program that
    asked it are recorded, not compared: another machine's are as good."""
    committed = json.loads(COMMITTED.read_text(encoding="utf-8"))
    for doc in (committed, computed):
        provenance = doc["provenance"]
        assert isinstance(provenance, dict)
        for incidental in ("computed_at", "compiler", "header"):
            provenance.pop(incidental)
    assert committed == computed, "run `make generations` and commit computed/compute-capabilities.json"


@needs_tools
def test_every_cc_nvrtc_supports_has_a_row(computed: dict[str, object]) -> None:
    committed = json.loads(COMMITTED.read_text(encoding="utf-8"))
    wanted = {cc_name(cc) for cc in supported_archs()}
    assert set(values_of(computed)) == wanted
    assert set(committed["values"]) == wanted
    for row in committed["values"].values():
        assert set(row) == set(FUNCTIONS)


@needs_tools
def test_a_cc_the_header_does_not_know_is_its_refusal() -> None:
    """6.0 predates the Volta carveout; 99.9 is no device: recorded as refused, no crash."""
    assert HEADER is not None
    got = parse(generations.run_program(HEADER, [60, 999]), [60, 999])
    assert got["6.0"]["cudaOccAlignUpShmemSizeVoltaPlus"] == {"refused": "CUDA_OCC_ERROR_UNKNOWN_DEVICE"}
    assert got["6.0"]["cudaOccSubPartitionsPerMultiprocessor"] == 2
    assert got["99.9"]["cudaOccMaxBlocksPerMultiprocessor"] == {"refused": "CUDA_OCC_ERROR_UNKNOWN_DEVICE"}


def test_a_missing_header_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    assert generations.main(["--no-fallback"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("make generations: no cuda_occupancy.h in ") and "CUDA_HOME" in err


def test_write_outside_the_repository_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert generations.main(["--write", "--out", str(tmp_path / "x.json")]) == 2
    assert "outside the repository" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def good(cc: int = 90) -> list[str]:
    """Lines as the program prints them for one CC."""
    lines = []
    for fn, (kind, _) in FUNCTIONS.items():
        value = {"int": "4", "ints": "0,8192", "enum": "PARTITIONED_GC_NOT_SUPPORTED"}[kind]
        lines.append(f"{cc} {fn} ok {value}")
    return lines


def test_the_parser_takes_what_the_program_prints() -> None:
    got = parse("\n".join(good()) + "\n", [90])
    assert got["9.0"]["cudaOccAlignUpShmemSizeVoltaPlus"] == [0, 8192]
    assert got["9.0"]["cudaOccMaxBlocksPerMultiprocessor"] == 4


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda ls: [*ls, "rm -rf / # garbage"], "is not 'CC function"),
        (lambda ls: [*ls, ls[0]], "given twice"),
        (lambda ls: ls[1:], "no answer for 9.0"),
        (lambda ls: [*ls, "80 cudaOccSMemAllocationGranularity ok 128"], "compute capability 80 was not asked"),
        (lambda ls: [*ls, "90 cudaOccTypedByHand ok 1"], "function cudaOccTypedByHand was not asked"),
        (lambda ls: [ls[0].replace("ok 4", "ok 4,5"), *ls[1:]], "gives a number"),
        (lambda ls: [ls[0].replace("ok 4", "ok HOPPER"), *ls[1:]], "gives a number"),
        (lambda ls: [ls[0].replace("ok 4", "refused NOPE"), *ls[1:]], "not one of the header's errors"),
        (lambda ls: [*ls[:-2], ls[-2].replace("NOT_SUPPORTED", "MAYBE"), ls[-1]], "not an enumerator"),
        (lambda ls: [*ls, "x" * 70000], "more than"),
    ],
)
def test_hostile_output_is_refused(change: object, says: str) -> None:
    assert callable(change)
    with pytest.raises(BadOutput, match=says):
        parse("\n".join(change(good())), [90])
