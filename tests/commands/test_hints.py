"""Every command a message names is one that runs (issue 16: a hint said `make verify --list`,
which make rejects). Each string of the package and the verifier (docstrings aside) is
searched for `make X` and `cudagloss X`: X must be a target of the Makefile or a verb of the
command line, a VAR= after a target must be a variable the Makefile reads, and an option
must be the verb's own (after a make target an option is make's, so it must go in ARGS=)."""

from __future__ import annotations

import argparse
import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

from conftest import ROOT
from cudagloss.commands import links
from cudagloss.commands.main import build_parser

SOURCES = [*sorted((ROOT / "src" / "cudagloss").rglob("*.py")), *sorted((ROOT / "verifier").rglob("*.py"))]
ENGLISH_AFTER_MAKE = {"it", "a", "an", "the", "them", "sure", "exports"}
"""`make it writable`, `make a text read`, `make exports a variable`: the verb, not the tool."""
ENGLISH_AFTER_CUDAGLOSS = {"version"}
_COMMAND = re.compile(r"\b(make|cudagloss) ([^\s`'\"]+)((?: [^\s`'\"]+)*)")


def strings(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every string constant that is not a docstring or a comment."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):  # an f-string: its literal parts, a placeholder ends a word
            yield node.lineno, "".join(str(v.value) if isinstance(v, ast.Constant) else " " for v in node.values)


@functools.cache
def makefile() -> tuple[set[str], set[str]]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z-]*):", text, re.MULTILINE))
    variables = set(re.findall(r"\$\(([A-Z_]+)\)", text)) | set(re.findall(r"\$\((?:value|origin) ([A-Z_]+)\)", text))
    return targets, variables


@functools.cache
def verb_parsers() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {**sub.choices, "links": links.build_parser()}


def problems_in(text: str) -> Iterator[str]:
    targets, variables = makefile()
    verbs = verb_parsers()
    for m in _COMMAND.finditer(text):
        tool, word, rest = m.group(1), m.group(2).rstrip(".,;:?!)"), m.group(3).split()
        if tool == "make":
            if word in ENGLISH_AFTER_MAKE:
                continue
            if word not in targets:
                yield f"'make {word}': no such target in the Makefile"
                continue
            for token in rest:
                if token.startswith("-"):
                    yield f"'make {word} {token}': make reads {token} as its own option; write ARGS={token}"
                elif "=" in token and token.split("=")[0].isupper():
                    if token.split("=")[0] not in variables:
                        yield f"'make {word} {token}': the Makefile reads no {token.split('=')[0]}"
                else:
                    break
        else:
            if word in ENGLISH_AFTER_CUDAGLOSS:
                continue
            if word not in verbs:
                yield f"'cudagloss {word}': no such verb"
                continue
            options = verbs[word]._option_string_actions
            for token in rest:
                if not token.startswith("-"):
                    continue
                option = token.split("=")[0].rstrip(".,;:?!)")
                if option not in options:
                    yield f"'cudagloss {word} {option}': {word} has no such option"


def test_every_command_a_message_names_runs() -> None:
    found = []
    for path in SOURCES:
        for line, text in strings(path):
            found += [f"{path.relative_to(ROOT)}:{line}: {p}" for p in problems_in(text)]
    assert not found, "\n".join(found)


def test_the_search_catches_what_it_is_for() -> None:
    """The search itself, on hints written wrong the ways they once were."""
    assert list(problems_in("see make verify ARGS=--list")) == []
    wrong = "'make verify --list': make reads --list as its own option; write ARGS=--list"
    assert list(problems_in("`make verify --list`")) == [wrong]
    assert list(problems_in("run `make verifi`")) == ["'make verifi': no such target in the Makefile"]
    assert list(problems_in("make verify EXPERIMENTS=x")) == [
        "'make verify EXPERIMENTS=x': the Makefile reads no EXPERIMENTS"
    ]
    assert list(problems_in("`cudagloss links --fast`")) == ["'cudagloss links --fast': links has no such option"]
    assert list(problems_in("cudagloss lnks")) == ["'cudagloss lnks': no such verb"]
    assert list(problems_in("make it writable; `cudagloss new --slug x`; cudagloss check::")) == []
