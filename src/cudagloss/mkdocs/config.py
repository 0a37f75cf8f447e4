"""The glossary's options in mkdocs.yml (`extra: glossary:`), typed.

Hooks cannot declare a plugin config, and MkDocs keeps `extra:` free-form for themes, so
the options are validated here with MkDocs' own config classes: a misspelt option or a
value of the wrong type stops the build with a message, instead of quietly falling back to
a default folder.
"""

from __future__ import annotations

import logging

from mkdocs.config import config_options as c
from mkdocs.config.base import Config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort, ConfigurationError

from cudagloss.errors import did_you_mean

log = logging.getLogger("mkdocs.hooks.glossary")
KEY = "extra.glossary"


class GlossaryConfig(Config):  # type: ignore[no-untyped-call]  # MkDocs' __init_subclass__ is unannotated
    """Folders are resolved against the folder of mkdocs.yml, as MkDocs resolves docs_dir."""

    terms_dir = c.Dir(default="terms")
    """The term YAML files, one per term."""
    templates_dir = c.Dir(default="templates")
    """The Jinja templates the pages are rendered from."""
    measurements_dir = c.Optional(c.Dir())
    """The measurement JSON the terms cite; null for a glossary without measurements."""
    measurements_dir.default = "measurements"  # when the option is left out; null still means none


def read_options(config: MkDocsConfig) -> GlossaryConfig:
    """The validated options; every mistake is logged and the build aborted."""
    options = GlossaryConfig(config_file_path=config.config_file_path)
    raw = config.extra.get("glossary", {})
    if isinstance(raw, dict) and raw.get("measurements_dir") == "":
        raw = {**raw, "measurements_dir": None}  # as before the typed options: empty means none
    try:
        options.load_dict(raw)
    except ConfigurationError as exc:
        log.error(f"Config value '{KEY}': {exc}")
        raise Abort(f"Aborted with an error in '{KEY}'") from None
    failed, warnings = options.validate()
    known = [name for name, _ in GlossaryConfig._schema]
    problems = [f"Config value '{KEY}.{key}': {error}" for key, error in failed]
    problems += [
        f"Config value '{KEY}.{key}': {warning}"
        if key in known
        else f"Config value '{KEY}': unknown option '{key}'{did_you_mean(key, known)}"
        for key, warning in warnings
    ]
    for problem in problems:
        log.error(problem)
    if problems:
        n = len(problems)
        raise Abort(f"Aborted with {n} error{'s' if n != 1 else ''} in '{KEY}'")
    return options
