"""`make verify DEVICES=all`: one node per card. A host with several GPUs cannot be made here,
so the card choice and each run's environment are tested as the functions that decide them;
the whole command is run for real on this GPU-less machine, where it must say so and exit 3."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from verifier.devices import chosen, host_wide, plan

from conftest import ROOT


def test_every_card_becomes_its_own_node_in_bus_order() -> None:
    runs = plan(chosen("all", 3), "dgx-a", {"PATH": "/bin", "VERIFY_NODE": "dgx-a"}, ["--all"])
    assert [node for node, _, _ in runs] == ["dgx-a-gpu0", "dgx-a-gpu1", "dgx-a-gpu2"]
    for index, (node, env, args) in enumerate(runs):
        assert env["CUDA_VISIBLE_DEVICES"] == str(index) and env["VERIFY_NODE"] == node and args == ["--all"]
        assert env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID" and env["PATH"] == "/bin"
    assert chosen("2,0,2", 4) == [0, 2]


def test_experiments_of_the_cards_together_run_once_more_with_every_chosen_card() -> None:
    together = host_wide()
    assert together == ["peer-access", "peer-copy"]
    runs = plan([0, 2], "dgx-a", {}, ["--all", "--out", "m"], together)
    shown = [(node, env["CUDA_VISIBLE_DEVICES"], args) for node, env, args in runs]
    assert shown == [
        ("dgx-a-gpu0", "0", ["--all", "--out", "m"]),
        ("dgx-a-gpu2", "2", ["--all", "--out", "m"]),
        ("dgx-a", "0,2", ["--out", "m", "--experiment", "peer-access"]),
        ("dgx-a", "0,2", ["--out", "m", "--experiment", "peer-copy"]),
    ]
    only = plan([0, 1], "h", {}, ["--experiment", "peer-copy"], together)
    assert [(n, e["CUDA_VISIBLE_DEVICES"], a) for n, e, a in only] == [("h", "0,1", ["--experiment", "peer-copy"])]
    other = plan([0, 1], "h", {}, ["--experiment", "ptx-jit"], together)
    assert [n for n, _, _ in other] == ["h-gpu0", "h-gpu1"]
    single = plan([1], "h", {}, ["--all"], together)
    assert [n for n, _, _ in single] == ["h-gpu1"]  # one card: nothing to measure together


@pytest.mark.parametrize("spec", ["4", "-1", "0,x", "", "all,0", "1;rm -rf /"])
def test_a_card_the_host_lacks_is_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="is not a GPU of this host"):
        chosen(spec, 4)


def test_without_a_gpu_it_says_so_in_one_line_and_exits_3() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "verifier.devices", "--devices", "all", "--all"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"},
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode == 0:
        pytest.skip("this machine has a GPU")
    assert run.returncode == 3 and "no usable CUDA GPU" in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
