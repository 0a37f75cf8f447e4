"""fleet/slurm/verify-array.sbatch on a real single-node Slurm (Debian's slurm-wlm and munge).

The test starts munged, slurmctld and slurmd of its own (tests/fleet/slurmnode.py), submits
the array as a user would, and checks that every task ran in its own partition, that the task
on this GPU-less host reports exit 3 in its status file without a traceback, and that the
dependent collect job merges what the other tasks wrote (committed H200 files renamed to a
new node by tests/fleet/fixture_node.py). Without the packages it skips, except under CI
(CI=true), where it installs them; it runs as root (slurmd starts the jobs as their user).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import fixture_node
import pytest
import slurmnode

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "fleet" / "slurm" / "verify-array.sbatch"
FIXTURE_NODE = Path(__file__).resolve().parent / "fixture_node.py"
CLUSTER = "cgtest"


def _install_or_skip() -> None:
    if os.geteuid() != 0:
        pytest.skip("a private Slurm needs root here (slurmd runs each job as its user)")
    if not slurmnode.missing():
        return
    if os.environ.get("CI") != "true":
        pytest.skip(f"Slurm is not installed ({', '.join(slurmnode.missing())}): apt-get install slurm-wlm munge")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "slurm-wlm", "munge"]
    if subprocess.run(install, env=env, capture_output=True, timeout=600).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, timeout=600, check=True)
        subprocess.run(install, env=env, capture_output=True, timeout=600, check=True)
    assert not slurmnode.missing(), f"installed, but still missing {slurmnode.missing()}"


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[slurmnode.SlurmNode]:
    _install_or_skip()
    node = slurmnode.SlurmNode(tmp_path_factory.mktemp("slurm"), ("debug", "other"), CLUSTER)
    try:
        why = node.start(timeout=60)
        if why is not None:
            if os.environ.get("CI") == "true":
                pytest.fail(f"a single-node Slurm did not start: {why}")
            pytest.skip(f"a single-node Slurm did not start: {why}")
        yield node
    finally:
        node.stop()


def _current_experiments(count: int = 2) -> list[str]:
    """Experiments whose committed file of the fixture's node was made by today's recipe and
    summary (collect refuses a stale run, rightly: that is not what this test is about)."""
    from verifier.registry import catalog

    current = []
    for info in catalog():
        path = ROOT / "measurements" / info.id / f"{fixture_node.SOURCE_NODE}.json"
        if path.is_file():
            data = json.loads(path.read_text())
            if (data.get("recipe"), data.get("summary")) == (info.recipe, info.summary):
                current.append(info.id)
    assert len(current) >= count, f"fewer than {count} committed measurements match today's recipe"
    return current[:count]


def _submit(slurm: slurmnode.SlurmNode, shared: Path, targets: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT)],
        env={
            **slurm.env(),
            "CUDAGLOSS_SHARED": str(shared),
            "CUDAGLOSS_RUN_ID": "run1",
            "CUDAGLOSS_SLURM_GRES": "",  # no GPU here, so no gres either
            "CUDAGLOSS_SLURM_TARGETS": targets,
            "CUDA_VISIBLE_DEVICES": "",  # the real verifier finds no GPU even where there is one
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )


def _wait(slurm: slurmnode.SlurmNode, jobs: list[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run(
            ["squeue", "-h", "-j", ",".join(jobs), "-o", "%i %T"], env=slurm.env(), capture_output=True, text=True
        )
        if out.returncode == 0 and not out.stdout.strip():
            return
        time.sleep(0.3)
    pytest.fail(f"jobs {jobs} still queued after {timeout} s: {out.stdout}\n{slurm.logs()}")


@pytest.mark.slurm
def test_array_runs_each_task_in_its_partition_and_collect_merges(slurm: slurmnode.SlurmNode, tmp_path: Path) -> None:
    shared, merged = tmp_path / "shared", tmp_path / "merged"
    merged.mkdir()
    experiments = _current_experiments()
    started = time.monotonic()
    submitted = _submit(
        slurm,
        shared,
        "nogpu debug -;cpu-a other -;cpu-b debug -",
        CUDAGLOSS_SLURM_WRAP=f"{sys.executable} {FIXTURE_NODE}",
        CUDAGLOSS_COLLECT_INTO=str(merged),
        CUDAGLOSS_BIN=str(Path(sys.executable).parent / "cudagloss"),
        FIXTURE_EXPERIMENTS=",".join(experiments),
    )
    assert submitted.returncode == 0, submitted.stderr
    ids = re.search(r"array job (\d+) \(3 tasks\), collect job (\d+)", submitted.stdout)
    assert ids, submitted.stdout
    _wait(slurm, list(ids.groups()))
    run = shared / "run1"
    nodes = {
        f"{CLUSTER}-nogpu-0": ("debug", "3"),
        f"{CLUSTER}-cpu-a-1": ("other", "0"),
        f"{CLUSTER}-cpu-b-2": ("debug", "0"),
    }
    for i, (node, (partition, status)) in enumerate(nodes.items()):
        log = (run / f"task-{i}.log").read_text()
        assert f"node {node}, target" in log and f"partition {partition}," in log, log
        assert "Traceback" not in log, log
        assert (run / f"{node}.exit").read_text() == f"{status}\n", log
    assert "no usable CUDA GPU on this machine" in (run / "task-0.log").read_text()
    assert not (run / f"{CLUSTER}-nogpu-0").exists()
    # Slurm itself recorded each task's exit: 3 for the node without a GPU.
    shown = subprocess.run(
        ["scontrol", "-o", "show", "job", ids[1]], env=slurm.env(), capture_output=True, text=True, check=True
    ).stdout
    codes = dict(re.findall(r"ArrayTaskId=(\d+) .*?ExitCode=(\d+:\d+)", shown))
    assert codes == {"0": "3:0", "1": "0:0", "2": "0:0"}, shown
    report = (run / "collect.log").read_text()
    assert "Traceback" not in report, report
    assert f"node {CLUSTER}-nogpu-0: no usable GPU (exit 3), nothing to merge" in report, report
    assert f"merged {2 * len(experiments)} runs from 2 nodes" in report, report
    for node in (f"{CLUSTER}-cpu-a-1", f"{CLUSTER}-cpu-b-2"):
        assert f"node {node} (NVIDIA H200)" in report, report
        for experiment in experiments:
            written = json.loads((merged / experiment / f"{node}.json").read_text())
            assert written["provenance"]["node"] == node
    print(f"submit to merged: {time.monotonic() - started:.1f} s")


@pytest.mark.slurm
def test_a_task_that_cannot_be_placed_cancels_the_held_array(slurm: slurmnode.SlurmNode, tmp_path: Path) -> None:
    submitted = _submit(slurm, tmp_path, "a debug -;b no-such-partition -")
    assert submitted.returncode != 0
    ours = [line for line in submitted.stderr.splitlines() if line.startswith("verify-array:")]
    expected = r"task 1 cannot go to partition no-such-partition \(Slurm's reason above\); array job \d+ cancelled"
    assert len(ours) == 1 and re.fullmatch(f"verify-array: {expected}", ours[0]), submitted.stderr
    assert "Invalid partition" in submitted.stderr, submitted.stderr
    queued = subprocess.run(["squeue", "-h"], env=slurm.env(), capture_output=True, text=True, check=True).stdout
    assert not [line for line in queued.splitlines() if "cudaglos" in line], queued


@pytest.mark.slurm
def test_a_gpu_request_the_cluster_cannot_meet_submits_nothing(slurm: slurmnode.SlurmNode, tmp_path: Path) -> None:
    submitted = _submit(slurm, tmp_path, "a debug -", CUDAGLOSS_SLURM_GRES="gpu:1")  # this cluster has no GPUs
    assert submitted.returncode == 2, submitted
    said = "verify-array: the array was not accepted (Slurm's reason above); nothing submitted\n"
    assert submitted.stderr.endswith(said) and "gres" in submitted.stderr.lower(), submitted.stderr
    assert not (tmp_path / "run1").exists()
    queued = subprocess.run(["squeue", "-h"], env=slurm.env(), capture_output=True, text=True, check=True).stdout
    assert not [line for line in queued.splitlines() if "cudaglos" in line], queued


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CUDAGLOSS_SLURM_TARGETS": "h100 gpu"}, "must be: label partition constraint"),
        ({"CUDAGLOSS_SLURM_TARGETS": "$(touch${IFS}pwned) gpu -"}, "target label"),
        ({"CUDAGLOSS_SLURM_TARGETS": "h100 gpu|rm -"}, "target partition"),
        ({"CUDAGLOSS_SLURM_TARGETS": "h100 gpu a100;b"}, "must be: label partition constraint"),
        ({"CUDAGLOSS_SLURM_TARGETS": "h100 gpu `id`"}, "target constraint"),
        ({"CUDAGLOSS_SLURM_TARGETS": " ; # nothing"}, "no targets"),
        ({"CUDAGLOSS_RUN_ID": "../../etc"}, "CUDAGLOSS_RUN_ID"),
        ({"CUDAGLOSS_SHARED": "/tmp/a%jb"}, "CUDAGLOSS_SHARED"),
        ({"CUDAGLOSS_SHARED": "relative/path"}, "CUDAGLOSS_SHARED"),
        ({"SLURM_JOB_ID": "7"}, "not sbatch"),
        ({"CUDAGLOSS_STEP": "bogus"}, "unknown CUDAGLOSS_STEP"),
    ],
)
def test_a_bad_setting_is_one_line_and_submits_nothing(tmp_path: Path, env: dict[str, str], message: str) -> None:
    """No Slurm needed: every setting is checked before sbatch is looked for."""
    settings = {
        "CUDAGLOSS_SHARED": str(tmp_path / "shared"),
        "CUDAGLOSS_RUN_ID": "r",
        "SLURM_CONF": str(tmp_path / "no-cluster.conf"),  # should a check regress, sbatch reaches no cluster
        **env,
    }
    done = subprocess.run(
        ["bash", str(SCRIPT)], env={**os.environ, **settings}, cwd=tmp_path, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2, done
    assert message in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert done.stdout == "" and not (tmp_path / "shared").exists() and not (tmp_path / "pwned").exists()


def test_collect_says_why_each_node_is_left_out(tmp_path: Path) -> None:
    """The collect step alone (no Slurm needed): each task's status file read, merged only on 0."""
    (tmp_path / "My-Cluster-a-0.exit").write_text("3\n")
    (tmp_path / "My-Cluster-b-1.exit").write_text("1\n")
    (tmp_path / "My-Cluster-d-3.exit").write_text("\x1b]0;owned\x07\n")
    env = {
        "CUDAGLOSS_STEP": "collect",
        "SLURM_JOB_ID": "9",
        "SLURM_CLUSTER_NAME": "My Cluster!!",
        "CUDAGLOSS_RUN_DIR": str(tmp_path),
        "CUDAGLOSS_REPO": str(ROOT),
        "CUDAGLOSS_SLURM_TARGETS": "a p -;b p -;c p -;d p -",
    }
    done = subprocess.run(["bash", str(SCRIPT)], env={**os.environ, **env}, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1, done
    assert done.stdout.splitlines() == [
        "node My-Cluster-a-0: no usable GPU (exit 3), nothing to merge",
        "node My-Cluster-b-1: make verify exited 1, not merged: see task-1.log",
        "node My-Cluster-c-2: task 2 did not finish (timed out, cancelled or never started): see task-2.log and sacct",
        "node My-Cluster-d-3: make verify exited ?, not merged: see task-3.log",
        "collect: no node measured anything; nothing merged",
    ], done.stdout


@pytest.mark.parametrize("step", ["verify", "collect"])
def test_a_step_outside_its_job_is_one_line(tmp_path: Path, step: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "CUDAGLOSS_"))}
    done = subprocess.run(
        ["bash", str(SCRIPT)], env={**env, "CUDAGLOSS_STEP": step}, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2 and done.stderr == (
        f"verify-array: the {step} step runs in a job submitted by: bash fleet/slurm/verify-array.sbatch\n"
    ), done
