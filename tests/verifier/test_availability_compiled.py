"""make generations' second table (issue 41): which targets NVRTC compiles each feature's
smallest kernel for, compiled for real on the CPU; the committed file must be what NVRTC says now."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from verifier.cuda import CudaError
from verifier.kernels.features import FEATURES
from verifier.targets import MAX_REASON, cc_of, refusal

from verifier import availability

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "computed" / "instruction-availability.json"
TARGET_REFUSAL = re.compile(
    r"ptxas: (?:Instruction '[^']+' not supported on \.target '(?P<t1>sm_\w+)'"
    r"|(?:Feature|Modifier) '[^']+' requires \.target sm_(?P<least>\d+) or higher)"
    r"|nvrtc: __cluster_dims__ is not supported for this GPU architecture"
)
"""The compiler's words for 'this target lacks it'; any other refusal is a kernel that is wrong."""


@pytest.fixture(scope="module")
def computed() -> dict[str, object]:
    return availability.compute(os.cpu_count() or 1)


def test_committed_file_is_what_nvrtc_compiles_now(computed: dict[str, object]) -> None:
    """The features (with their kernels), the targets and every verdict; when it was computed is
    recorded, not compared. A new NVRTC, or an edited kernel, asks for `make generations`."""
    committed = json.loads(COMMITTED.read_text(encoding="utf-8"))
    for doc in (committed, computed):
        provenance = doc["provenance"]
        assert isinstance(provenance, dict)
        provenance.pop("computed_at")
    assert committed == computed, "run `make generations` and commit computed/instruction-availability.json"


def test_every_refusal_is_a_target_lacking_the_feature(computed: dict[str, object]) -> None:
    """Every kernel compiles somewhere, and every refusal names the target (or a lowest one above
    it): a kernel with a typo would be refused everywhere, in other words."""
    values = computed["values"]
    assert isinstance(values, dict)
    for feature in FEATURES:
        verdicts = {t: row[feature.id] for t, row in values.items()}
        assert availability.COMPILED in verdicts.values(), f"{feature.id} compiled for no target"
        for target, verdict in verdicts.items():
            if verdict == availability.COMPILED:
                continue
            found = TARGET_REFUSAL.fullmatch(verdict)
            assert found, f"{feature.id} on {target}: {verdict}"
            assert found["t1"] in (None, target)
            assert found["least"] is None or int(found["least"]) > cc_of(target)


def test_plain_targets_carry_features_forward(computed: dict[str, object]) -> None:
    """What the page cites NVIDIA for: a feature a plain target has, every later plain target has."""
    values = computed["values"]
    assert isinstance(values, dict)
    plain = sorted((t for t in values if not t[-1].isalpha()), key=cc_of)
    for feature in FEATURES:
        have = [values[t][feature.id] == availability.COMPILED for t in plain]
        assert have == sorted(have), f"{feature.id}: {dict(zip(plain, have, strict=True))}"


def test_the_features_name_pages_that_exist() -> None:
    ids = [f.id for f in FEATURES]
    assert len(set(ids)) == len(ids)
    for feature in FEATURES:
        assert (ROOT / "terms" / f"{feature.term}.yaml").is_file(), feature.term


@pytest.mark.parametrize(
    ("log", "said"),
    [
        (
            "ptxas application ptx input, line 42; error   : "
            "Instruction 'wgmma.fence' not supported on .target 'sm_80'\n"
            "ptxas fatal   : Ptx assembly aborted due to errors",
            "ptxas: Instruction 'wgmma.fence' not supported on .target 'sm_80'",
        ),
        ("k.cu(4): error: __cluster_dims__ is not supported for this GPU architecture", "nvrtc: __cluster_dims__ is "),
        ("", "nvrtc: NVRTC_ERROR_COMPILATION: compile failed"),
        ("x" * 5000, "nvrtc: NVRTC_ERROR_COMPILATION: xxx"),
    ],
)
def test_the_reason_is_the_first_error_line_without_its_ptx_line(log: str, said: str) -> None:
    exc = CudaError("nvrtcCompileProgram", "NVRTC_ERROR_COMPILATION", 6, "compile failed", log)
    got = refusal(exc)
    assert got.startswith(said) and len(got) <= MAX_REASON and "line 42" not in got


def test_write_outside_the_repository_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert availability.main(["--write", "--out", str(tmp_path / "x.json"), "--jobs", "1"]) == 2
    assert "outside the repository" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_write_through_a_link_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    link = ROOT / "computed" / "link-test-availability"
    link.symlink_to(tmp_path, target_is_directory=True)
    try:
        assert availability.main(["--write", "--out", str(link / "x.json"), "--jobs", "1"]) == 2
        err = capsys.readouterr().err
        assert "symbolic link" in err and err.count("\n") == 1
        assert not (tmp_path / "x.json").exists()
    finally:
        link.unlink()
