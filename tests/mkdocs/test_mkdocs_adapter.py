"""The MkDocs adapter's own contract: typed options that fail the build when wrong, and a
compatibility module that says when the versions it was written for have changed."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from conftest import FIXTURES
from cudagloss.mkdocs import compat
from sitebuild import build, fixture_config


def _config_with(tmp_path: Path, option: str, line: str) -> Path:
    """The fixture site's mkdocs.yml with the line of one glossary option replaced."""
    config = fixture_config(tmp_path, FIXTURES / "good")
    text, n = re.subn(rf"(?m)^    {option}: .*$", f"    {line}", config.read_text(encoding="utf-8"))
    assert n == 1
    config.write_text(text, encoding="utf-8")
    return config


@pytest.mark.builders
def test_a_misspelt_option_fails_the_build_and_names_the_option(tmp_path: Path) -> None:
    run = build(_config_with(tmp_path, "terms_dir", f"term_dir: {FIXTURES / 'good'}"), tmp_path / "site")
    assert run.returncode != 0
    assert "Config value 'extra.glossary': unknown option 'term_dir' (did you mean 'terms_dir'?)" in run.stderr
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "site" / "terms").exists()


@pytest.mark.builders
def test_an_option_of_the_wrong_type_fails_the_build(tmp_path: Path) -> None:
    run = build(_config_with(tmp_path, "templates_dir", "templates_dir: 3"), tmp_path / "site")
    assert run.returncode != 0
    assert "Config value 'extra.glossary.templates_dir': Expected type: <class 'str'> but received: <class 'int'>" in (
        run.stderr
    )
    assert "unknown option" not in run.stderr
    assert "Traceback" not in run.stderr


def test_the_compat_module_says_which_workarounds_may_no_longer_apply(caplog: pytest.LogCaptureFixture) -> None:
    assert compat.version_note(compat.WRITTEN_FOR) is None
    fake = {**compat.WRITTEN_FOR, "mkdocs-material": "10.0.0"}  # the one mock: an upgrade that did not happen
    with caplog.at_level(logging.INFO, logger="mkdocs"):
        compat.report_versions(fake)
    [record] = caplog.records
    assert record.levelno == logging.INFO
    assert "mkdocs-material 10.0.0 (written for 9.8.2)" in record.getMessage()
    assert record.getMessage().endswith("may no longer apply: the search-index merge")


@pytest.mark.parametrize(
    ("given", "expected"),
    [({}, "measurements"), ({"measurements_dir": None}, None), ({"measurements_dir": ""}, None)],
)
def test_measurements_default_beside_the_config_and_empty_or_null_means_none(
    tmp_path: Path, given: dict[str, object], expected: str | None
) -> None:
    from mkdocs.config.defaults import MkDocsConfig

    from cudagloss.mkdocs.config import read_options

    config = MkDocsConfig(config_file_path=str(tmp_path / "mkdocs.yml"))
    config.load_dict({"site_name": "x", "extra": {"glossary": given}})
    found = read_options(config).measurements_dir
    assert found == (str(tmp_path / expected) if expected else None)
