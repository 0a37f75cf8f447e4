"""`make verify` writes no run under a node name committed for another card, nor a card
committed under another name: one line through verify's own error boundary, exit 2, nothing
written. Real files, fake Measurements through the runner's own settle()."""

from __future__ import annotations

from pathlib import Path

import pytest
from verifier.settle import settle

from cudagloss.boundary import guarded
from cudagloss.errors import ExitCode
from cudagloss.model.measurement import Gate, Measurement, Result, record

A = "GPU-3f1ceb1e-691f-a5e9-238b-cfe034a15cbc"
B = "GPU-8e1bd08b-cce3-1f01-7040-2722691e81b7"


def run(node: str, card: str | None, experiment: str = "copy", day: int = 1, *extra: Result) -> Measurement:
    provenance: dict[str, object] = {"node": node, "gpu_name": "NVIDIA H200"}
    provenance["recorded_at"] = f"2026-11-{day:02d}T10:00:00+00:00"
    provenance |= {"duration_s": 1.0, **({"gpu_uuid": card} if card else {})}
    results = [Result("sm_count", 132, "SMs"), *extra]
    return Measurement(experiment, "test", "sha256:now", "ok", provenance, [Gate("ok", True)], results)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def verify(m: Measurement, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """settle() inside the boundary verifier/__main__.py runs make verify in: status and stderr."""

    def work() -> int:
        settle(m, out, lambda line: None)
        return ExitCode.OK

    return guarded("make verify", work), capsys.readouterr().err


def test_a_name_committed_for_another_card_stops_the_run_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record(run("h200-a", A, "ptx-jit"), tmp_path)  # another experiment: the name is the card's everywhere
    before = snapshot(tmp_path)
    status, err = verify(run("h200-a", B), tmp_path, capsys)
    assert status == 2 and ExitCode(status) is ExitCode.USAGE
    assert err == (
        f"make verify: node 'h200-a' is card {A} ({tmp_path / 'ptx-jit' / 'h200-a.json'}); this is card {B}: "
        "name this card's node apart with VERIFY_NODE=<new name>\n"
    )
    assert snapshot(tmp_path) == before, "nothing written"


def test_an_earlier_run_says_which_card_the_name_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "copy").mkdir()
    record(run("h200-a", A), tmp_path)
    (tmp_path / "copy" / "h200-a.json").rename(tmp_path / "copy" / "h200-a~20261101T100000Z.json")
    status, err = verify(run("h200-a", B, day=2), tmp_path, capsys)
    assert status == 2 and "h200-a~20261101T100000Z.json); this is card" in err
    assert not (tmp_path / "copy" / "h200-a.json").exists()


def test_a_card_committed_under_another_name_is_told_that_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record(run("h200-a", A), tmp_path)
    before = snapshot(tmp_path)
    status, err = verify(run("h200-b", A, day=2), tmp_path, capsys)
    assert status == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"make verify: this card, {A}, is node 'h200-a' ({tmp_path / 'copy' / 'h200-a.json'})")
    assert err.rstrip().endswith("a card keeps its name; run with VERIFY_NODE=h200-a")
    assert snapshot(tmp_path) == before


def test_devices_all_holds_each_card_to_its_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """DEVICES=all names cards <host>-gpu<N>; a card that moved to another index is refused, and
    the host-wide run under the host's name (several cards together) names no card."""
    record(run("box-gpu0", A), tmp_path)
    record(run("box-gpu1", B), tmp_path)
    status, err = verify(run("box-gpu1", A, day=2), tmp_path, capsys)
    assert status == 2 and f"node 'box-gpu1' is card {B}" in err
    together = run("box", A, "peer-access", 2, Result("gpus_visible", 2))
    assert verify(together, tmp_path, capsys) == (0, "")
    assert (tmp_path / "peer-access" / "box.json").is_file()
    assert verify(run("box-gpu0", A, day=3), tmp_path, capsys) == (0, ""), "the host-wide file names no card"


def test_the_same_card_and_a_run_that_names_no_card_are_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record(run("h200-a", A), tmp_path)
    assert verify(run("h200-a", A, day=2), tmp_path, capsys) == (0, "")
    assert verify(run("h200-c", None, day=2), tmp_path, capsys) == (0, ""), "no gpu_uuid (no NVML): not held"
    assert (tmp_path / "copy" / "h200-c.json").is_file()
