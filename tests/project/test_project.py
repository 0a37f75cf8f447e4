"""One project (issue 28): mkdocs.yml read once, `extra: glossary:` typed with unknown options refused,
and every verb asking the project where the terms, templates and measurements are and what the site
is called: the folders named in mkdocs.yml are honoured by check, values and export alike."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, cudagloss
from cudagloss.errors import UsageError
from cudagloss.load.project import load_project
from cudagloss.model.project import Project, ProjectError

SRC = ROOT / "src" / "cudagloss"


def _glossary(tmp_path: Path, extra: str) -> Path:
    """The good fixture with its measurements in a folder only mkdocs.yml names."""
    shutil.copytree(FIXTURES / "good", tmp_path / "words")
    shutil.copytree(FIXTURES / "good-measurements", tmp_path / "data" / "runs")
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    config = f"site_name: Test Glossary\nsite_url: https://example.org/g/\n{extra}"
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    return tmp_path


GLOSSARY = "extra:\n  glossary:\n    terms_dir: words\n    measurements_dir: data/runs\n"


def test_every_verb_finds_the_folders_mkdocs_yml_names(tmp_path: Path) -> None:
    root = _glossary(tmp_path, GLOSSARY)
    check = cudagloss(root, "check")
    assert check.returncode == 0, check.stderr
    assert check.stdout.startswith("words: ") and "warning" not in check.stderr  # its measurements were found
    values = cudagloss(root, "values")
    assert values.returncode == 0 and 'measured("warp-size", "warp_size")' in values.stdout, values.stderr
    export = cudagloss(root, "export", "--out", "out")
    assert export.returncode == 0, export.stderr
    api = json.loads((root / "out" / "glossary.json").read_text(encoding="utf-8"))
    assert api["site"]["name"] == "Test Glossary" and api["site"]["url"] == "https://example.org/g/"
    llms = (root / "out" / "llms.txt").read_text(encoding="utf-8")
    assert llms.startswith("# Test Glossary")


def test_a_misspelt_option_is_one_line_with_what_was_meant(tmp_path: Path) -> None:
    root = _glossary(tmp_path, "extra:\n  glossary:\n    terms_dir: words\n    measurement_dir: data/runs\n")
    run = cudagloss(root, "check")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip() == (
        "cudagloss check: mkdocs.yml: 'extra.glossary': unknown option 'measurement_dir' "
        "(did you mean 'measurements_dir'?)"
    )
    with pytest.raises(ProjectError) as caught:
        load_project(root / "mkdocs.yml")
    assert (caught.value.key, caught.value.problem.startswith("unknown option")) == ("extra.glossary", True)


@pytest.mark.parametrize(
    ("glossary", "message"),
    [
        ("terms_dir: 3", "'extra.glossary.terms_dir': must be a folder name, not 3"),
        ("measurements_dir: [a]", "'extra.glossary.measurements_dir': must be a folder name, not ['a']"),
    ],
)
def test_a_folder_of_the_wrong_kind_is_refused(tmp_path: Path, glossary: str, message: str) -> None:
    (tmp_path / "mkdocs.yml").write_text(f"site_name: x\nextra:\n  glossary:\n    {glossary}\n", encoding="utf-8")
    with pytest.raises(UsageError, match=re.escape(message)):
        load_project(tmp_path / "mkdocs.yml")


def test_without_a_configuration_the_defaults_and_another_terms_folder_brings_its_own(tmp_path: Path) -> None:
    project = load_project(tmp_path / "mkdocs.yml")
    assert project == Project.default(tmp_path)
    assert (project.terms_dir, project.measurements_dir) == (tmp_path / "terms", tmp_path / "measurements")
    other = project.for_terms(tmp_path / "elsewhere" / "terms")
    assert other.measurements_dir == tmp_path / "elsewhere" / "measurements" and other.root == tmp_path
    assert project.for_terms(tmp_path / "terms") is project
    null = "site_name: x\nextra:\n  glossary:\n    measurements_dir: null\n"
    (tmp_path / "mkdocs.yml").write_text(null, encoding="utf-8")
    assert load_project(tmp_path / "mkdocs.yml").measurements_dir is None


DECIDES = re.compile(r'Path\.cwd\(\)|"CUDA Glossary"|/ "(?:measurements|terms|templates)"|"mkdocs\.yml"')
ALLOWED = {
    "model/project.py": "the project's defaults",
    "load/project.py": "reads mkdocs.yml",
    "errors.py": "shows a path relative to where the user is",
    "files/inside.py": "a write stays under where the user is unless told the root",
}


def test_no_other_module_decides_a_folder_a_root_or_the_site_name() -> None:
    found = [
        f"{path.relative_to(SRC)}:{n}: {line.strip()}"
        for path in sorted(SRC.rglob("*.py"))
        if str(path.relative_to(SRC)) not in ALLOWED
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if DECIDES.search(line) and not line.lstrip().startswith("#")
    ]
    assert not found, "ask the project (cudagloss.model.project) instead:\n" + "\n".join(found)
