"""peer-access and peer-copy on the CPU (no kernel: copies and driver queries only). A host with
two GPUs cannot be made here, so what decides the results is tested as the functions that
decide it: which pairs, how a pair is named, the link from NVML's per-link answers, and each
experiment's gates and results from fixture numbers, down to the file make verify writes and the
values a page shows. The single-GPU outcome ("needs two GPUs") is tested the same way: it must
pass its gates, name the results a two-GPU host records, and leave their values empty."""

from __future__ import annotations

import datetime as dt
import importlib
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from verifier.experiment import Outcome
from verifier.experiments import peer_access, peer_copy
from verifier.registry import EXPERIMENTS, experiment_hash

from conftest import ROOT
from cudagloss.model.display import format_value
from cudagloss.model.measurement import Measurement, parse_measurement, record
from verifier import peer_pair, peers

# Fixture rates of plausible size (NVLink against a PCIe host link), written for this test: not measurements.
GBPS = {"peer": 300.0, "staged": 20.0}
FIXED_MS = 0.005
"""What every copy costs besides its bytes, in this fixture."""


def test_pairs_are_every_ordered_pair_and_copies_pair_gpu0_with_each_other() -> None:
    assert peers.ordered_pairs(1) == [] and peers.copy_pairs(1) == [] and peers.copy_pairs(0) == []
    assert peers.ordered_pairs(3) == [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]
    assert peers.copy_pairs(8) == [(0, b) for b in range(1, 8)]
    assert peers.pair_key(0, 1) == "gpu0_gpu1" and peers.way_key(1, 0) == "gpu1_to_gpu0"
    assert peers.needs_two(2, "0,1") == ""
    assert peers.needs_two(1, "3") == "needs two GPUs: 1 visible to CUDA (CUDA_VISIBLE_DEVICES 3); no pair to measure"


def test_cuda_visible_devices_is_recorded_as_a_file_may_hold_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert peers.visible() == "unset"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-8f2c,MIG-1/2")
    assert peers.visible() == "GPU-8f2c,MIG-1?2"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert peers.visible() == "''"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0\x1b[2J\u202e x@example.com" + "9" * 500)
    shown = peers.visible()
    assert len(shown) == 100 and shown.isascii() and "@" not in shown and "\x1b" not in shown
    outcome = peer_copy.summarise({"count": 1, "visible": shown, "pairs": {}})
    assert written(outcome, peer_copy, tmp_path).status == "ok"  # the format takes it: the run is not lost


def test_pci_bus_ids_of_cuda_and_nvml_are_one_spelling() -> None:
    assert peers.bus_key("0000:19:00.0") == peers.bus_key(b"00000000:19:00.0\0garbage") == "0:19:00.0"
    assert peers.bus_key("0001:AB:00.0") == "1:ab:00.0"
    assert peers.bus_key("zz:19:00.0") == "zz:19:00.0" and peers.bus_key("") == ""


def test_the_link_is_read_from_each_cards_active_nvlinks() -> None:
    b = "0000:1a:00.0"
    to_b = [peers.LinkEnd("gpu", peers.bus_key("00000000:1A:00.0"))] * 18
    to_other = [peers.LinkEnd("gpu", "0:99:00.0")] * 4
    switch = [peers.LinkEnd("switch", "0:c0:00.0")] * 18
    direct = peers.join(to_b + to_other, to_b, b, 0)
    assert (direct.direct, direct.nvlinks) == (18, 18) and peers.link_text(direct) == "NVLink, 18 links"
    through = peers.join(switch, switch, b, 50)
    assert through.nvlinks == 18 and peers.link_text(through) == "NVLink through NVSwitch, 18 links"
    half = peers.join(switch, [], b, 10)  # the other card has no link into the switches
    assert half.nvlinks == 0 and peers.link_text(half) == "PCIe, through one PCIe switch"
    unknown = peers.join(None, to_b, b, 30)
    assert unknown.nvlinks is None
    assert peers.link_text(unknown, "nvidia-ml-py is not installed") == (
        "PCIe path through one PCIe host bridge; NVLink nvidia-ml-py is not installed"
    )
    assert peers.link_text(peers.Joined(None, None, None), "why") == "unknown (why)"
    assert peers.link_text(peers.Joined(0, 0, 99)) == "PCIe (no NVLink between them)"


def test_without_nvml_the_link_is_unknown_and_nothing_raises() -> None:
    """Real: this machine has no NVML (or no GPU for it), so the reading must say why and carry on."""
    links, why = peers.read_links(["0000:19:00.0", "0000:1a:00.0"])
    assert links == {} and why
    assert why == "nvidia-ml-py is not installed" or why.startswith("NVML cannot open the cards")


def access_fixture(count: int, **pair: int) -> dict[str, Any]:
    one = {"can_access_peer": 1, "performance_rank": 0, "access_supported": 1, "native_atomics": 1}
    one |= {"cuda_array_access": 1, **pair}
    links = {f"{a}-{b}": [18, 0, 0] for a, b in peers.ordered_pairs(count) if a < b}
    uva = {"device_is_device": True, "host_is_host": True, "ordinal": 0, "same_address": True, "cumemcpy_intact": True}
    return {
        "count": count,
        "visible": "unset",
        "pairs": {f"{a}-{b}": dict(one) for a, b in peers.ordered_pairs(count)},
        "buses": [],
        "unified": [True] * count,
        "links": links,
        "links_unknown": "",
        "uva": uva,
    }


def copy_fixture(count: int) -> dict[str, Any]:
    def way() -> dict[str, Any]:
        ms = {
            f"{kind}_{peer_pair.size_name(size)}": [
                (FIXED_MS + size / GBPS[kind] / 1e6) * (1 + i / 1000) for i in range(10)
            ]
            for size in peer_pair.SIZES
            for kind in peer_pair.KINDS
        }
        return {"ms": ms, "intact": dict.fromkeys(ms, True)}

    pair = {"ok": True, "can_access_peer": [True, True], "sizes": list(peer_pair.SIZES), "ways": [way(), way()]}
    return {"count": count, "visible": "unset", "pairs": {f"0-{b}": pair for _, b in peers.copy_pairs(count)}}


def written(outcome: Outcome, experiment: Any, tmp_path: Path) -> Measurement:
    """The outcome as make verify records it (the site's own checks), read back."""
    measurement = Measurement(
        experiment=experiment.ID,
        purpose=experiment.PURPOSE,
        code_hash=experiment_hash(experiment),
        status="ok" if all(g.passed for g in outcome.gates) else "failed",
        provenance={"node": "cpu-test", "recorded_at": dt.datetime.now(dt.timezone.utc).isoformat()},
        gates=outcome.gates,
        results=outcome.results,
    )
    path = record(measurement, tmp_path)
    return parse_measurement(path.read_text(encoding="utf-8"), str(path))


def test_on_one_gpu_peer_access_passes_says_it_needs_two_and_still_measures_unified_addressing(
    tmp_path: Path,
) -> None:
    outcome = peer_access.summarise(access_fixture(1) | {"links": {}})
    assert outcome.gates and all(g.passed for g in outcome.gates)
    assert outcome.gates[0].detail.startswith("needs two GPUs: 1 visible")
    m = written(outcome, peer_access, tmp_path)
    values = {r.name: r for r in m.results}
    assert values["gpus_visible"].value == 1 and values["ordered_pairs"].value == 0
    assert values["unified_addressing"].value is True and format_value(values["unified_addressing"]) == "yes"
    assert values["cumemcpy_infers_direction"].value is True
    # What a two-GPU host records is named, without a value: pages say so rather than an error.
    for name in ("gpu0_gpu1_can_access_peer", "gpu1_gpu0_native_atomics", "gpu0_gpu1_link", "gpu0_gpu1_nvlinks"):
        assert values[name].value is None and format_value(values[name]) == "not measured"
    assert "gpu1_gpu0_link" not in values
    assert m.status == "ok" and (tmp_path / "peer-access" / "cpu-test.json").is_file()


def test_on_two_gpus_peer_access_names_each_pair_and_a_disagreeing_driver_fails(tmp_path: Path) -> None:
    outcome = peer_access.summarise(access_fixture(2))
    assert all(g.passed for g in outcome.gates)
    values = {r.name: r for r in written(outcome, peer_access, tmp_path).results}
    assert values["gpu0_gpu1_link"].value == "NVLink, 18 links" and values["gpu0_gpu1_nvlinks"].value == 18
    assert values["gpu1_gpu0_performance_rank"].value == 0 and values["peer_capable_pairs"].value == 2
    assert values["gpu0_gpu1_can_access_peer"].value is True
    bad = peer_access.summarise(access_fixture(2, can_access_peer=1, access_supported=0))
    assert not bad.gates[1].passed and bad.gates[1].detail == "disagree: 0-1, 1-0"
    short = access_fixture(3)
    del short["pairs"]["2-1"]
    assert not peer_access.summarise(short).gates[0].passed


def test_on_one_gpu_peer_copy_passes_says_it_needs_two_and_names_what_two_would_measure(tmp_path: Path) -> None:
    outcome = peer_copy.summarise({"count": 1, "visible": "0", "pairs": {}})
    assert [g.passed for g in outcome.gates] == [True, True, True] and outcome.repeats == 0
    assert all(g.detail.startswith("needs two GPUs: 1 visible to CUDA (CUDA_VISIBLE_DEVICES 0)") for g in outcome.gates)
    values = {r.name: r for r in written(outcome, peer_copy, tmp_path).results}
    assert values["gpus_visible"].value == 1 and values["pairs_measured"].value == 0
    for name in ("gpu0_to_gpu1_peer_64mib", "gpu1_to_gpu0_staged_latency", "gpu0_to_gpu1_peer_over_staged"):
        assert (
            values[name].value is None and values[name].samples == [] and format_value(values[name]) == "not measured"
        )
    assert values["gpu0_to_gpu1_peer_4kib"].unit == "GB/s" and values["gpu0_to_gpu1_peer_latency"].unit == "µs"


def test_on_two_gpus_peer_copy_gives_rates_latencies_and_ratios_with_their_samples(tmp_path: Path) -> None:
    outcome = peer_copy.summarise(copy_fixture(2))
    assert all(g.passed for g in outcome.gates) and outcome.repeats == 10
    values = {r.name: r for r in written(outcome, peer_copy, tmp_path).results}
    rate = values["gpu0_to_gpu1_peer_256mib"]
    assert rate.value == pytest.approx(GBPS["peer"], rel=0.02) and len(rate.samples) == 10
    assert values["gpu1_to_gpu0_staged_64mib"].value == pytest.approx(GBPS["staged"], rel=0.02)
    latency = values["gpu0_to_gpu1_peer_latency"]
    assert latency.unit == "µs" and latency.value == pytest.approx(statistics.median(latency.samples), abs=1e-3)
    assert latency.samples[0] == round((FIXED_MS + 4096 / GBPS["peer"] / 1e6) * 1000, 3)
    assert values["gpu0_to_gpu1_peer_over_staged"].value == pytest.approx(15, rel=0.02)
    assert values["gpu0_gpu1_peer_access"].value is True and values["gpu0_gpu1_largest_size"].value == 256
    assert "4 KiB from GPU 0 to GPU 1" in values["gpu0_to_gpu1_peer_4kib"].description
    assert len([r for r in outcome.results if r.unit == "GB/s"]) == 2 * 2 * len(peer_pair.SIZES)
    raw = copy_fixture(2)
    raw["pairs"]["0-1"]["can_access_peer"] = [False, False]
    values = {r.name: r for r in peer_copy.summarise(raw).results}
    assert values["gpu0_gpu1_peer_access"].value is False
    assert "without peer access (the driver stages it)" in values["gpu1_to_gpu0_peer_1mib"].description
    four = peer_copy.summarise(copy_fixture(4))
    assert {r.name for r in four.results} >= {"gpu0_to_gpu3_peer_4kib", "gpu3_to_gpu0_staged_latency"}


def test_corrupted_bytes_a_failed_pair_a_missing_pair_or_an_impossible_rate_fail_their_gate() -> None:
    raw = copy_fixture(2)
    raw["pairs"]["0-1"]["ways"][1]["intact"]["staged_1mib"] = False
    gates = peer_copy.summarise(raw).gates
    assert not gates[1].passed and gates[1].detail == "corrupted: gpu1_to_gpu0_staged_1mib"
    raw = copy_fixture(3)
    raw["pairs"]["0-2"] = {"ok": False, "error_name": "CUDA_ERROR_OUT_OF_MEMORY", "error_code": 2,
                           "error_message": "out of memory", "jit_log": ""}  # fmt: skip
    gates = peer_copy.summarise(raw).gates
    assert not gates[0].passed and "0-2: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory" in gates[0].detail
    raw = copy_fixture(3)
    del raw["pairs"]["0-2"]
    assert peer_copy.summarise(raw).gates[0].detail == "0-2: not run"
    raw = copy_fixture(2)
    raw["pairs"]["0-1"]["ways"][0]["ms"]["peer_256mib"] = [1e-3] * 10
    assert not peer_copy.summarise(raw).gates[2].passed


def test_sizes_fit_memory_and_the_step_runs_where_spawn_looks_for_it() -> None:
    gib = 1 << 30
    assert peer_pair.fitting(64 * gib, 140 * gib) == list(peer_pair.SIZES)
    assert peer_pair.fitting(1 * gib, 140 * gib)[-1] == 64 << 20
    assert peer_pair.fitting(64 * gib, 8 << 20) == [4 << 10, 64 << 10, 1 << 20]
    step = importlib.import_module("verifier.peer_pair").step_copies  # spawn("peer_pair", "copies", ...)
    assert callable(step)


def test_both_experiments_are_registered_and_hash_the_helpers_they_run_through(tmp_path: Path) -> None:
    ids = [m.ID for m in EXPERIMENTS]
    assert ids.index("peer-copy") == ids.index("peer-access") + 1  # experiments added later follow them
    assert set(peer_copy.USES) == {"gpu.py", "timing.py", "peers.py", "peer_pair.py"} and peer_access.USES == (
        "peers.py",
    )
    for name in ("peers.py", "peer_pair.py"):
        assert (Path(peer_copy.__file__).parent.parent / name).is_file()


def test_the_smoke_test_without_a_gpu_or_with_bad_arguments_is_one_line_and_an_exit_status() -> None:
    """Real processes: `python3 -m verifier.peer_pair 0 0` is what the lead runs on one GPU."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"}
    for argv, code in ((["0"], 2), (["0", "x"], 2), (["0", "0"], 3)):
        run = subprocess.run(
            [sys.executable, "-m", "verifier.peer_pair", *argv],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if code == 3 and run.returncode == 0:
            pytest.skip("this machine has a GPU")
        assert run.returncode == code and "Traceback" not in run.stderr
        assert len(run.stderr.strip().splitlines()) == 1 and not run.stdout


def test_after_a_one_gpu_run_the_terms_that_cite_pairs_still_pass_check_strict(tmp_path: Path) -> None:
    """The single-GPU files name every pair result the terms cite, without values: `make check
    --strict` must pass with them committed (a missing name would be an error at the citation)."""
    import shutil

    folder = tmp_path / "measurements"
    shutil.copytree(ROOT / "measurements", folder)
    written(peer_access.summarise(access_fixture(1) | {"links": {}}), peer_access, folder)
    written(peer_copy.summarise({"count": 1, "visible": "unset", "pairs": {}}), peer_copy, folder)
    run = subprocess.run(
        [sys.executable, "-m", "cudagloss", "check", "--strict", "--measurements", str(folder), str(ROOT / "terms")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    for slug in ("nvlink", "peer-to-peer-access", "unified-virtual-addressing"):
        assert (ROOT / "terms" / f"{slug}.yaml").is_file()
