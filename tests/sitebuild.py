"""Building the real site in a test: `mkdocs build --strict` on the repository's
configuration, or on a copy of it pointed at another terms and measurements folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, ROOT

MKDOCS = [sys.executable, "-m", "mkdocs"]
ZENSICAL = [sys.executable, "-m", "zensical"]


def build(config: Path, site: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MKDOCS, "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **env},
    )


def fixture_config(tmp_path: Path, terms: Path, measurements: Path = FIXTURES / "good-measurements") -> Path:
    """mkdocs.yml of the repository, pointed at another terms and measurements folder."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    text = text.replace("docs_dir: docs", f"docs_dir: {ROOT / 'docs'}")
    text = text.replace("custom_dir: overrides", f"custom_dir: {ROOT / 'overrides'}")
    text = text.replace("  - site_hooks/glossary.py", f"  - {ROOT / 'site_hooks/glossary.py'}")
    text = text.replace("    terms_dir: terms", f"    terms_dir: {terms}")
    text = text.replace("    templates_dir: templates", f"    templates_dir: {ROOT / 'templates'}")
    text = text.replace("    measurements_dir: measurements", f"    measurements_dir: {measurements}")
    text = re.sub(r"\nwatch:\n(  - .*\n)+", "\n", text)
    config = tmp_path / "mkdocs.yml"
    config.write_text(text, encoding="utf-8")
    return config


REPO_TERMS = sorted(p.stem for p in (ROOT / "terms").glob("*.yaml") if not p.name.startswith("_"))
