"""`make verify DEVICES=all`: one node per card. A host with several GPUs cannot be made here,
so the card choice and each run's environment are tested as the functions that decide them;
the whole command is run for real on this GPU-less machine, where it must say so and exit 3."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from verifier.devices import chosen, plan

from conftest import ROOT


def test_every_card_becomes_its_own_node_in_bus_order() -> None:
    runs = plan(chosen("all", 3), "dgx-a", {"PATH": "/bin", "VERIFY_NODE": "dgx-a"})
    assert [node for node, _ in runs] == ["dgx-a-gpu0", "dgx-a-gpu1", "dgx-a-gpu2"]
    for index, (node, env) in enumerate(runs):
        assert env["CUDA_VISIBLE_DEVICES"] == str(index) and env["VERIFY_NODE"] == node
        assert env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID" and env["PATH"] == "/bin"
    assert chosen("2,0,2", 4) == [0, 2]


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
