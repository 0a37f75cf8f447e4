"""The MkDocs adapter's own contract: typed options that fail the build when wrong, a
compatibility module that says when the versions it was written for have changed, and
failures sorted by the programs' one classification (cudagloss.boundary)."""

from __future__ import annotations

import errno
import logging
import re
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from cudagloss.errors import UsageError
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
    assert "Config value 'extra.glossary.templates_dir': must be a folder name, not 3" in run.stderr
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
    from cudagloss.load.project import project_from

    found = project_from({"site_name": "x", "extra": {"glossary": given}}, tmp_path / "mkdocs.yml").measurements_dir
    assert found == (tmp_path / expected if expected else None)


@pytest.mark.parametrize(
    ("raised", "line"),
    [
        (UsageError("no folder x"), "glossary: no folder x"),
        (
            OSError(errno.EROFS, "Read-only file system", "x.json"),
            "glossary: cannot write x.json: Read-only file system",
        ),
    ],
    ids=["usage", "read-only"],
)
def test_the_adapter_sorts_failures_as_the_command_line_does(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, raised: Exception, line: str
) -> None:
    """The adapter's boundary is cudagloss.boundary.classify: what the user can fix besides the
    terms' mistakes is one logged line and an abort, as MkDocs ends a build; a bug passes."""
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    from cudagloss.mkdocs import adapter

    config = load_config(str(ROOT / "mkdocs.yml"))

    def fails(*_args: object, **_kwargs: object) -> None:
        raise raised

    monkeypatch.setattr(adapter, "build_site_content", fails)
    with caplog.at_level(logging.ERROR, logger="mkdocs"), pytest.raises(Abort, match=re.escape(line)):
        adapter.GlossaryAdapter(config)
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [line]
    monkeypatch.setattr(adapter, "build_site_content", lambda *_a, **_k: 1 / 0)
    with pytest.raises(ZeroDivisionError):  # a bug keeps its traceback
        adapter.GlossaryAdapter(config)
