"""The claims language: the conditions a term's prose depends on, tested on every node's values.

`holds` is author text from a pull request: our own recursive-descent parser reads it into a tree that
evaluation walks (never eval, compile or a template engine), in linear time, within MAX_* bounds.

    expr  := or                              or := and ('or' and)*        and := not ('and' not)*
    not   := 'not' not | comparison          comparison := sum (CMP sum)?  CMP: < <= > >= == != (one)
    sum   := product (('+' | '-') product)*  product := unary (('*' | '/') unary)*    unary := '-' unary | atom
    atom  := NUMBER | STRING | 'true' | 'false' | REF | CALL | '(' expr ')'     REF := experiment '.' result
    CALL  := ('max' | 'min' | 'differ' | 'floor' | 'ceil') '(' expr (',' expr)* ')'
             (differ: two REFs, model.compare's rule; floor and ceil: one value, rounded in base units)
    NUMBER := 1, 2.5 or 1e3 (no sign; 0 or 1e-300 to 1e300)    STRING := "..." or '...', printable, no backslash

A reference is read before a minus (results have no '-'): `1-ptx-jit.a` names experiment '1-ptx-jit'.
Evaluation, with its types, ranges and units, is cudagloss.model.claim_values'; units, cudagloss.model.units'.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cudagloss.errors import did_you_mean, shown
from cudagloss.model.refs import EXPERIMENT, RESULT

if TYPE_CHECKING:
    from cudagloss.model.units import Unit

MAX_LENGTH, MAX_DEPTH, MAX_REFERENCES = 1000, 32, 64
FUNCTIONS, KEYWORDS = ("max", "min", "differ", "floor", "ceil"), ("and", "or", "not", "true", "false")
CONDITION = "holds must be a condition: a comparison, and/or/not, or differ(...)"
EXAMPLE = "e.g. ptx-jit.cuinit_median > ptx-jit.load_jit_cold_cache_median"
ROUNDING = ("floor", "ceil")
SPLIT, RANGE = "split it into several claims", "keep numbers within what a double holds (about 1e±300)"
_COMPARE = ("<", "<=", ">", ">=", "==", "!=")
_LEVELS = {"or": ("name", ("or",), "and"), "and": ("name", ("and",), "not"), "cmp": ("op", _COMPARE, "sum")}
_LEVELS |= {"sum": ("op", ("+", "-"), "product"), "product": ("op", ("*", "/"), "-")}  # operator tokens, parts' level
_RANK = {"or": 1, "and": 2, "not": 3, "cmp": 4, "sum": 5, "product": 6, "-": 7}  # how tightly each binds; atoms 8
_SPACE = re.compile(r"[ \t\r\n]*")
_TOKEN = re.compile(
    rf"(?P<ref>{EXPERIMENT}\.{RESULT})|(?P<number>[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<string>\"[^\"\n]*\"|'[^'\n]*')|(?P<op><=|>=|==|!=|[<>+\-*/(),])"
)
_GLUED = re.compile(r"[A-Za-z0-9_.]+")
Lookup = Callable[[str, str], "Operand"]


class ClaimError(Exception):
    """A mistake in a claim at a 0-based offset into its text; the hint says how to fix it."""

    def __init__(self, message: str, offset: int, hint: str = "") -> None:
        super().__init__(message)
        self.message, self.offset, self.hint = message, offset, hint


class ClaimSyntaxError(ClaimError):
    """The text is not a condition by the grammar, or is past its bounds."""


class ClaimTypeError(ClaimError):
    """A well-formed condition whose values do not fit it: found while evaluating real values."""


@dataclass(frozen=True)
class Operand:
    """What the caller gives for a reference (and evaluation for a node): value, unit ('' for none;
    as written, or a Unit already read), samples."""

    value: float | int | str | bool
    unit: str | Unit = ""
    samples: Sequence[float] = ()


@dataclass(frozen=True)
class Expr:
    """A part of a condition at offset (its first character). kind: 'value' (value: number, text or truth value), 'ref'
    (text: experiment.result), 'call' (text: max, min or differ), 'not' or '-' (one part), or a flat chain
    of one level, parts[0] op parts[1] ...: 'or', 'and', 'cmp' (two parts), 'sum' or 'product'; ops: the
    (operator, offset) between parts. Flat chains keep the tree no deeper than the nesting."""

    kind: str
    offset: int
    text: str = ""
    value: float | str | bool = False
    parts: tuple[Expr, ...] = ()
    ops: tuple[tuple[str, int], ...] = ()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.pos, self.depth, self.refs = text, 0, 0, 0
        self.kind, self.word, self.at = self._next()

    def _next(self) -> tuple[str, str, int]:
        """The next token: its kind (ref, number, name, string, op or end), text and offset."""
        text, start = self.text, _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
        if start == len(text):
            return "end", "", start
        if (match := _TOKEN.match(text, start)) is None and (char := text[start]) in "\"'":
            raise ClaimSyntaxError("unclosed string", start, f"end it with {char} on the same line")
        if match is None:
            raise ClaimSyntaxError(f"unexpected character '{shown(char)}'", start, "compare with ==, join with and/or")
        self.pos, kind, word = match.end(), match.lastgroup or "", match.group()
        if kind in ("ref", "number") and (glued := _GLUED.match(text, self.pos)):
            what, right = ("number", "1, 2.5 or 1e3") if kind == "number" else ("reference", "experiment.result")
            raise ClaimSyntaxError(f"malformed {what} '{word}{glued.group()}'", start, f"write {right}")
        if kind == "number" and not (re.fullmatch(r"[0.]+([eE].*)?", word) or 1e-300 <= float(word) <= 1e300):
            raise ClaimSyntaxError(f"number '{shown(word, 60)}' is out of range", start, RANGE)
        if bad := [i for i, char in enumerate(word) if char == "\\" or not char.isprintable()]:
            message = f"a string cannot hold '{shown(word[bad[0]])}'"
            raise ClaimSyntaxError(message, start + bad[0], "text is compared as written")
        self.refs += kind == "ref"
        if self.refs > MAX_REFERENCES:
            raise ClaimSyntaxError(f"more than {MAX_REFERENCES} references", start, SPLIT)
        return kind, word, start

    def advance(self) -> tuple[str, int]:
        (word, at), (self.kind, self.word, self.at) = (self.word, self.at), self._next()
        return word, at

    def take(self, kind: str, *words: str) -> tuple[str, int] | None:
        """The current token, moving on, if it is one of words of that kind."""
        return self.advance() if self.kind == kind and self.word in words else None

    def fail(self, message: str, hint: str) -> ClaimSyntaxError:  # at the current token, which {found} names
        found = "the end" if self.kind == "end" else f"'{shown(self.word, 60)}'"
        return ClaimSyntaxError(message.replace("{found}", found), self.at, hint)

    def _nest(self, offset: int, change: int = 1) -> None:
        self.depth += change
        if self.depth > MAX_DEPTH:
            raise ClaimSyntaxError(f"nested deeper than {MAX_DEPTH} levels", offset, SPLIT)

    def chain(self, kind: str) -> Expr:
        """A chain of that kind, or a 'not' or '-' before its part."""
        if kind in ("not", "-") and (prefix := self.take("name" if kind == "not" else "op", kind)):
            self._nest(prefix[1])
            node = Expr(kind, prefix[1], parts=(self.chain(kind),))
            self._nest(prefix[1], -1)
            return node
        if kind in ("not", "-"):
            return self.chain("cmp") if kind == "not" else self._atom()
        token_kind, ops, below = _LEVELS[kind]
        parts, between = [self.chain(below)], list[tuple[str, int]]()
        while op := self.take(token_kind, *ops):
            if kind == "cmp" and between:
                raise ClaimSyntaxError("a comparison cannot be chained", op[1], "write a < b and b < c")
            between.append(op)
            parts.append(self.chain(below))
        return parts[0] if len(parts) == 1 else Expr(kind, parts[0].offset, parts=tuple(parts), ops=tuple(between))

    def _atom(self) -> Expr:
        kind, word, at = self.kind, self.word, self.at
        if kind == "name" and word not in FUNCTIONS + KEYWORDS:
            known = did_you_mean(word, FUNCTIONS + KEYWORDS)
            raise self.fail(f"unknown name {{found}}{known}", f"a value is written experiment.result, {EXAMPLE}")
        if kind == "ref":
            return Expr("ref", self.advance()[1], word)
        if (kind, word) == ("op", "(") or word in FUNCTIONS:
            return self._group()
        if kind not in ("number", "string") and word not in ("true", "false"):
            message = "unexpected end" if kind == "end" else "expected a value, found {found}"
            raise self.fail(message, "a value must follow: a reference, number, string, true or false")
        self.advance()
        value = float(word) if kind == "number" else word[1:-1] if kind == "string" else word == "true"
        return Expr("value", at, value=value)

    def _group(self) -> Expr:
        """'(' expr ')', or a call: name '(' expr (',' expr)* ')'."""
        name, at = self.advance() if self.kind == "name" else ("(", self.at)
        usage = "write differ(ptx-jit.a_median, ptx-jit.b_median)" if name == "differ" else f"write {name}(a, b)"
        usage = f"write {name}(a / b)" if name in ROUNDING else usage
        if not self.take("op", "("):  # a group's '(' is still current: only a call can lack it
            raise self.fail(f"expected '(' after {name}, found {{found}}", usage)
        self._nest(at)
        args = [self.chain("or")]
        while name != "(" and self.take("op", ","):
            args.append(self.chain("or"))
        if not self.take("op", ")"):
            after = "" if name == "(" else f" after {name}'s arguments"
            raise self.fail(f"expected ')'{after}, found {{found}}", "join conditions with and/or, arguments with ','")
        self._nest(at, -1)
        if name == "differ" and (len(args) != 2 or any(arg.kind != "ref" for arg in args)):
            raise ClaimSyntaxError("differ() takes exactly two references", at, usage)
        if name in ROUNDING and len(args) != 1:
            raise ClaimSyntaxError(f"{name}() takes one value", at, f"write {name}(a / b)")
        return args[0] if name == "(" else Expr("call", at, name, parts=tuple(args))


def parse(text: str) -> Expr:
    """The tree of a condition, or ClaimSyntaxError at its first mistake."""
    if len(text) > MAX_LENGTH:
        raise ClaimSyntaxError(f"longer than {MAX_LENGTH:,} characters ({len(text):,})", MAX_LENGTH, SPLIT)
    if not text.strip(" \t\r\n"):
        raise ClaimSyntaxError("empty condition", 0, f"write a condition, {EXAMPLE}")
    parser = _Parser(text)
    node = parser.chain("or")
    if parser.kind != "end":
        raise parser.fail("unexpected {found} after the condition", "join conditions with and/or")
    return node


def references(tree: Expr) -> list[tuple[str, str]]:
    """(experiment, result) of each reference in order of first appearance, once each."""
    if tree.kind == "ref":
        return [(tree.text.split(".")[0], tree.text.split(".")[1])]
    return list(dict.fromkeys(ref for part in tree.parts for ref in references(part)))


def show(
    tree: Expr, leaf: Callable[[Expr], str] = lambda ref: ref.text, symbols: Mapping[str, str] | None = None
) -> str:
    """The condition as text, spaced and parenthesised one way; leaf writes each reference, and
    symbols an operator ('*': '×') or a call ('floor': '⌊{}⌋', its arguments at the braces)."""

    symbols = symbols or {}

    def wrap(part: Expr, above: int) -> str:  # in parentheses unless it binds tighter than `above`
        return f"({show(part, leaf, symbols)})" if _RANK.get(part.kind, 8) <= above else show(part, leaf, symbols)

    rank, parts = _RANK.get(tree.kind, 8), tree.parts
    if tree.kind == "value":  # a number exactly as it parses back
        return repr(tree.value).removesuffix(".0") if isinstance(tree.value, float) else written(tree.value)
    if tree.kind == "ref":
        return leaf(tree)
    if tree.kind == "call":
        args = ", ".join(show(part, leaf, symbols) for part in parts)
        return symbols[tree.text].replace("{}", args) if tree.text in symbols else f"{tree.text}({args})"
    if tree.kind in ("not", "-"):
        return ("not " if tree.kind == "not" else "-") + wrap(parts[0], rank - 1)
    first = wrap(parts[0], rank - (tree.kind in ("sum", "product")))
    pairs = zip(tree.ops, parts[1:], strict=True)
    return first + "".join(f" {symbols.get(op, op)} {wrap(part, rank)}" for (op, _), part in pairs)


def written(value: float | int | str | bool, unit: str = "") -> str:
    """A value as written: text quoted, escaped, cut at 200 characters; numbers to 3 digits (all from 100 up); unit."""
    x = shown(value) if isinstance(value, str) else value
    if isinstance(x, bool | str):
        text = ("true" if x else "false") if isinstance(x, bool) else f"'{x}'" if '"' in x else f'"{x}"'
    else:
        text = f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"
    return text if not unit else text + unit if unit in ("×", "%") else f"{text} {unit}"
