"""`cudagloss new "Fat binary"`: a term file for a new term, with every field, ready to fill in.

Each text the author must write (the definition, the body, a source, where readers meet the
term) starts with PLACEHOLDER, and `cudagloss check` reports every one left, all at once, at
its line: the file fails the check until it is filled in, so the scaffold's words are never
published; everything else in it is valid as written. It never overwrites: the
file is created with O_EXCL semantics (a hard link of a finished temporary file), and a
name that another term already uses, as its name or an alias, is refused too.

The name is data from the command line (`make new` hands it over in the environment,
never through a shell): a name whose slug would not be a plain file name in terms/, or
with control, bidi or zero-width characters, is refused with a clear error.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import unicodedata
from pathlib import Path

import yaml

from cudagloss.errors import Diagnostic, ExitCode, GlossaryError, complain, did_you_mean, display_path
from cudagloss.files.atomic import create_text_exclusive
from cudagloss.files.inside import read_links_in, refuse_links
from cudagloss.load.terms import MODELINE_PREFIX, SCHEMA_NAME, load_sections, load_term, term_files
from cudagloss.model.term import PLACEHOLDER, is_slug
from cudagloss.text.skeleton import skeleton


def slugify(name: str) -> str:
    """'Fat binary' -> 'fat-binary', 'cuModuleLoadData()' -> 'cumoduleloaddata', 'Éclair' ->
    'eclair', 'Straße' -> 'strasse'. '' (so: pass --slug) where a letter or digit has no
    ASCII spelling: 'Ωmega' as 'mega' would name the file after another word."""
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", name).casefold())
    kept = "".join(ch for ch in folded if not unicodedata.combining(ch))
    if any(not ch.isascii() and unicodedata.category(ch)[0] in "LN" for ch in kept):
        return ""
    return re.sub(r"[^a-z0-9]+", "-", kept).strip("-")


def question_title(name: str) -> str:
    """A first guess at the page title, for the author to correct: 'What is a fat binary?'.
    All-capital words (PTX, JIT) keep their case; the article is a guess from the spelling."""
    first, _, rest = name.partition(" ")
    if first.isupper() or any(c.isupper() for c in first[1:]):
        return f"What is {name}?"
    shown = first.lower() + (f" {rest}" if rest else "")
    article = "an" if shown[:1] in "aeiou" else "a"
    return f"What is {article} {shown}?"


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


SOURCES = f"""sources:  # the public pages the facts come from
  - title: "{PLACEHOLDER}: the title of a public page a fact comes from"
    url: https://example.com/{PLACEHOLDER.replace(" ", "-")}
"""
"""The scaffold's sources: one placeholder item for the author to replace."""


def term_text(name: str, section: str, sections: list[str]) -> str:
    """The new file's text: every field of the model, a placeholder (PLACEHOLDER) in each
    text the author must write, which `cudagloss check` reports until it is replaced, and
    comments that say what goes where."""
    return f"""{MODELINE_PREFIX}../schema/{SCHEMA_NAME}
name: {_quoted(name)}
title: {_quoted(question_title(name))}  # the page title, as a reader's question
definition: >-
  {PLACEHOLDER}: one sentence that says what {name} is, shown first on its page and as the
  hover text of every link to it.
section: {section}  # one of: {", ".join(sections)}
aliases: []  # other names readers use; search finds them
abbreviations: []  # short forms such as JIT
plurals: []
error_strings: []  # exact messages a reader may paste into search
body: |
  {PLACEHOLDER}: the explanation, in Markdown. A number about a GPU is never typed: cite an
  experiment under measurements, then show one of its results with measured("experiment-id",
  "result_name") in double curly braces (AUTHORING.md has an example).
related: []  # slugs of related terms (file names without .yaml)
where_you_meet_this:  # the APIs, tools and messages where a reader meets the term (or [])
  - label: "{PLACEHOLDER}: the API, tool or message where a reader meets it"
    # link: https://docs.nvidia.com/cuda/  # optional: a URL or a term slug
    note: "{PLACEHOLDER}: what happens there."
{SOURCES}measurements: []
#  - experiment: ptx-jit  # `make verify ARGS=--list` lists them
#    note: Why this page cites it.
byline:  # filled from git history by `make byline` (offline) or `make links`; a value set by hand is kept
  written_by: pending
  reviewed_by: pending
  written_on: pending
  last_checked_on: pending
"""


MAX_NAME, MAX_SLUG = 200, 100


def _hidden(name: str) -> str | None:
    """The first control, format (bidi, zero-width), private-use or unassigned character."""
    return next((c for c in name if unicodedata.category(c) in ("Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp")), None)


def new_term(name: str, terms: Path, *, section: str | None = None, slug: str | None = None) -> Path:
    """Create terms/<slug>.yaml for name; GlossaryError says why not, with a hint. A committed
    link at the terms folder, or in it, is refused before anything there is read or resolved."""
    refuse_links(terms)  # the new file would go, and the terms be read, from anywhere
    if linked := read_links_in(terms, None, "the term files"):
        raise GlossaryError(linked)
    name = unicodedata.normalize("NFC", " ".join(name.split()))
    shown_folder = display_path(terms)
    chosen_slug = slug is not None
    slug = slugify(name) if slug is None else slug
    plain = is_slug(slug) and len(slug) <= MAX_SLUG
    where = f"{shown_folder}/{slug if plain else '?'}.yaml"

    def refuse(message: str, hint: str) -> GlossaryError:
        return GlossaryError([Diagnostic(where, 1, 1, message, hint)])

    if not name:
        raise refuse("the term has no name", 'give it one: cudagloss new "Fat binary"')
    hidden = _hidden(name)
    if hidden is not None:
        what = unicodedata.name(hidden, "a control character")
        raise refuse(f"the name holds an invisible character, U+{ord(hidden):04X} {what}", "type the name plainly")
    if len(name) > MAX_NAME:
        raise refuse(f"the name is {len(name)} characters long", f"a term's name has at most {MAX_NAME}")
    if not plain:
        rule = f"lower-case letters and digits, words joined by single dashes, at most {MAX_SLUG} characters"
        if chosen_slug:
            raise refuse(f"--slug {slug[:MAX_SLUG]!r} is not a valid slug", f"a slug is {rule}, e.g. fat-binary")
        raise refuse(
            f"{slug[:MAX_SLUG]!r} is not a valid slug" if slug else "the name's letters spell no file name in ASCII",
            f"choose the slug, {rule}: --slug fat-binary (make new ... SLUG=fat-binary)",
        )
    sections_file, _, diags = load_sections(terms)
    if sections_file is None:
        raise GlossaryError(diags)
    known = [s.slug for s in sections_file.sections]
    chosen = section or (known[0] if known else "")
    if chosen not in known:
        raise refuse(
            f"unknown section {chosen[:MAX_SLUG]!r}{did_you_mean(chosen, known)}", f"sections: {', '.join(known)}"
        )
    path = terms / f"{slug}.yaml"
    if os.path.lexists(path):
        raise refuse(
            "the term already exists; nothing was changed",
            f"edit {where}, or choose another slug (--slug, or SLUG= for make new)",
        )
    taken = _slug_taken(slug, terms)
    if taken is not None:
        raise refuse(taken, "choose another slug (--slug, or SLUG= for make new)")
    wanted = name.casefold()
    for other in term_files(terms):
        loaded, _ = load_term(other)
        if loaded is not None and wanted in (form.casefold() for form in loaded.surface_forms):
            raise refuse(
                f"'{name}' is already a name or alias of {display_path(other)}",
                "edit that term, or choose a name readers do not already find there",
            )
    text = term_text(name, chosen, known)
    if (yaml.safe_load(text) or {}).get("name") != name:  # the name must come back as typed
        raise refuse("this name cannot be written into a term file as it is", "type the name plainly")
    refuse_links(path)  # a committed `terms` link would put the new file wherever it points
    try:
        create_text_exclusive(path, text)
    except FileExistsError:
        raise refuse("the term already exists; nothing was changed", f"edit {where}") from None
    return path


def _slug_taken(slug: str, terms: Path) -> str | None:
    """Why another term has slug already (as its file name under another suffix, or one that
    looks like it, which `check` refuses), or None."""
    for other in term_files(terms):
        if other.stem == slug:
            return f"the slug '{slug}' is already used by {display_path(other)}"
        if is_slug(other.stem) and skeleton(other.stem) == skeleton(slug):
            return f"the slug '{slug}' looks like that of {display_path(other)}; a reader could not tell them apart"
    return None


NEW_FROM_ENV = ("CUDAGLOSS_NEW_TERM", "CUDAGLOSS_NEW_SECTION", "CUDAGLOSS_NEW_TERMS", "CUDAGLOSS_NEW_SLUG")
"""Where `new --from-env` finds the name, section, folder and slug: `make new` hands them
over in the environment, so a name is never text that a shell (or make) could run. An empty
one counts as not given (make exports a variable nobody set as empty)."""


def run(args: argparse.Namespace) -> ExitCode:
    name, section, terms, slug = args.name, args.section, args.terms, args.slug
    if args.from_env:
        if name is not None:
            complain("cudagloss new", "give the name or --from-env, not both")
            return ExitCode.USAGE
        name = os.environ.get(NEW_FROM_ENV[0])
        section = os.environ.get(NEW_FROM_ENV[1]) or section
        terms = os.environ.get(NEW_FROM_ENV[2]) or terms
        slug = os.environ.get(NEW_FROM_ENV[3]) or slug
    if name is None:
        print('usage: cudagloss new "Fat binary" [--section SLUG] [--slug SLUG] (or --from-env)', file=sys.stderr)
        return ExitCode.USAGE
    path = new_term(name, Path(terms) if terms else args.project.terms_dir, section=section, slug=slug)
    print(f"wrote {display_path(path)}: replace each {PLACEHOLDER} ('make check' lists them), then 'make serve'")
    return ExitCode.OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    new = sub.add_parser("new", help='write terms/<slug>.yaml for a new term: cudagloss new "Fat binary"')
    new.add_argument("name", nargs="?", help="the term as readers know it")
    new.add_argument(
        "--from-env", action="store_true", help=f"take the name, section and folder from {', '.join(NEW_FROM_ENV)}"
    )
    new.add_argument("--terms", help="the terms folder (default: the project's, terms/)")
    new.add_argument("--section", help="its section's slug (default: the first in _sections.yaml)")
    new.add_argument("--slug", help="the file name without .yaml, lower case with dashes (default: made from the name)")
    new.set_defaults(run=run)
