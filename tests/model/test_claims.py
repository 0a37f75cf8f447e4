"""The claims language: parsing, evaluation on real values, every error with its message and offset."""

from __future__ import annotations

import pytest

from cudagloss.model.claim_values import evaluate, explain
from cudagloss.model.claims import (
    CONDITION,
    ClaimError,
    ClaimSyntaxError,
    ClaimTypeError,
    Operand,
    parse,
    references,
    show,
)

APART = ([1.0, 1.02, 1.05, 1.08, 1.1], [10.0, 10.2, 10.5, 10.8, 11.0])
"""Five samples each, clearly apart: Mann-Whitney p = 2/252 and a tenfold change."""
OVERLAPPING = ([1.0, 1.2, 1.4, 1.6, 1.8], [1.1, 1.3, 1.5, 1.7, 1.9])

VALUES = {
    "ptx-jit.cuinit_median": Operand(148.3, "ms"),
    "ptx-jit.load_jit_cache_disabled_median": Operand(20.6, "ms"),
    "ptx-jit.load_jit_cold_cache_median": Operand(17.8, "ms"),
    "ptx-jit.a": Operand(3, "ms"),
    "ptx-jit.b": Operand(2, "ms"),
    "ptx-jit.grid": Operand(8, "blocks"),
    "ptx-jit.ratio": Operand(4.0),
    "ptx-jit.zero": Operand(0),
    "ptx-jit.fast": Operand(1.05, "ms", APART[0]),
    "ptx-jit.slow": Operand(10.5, "ms", APART[1]),
    "ptx-jit.left": Operand(1.4, "ms", OVERLAPPING[0]),
    "ptx-jit.right": Operand(1.5, "ms", OVERLAPPING[1]),
    "ptx-jit.count": Operand(9, "blocks", [9.0, 9.0, 9.0]),
    "ptx-jit.flag": Operand(True),
    "no-kernel-image.error_name": Operand("CUDA_ERROR_NO_BINARY_FOR_GPU"),
}


LOADS = "ptx-jit.load_jit_cache_disabled_median, ptx-jit.load_jit_cold_cache_median"


def lookup(experiment: str, result: str) -> Operand:
    return VALUES[f"{experiment}.{result}"]


def holds(text: str) -> bool:
    return evaluate(parse(text), lookup)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"ptx-jit.cuinit_median > max({LOADS})", True),
        (f"ptx-jit.cuinit_median < min({LOADS})", False),
        ("ptx-jit.a >= 3 and ptx-jit.a <= 3 and ptx-jit.a == 3 and ptx-jit.a != 4", True),
        ("ptx-jit.a > ptx-jit.b", True),
        ("ptx-jit.a < ptx-jit.b", False),
        ("true or false and false", True),  # and binds tighter than or
        ("(true or false) and false", False),
        ("not false and false", False),  # not binds tighter than and
        ("not (false and false)", True),
        ("not not true", True),
        ("not ptx-jit.a < ptx-jit.b", True),  # not applies to the whole comparison
        ("1 + 2 * 3 == 7", True),  # * before +
        ("(1 + 2) * 3 == 9", True),
        ("10 - 4 - 3 == 3", True),  # left to right
        ("12 / 2 / 3 == 2", True),
        ("-2 * -3 == 6", True),
        ("- -ptx-jit.a == 3", True),
        ("-(1 + 2) == -3", True),
        ("2.5e1 == 25 and 1e3 == 1000", True),
        ("max((1), (2 + 3), -(4)) == 5 and min(2, max(1, 3)) == 2", True),
        ("ptx-jit.a-ptx-jit.b == 1", True),  # a reference is read before a minus
        ("ptx-jit.a - ptx-jit.b == 1", True),
        ("ptx-jit.a-1 == 2", True),
        ("ptx-jit.cuinit_median / ptx-jit.load_jit_cold_cache_median > 8", True),  # ms / ms: a plain ratio
        ("ptx-jit.a * 2 > ptx-jit.b", True),  # a plain number keeps the unit
        ("ptx-jit.ratio * ptx-jit.a == 12", True),
        ('no-kernel-image.error_name == "CUDA_ERROR_NO_BINARY_FOR_GPU"', True),
        ("no-kernel-image.error_name != 'CUDA_ERROR_INVALID_VALUE'", True),
        ("ptx-jit.flag == true", True),
        ("ptx-jit.flag", True),
        ("true", True),
        ("false", False),
        ("differ(ptx-jit.fast, ptx-jit.slow)", True),
        ("differ(ptx-jit.slow, ptx-jit.fast)", True),
        ("differ(ptx-jit.left, ptx-jit.right)", False),
        ("not differ(ptx-jit.left, ptx-jit.right)", True),
        ("\tptx-jit.a\n>\n  ptx-jit.b ", True),
        ("floor(ptx-jit.a / ptx-jit.b) == 1 and ceil(ptx-jit.a / ptx-jit.b) == 2", True),  # 1.5 either way
        ("floor(7 / 2) == 3 and ceil(-7 / 2) == -3 and floor(ptx-jit.grid) == ptx-jit.grid", True),
        ("floor(ptx-jit.a) == 0", True),  # 3 ms is 0.003 s: floor rounds in base units
    ],
)
def test_evaluates(text: str, expected: bool) -> None:
    assert holds(text) is expected


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("ptx-jit.a-ptx-jit.b>1", "ptx-jit.a - ptx-jit.b > 1"),
        ("not a.b and c.d or e.f", "not a.b and c.d or e.f"),
        ("not (a.b and c.d)", "not (a.b and c.d)"),
        ("(a.b or c.d) and e.f", "(a.b or c.d) and e.f"),
        ("-(1+2)*3 - -4/2.5", "-(1 + 2) * 3 - -4 / 2.5"),
        ("a.b - (c.d - e.f)", "a.b - (c.d - e.f)"),
        ("(a.b - c.d) - e.f", "a.b - c.d - e.f"),
        ("(a.b < c.d) == false", "(a.b < c.d) == false"),
        ("max( a.b ,(c.d) )", "max(a.b, c.d)"),
        ("x.s == 'say \"hi\"'", "x.s == 'say \"hi\"'"),
        ("floor( a.b/(c.d+1) ) >= ceil(e.f)", "floor(a.b / (c.d + 1)) >= ceil(e.f)"),
    ],
)
def test_show_writes_one_spelling_that_parses_to_the_same_tree(text: str, shown: str) -> None:
    assert show(parse(text)) == shown
    assert parse(shown) == parse(shown) and show(parse(shown)) == shown


def test_show_writes_operators_and_calls_as_a_caller_asks() -> None:
    symbols = {"*": "×", "/": "÷", "floor": "⌊{}⌋"}
    assert show(parse("floor(a.b / (c.d * 2)) + max(e.f, 1)"), symbols=symbols) == "⌊a.b ÷ (c.d × 2)⌋ + max(e.f, 1)"


def test_the_tree_is_frozen_data_with_offsets() -> None:
    tree = parse("ptx-jit.a > 2")
    assert (tree.kind, tree.offset, tree.ops) == ("cmp", 0, ((">", 10),))
    assert [(part.kind, part.offset, part.text, part.value) for part in tree.parts] == [
        ("ref", 0, "ptx-jit.a", False),
        ("value", 12, "", 2.0),
    ]
    with pytest.raises(AttributeError):
        tree.kind = "or"  # type: ignore[misc]


def test_references_in_order_of_first_appearance_once_each() -> None:
    tree = parse("b-x.r2 > a.r1 and not differ(a.r1, c.r3) or max(b-x.r2, a.r1, d.r4) < 1")
    assert references(tree) == [("b-x", "r2"), ("a", "r1"), ("c", "r3"), ("d", "r4")]
    assert references(parse("1 < 2")) == []


@pytest.mark.parametrize(
    ("text", "message", "offset"),
    [
        ("maxx(ptx-jit.a) > 1", "unknown name 'maxx' (did you mean 'max'?)", 0),
        ("ptx-jit.a > 1 AND true", "unexpected 'AND' after the condition", 14),
        ("True", "unknown name 'True' (did you mean 'true'?)", 0),
        ("__import__('os')", "unknown name '__import__'", 0),
        ("ptx-jit > 1", "unknown name 'ptx'", 0),
        ("1 < ptx-jit.a < 5", "a comparison cannot be chained", 14),
        ("(ptx-jit.a < 5", "expected ')', found the end", 14),
        ("1 < (2 + (3)", "expected ')', found the end", 12),
        ("(ptx-jit.a < 5 true)", "expected ')', found 'true'", 15),
        ("ptx-jit.a < 5 ptx-jit.b", "unexpected 'ptx-jit.b' after the condition", 14),
        ("ptx-jit.a < 5)", "unexpected ')' after the condition", 13),
        ("", "empty condition", 0),
        (" \n\t", "empty condition", 0),
        ("ptx-jit.a >", "unexpected end", 11),
        ("ptx-jit.a > > 1", "expected a value, found '>'", 12),
        ("ptx-jit.a < not true", "expected a value, found 'not'", 12),
        ('x.s == "a\\"b"', "a string cannot hold '\\'", 9),
        ('x.s == "abc', "unclosed string", 7),
        ("x.s == 'a\nb'", "unclosed string", 7),
        ("x.s == 'a\u202eb'", "a string cannot hold '\\u202e'", 9),
        ("1.2.3 > 1", "malformed number '1.2.3'", 0),
        ("0x10 > 1", "malformed number '0x10'", 0),
        ("1_000 > 1", "malformed number '1_000'", 0),
        ("1e > 1", "malformed number '1e'", 0),
        ("ptx-jit.a.b > 1", "malformed reference 'ptx-jit.a.b'", 0),
        ("ptx-jit.a = 1", "unexpected character '='", 10),
        ("true && false", "unexpected character '&'", 5),
        ("true \u202e", "unexpected character '\\u202e'", 5),
        ("max > 1", "expected '(' after max, found '>'", 4),
        ("max() > 1", "expected a value, found ')'", 4),
        ("max(ptx-jit.a ptx-jit.b) > 1", "expected ')' after max's arguments, found 'ptx-jit.b'", 14),
        ("min(ptx-jit.a,", "unexpected end", 14),
        ("differ(ptx-jit.a, 2)", "differ() takes exactly two references", 0),
        ("not differ(ptx-jit.a)", "differ() takes exactly two references", 4),
        ("differ(ptx-jit.a, ptx-jit.b, ptx-jit.c)", "differ() takes exactly two references", 0),
        ("floor(ptx-jit.a, ptx-jit.b) > 1", "floor() takes one value", 0),
        ("1 < ceil(1, 2)", "ceil() takes one value", 4),
    ],
)
def test_syntax_errors(text: str, message: str, offset: int) -> None:
    with pytest.raises(ClaimSyntaxError) as caught:
        parse(text)
    assert (caught.value.message, caught.value.offset) == (message, offset)
    assert str(caught.value) == message and caught.value.hint


def test_the_hints() -> None:
    with pytest.raises(ClaimSyntaxError) as caught:
        parse("1 < 2 < 3")
    assert caught.value.hint == "write a < b and b < c"
    with pytest.raises(ClaimError) as unknown:
        parse("ptx-jit > 1")
    assert unknown.value.hint.startswith("a value is written experiment.result, e.g. ptx-jit.cuinit_median")


def test_the_bounds() -> None:
    parse("1 < " + " " * 995 + "2")  # 1,000 characters
    with pytest.raises(ClaimSyntaxError) as long:
        parse("1 < " + " " * 996 + "2")
    assert (long.value.message, long.value.offset) == ("longer than 1,000 characters (1,001)", 1000)
    parse("(" * 32 + "true" + ")" * 32)
    with pytest.raises(ClaimSyntaxError) as deep:
        parse("(" * 33 + "true" + ")" * 33)
    assert (deep.value.message, deep.value.offset) == ("nested deeper than 32 levels", 32)
    with pytest.raises(ClaimSyntaxError) as deeper:
        parse("(" * 499 + "1" + ")" * 499)
    assert deeper.value.message == "nested deeper than 32 levels"
    with pytest.raises(ClaimSyntaxError) as huge:  # never a RecursionError
        parse("(" * 10_000 + "1" + ")" * 10_000)
    assert huge.value.message == "longer than 1,000 characters (20,001)"
    for prefix in ("not ", "-", "max("):
        with pytest.raises(ClaimSyntaxError, match="nested deeper than 32 levels"):
            parse(prefix * 33 + "1")
    refs = " + ".join(f"e.r{i}" for i in range(65))
    assert len(references(parse(refs[: refs.rindex(" + ")] + " > 1"))) == 64
    with pytest.raises(ClaimSyntaxError) as many:
        parse(refs + " > 1")
    assert (many.value.message, many.value.offset) == ("more than 64 references", refs.rindex("e.r64"))


@pytest.mark.parametrize(
    ("text", "message", "offset"),
    [
        ("ptx-jit.a", CONDITION, 0),
        ("ptx-jit.a + 1", CONDITION, 0),
        ("max(ptx-jit.a)", CONDITION, 0),
        ("ptx-jit.a > ptx-jit.grid", "ptx-jit.a (ms) compared with ptx-jit.grid (blocks)", 10),
        ("ptx-jit.a + ptx-jit.grid > 1", "ptx-jit.a (ms) added to ptx-jit.grid (blocks)", 10),
        ("ptx-jit.a + 1 - ptx-jit.grid > 1", "ptx-jit.a + 1 (ms) minus ptx-jit.grid (blocks)", 14),
        ("max(ptx-jit.a, 1, ptx-jit.grid) > 1", "ptx-jit.a (ms) in max() with ptx-jit.grid (blocks)", 0),
        ("differ(ptx-jit.fast, ptx-jit.count)", "ptx-jit.fast (ms) compared with ptx-jit.count (blocks)", 0),
        ("ptx-jit.a / ptx-jit.zero > 1", "division by zero: ptx-jit.zero is 0", 10),
        ("1 / (ptx-jit.b - 2) > 1", "division by zero: ptx-jit.b - 2 is 0", 2),
        ("no-kernel-image.error_name > 'A'", "'>' needs numbers, but no-kernel-image.error_name is text", 27),
        ("no-kernel-image.error_name == 1", "no-kernel-image.error_name (text) compared with 1 (a number)", 27),
        ("ptx-jit.flag == 1", "ptx-jit.flag (a truth value) compared with 1 (a number)", 13),
        ("true + 1 > 1", "'+' needs numbers, but true is a truth value", 5),
        ("-ptx-jit.flag < 1", "'-' needs numbers, but ptx-jit.flag is a truth value", 1),
        ("true < false", "'<' needs numbers, but true is a truth value", 5),
        ("min(1, 'a') < 1", "'min()' needs numbers, but \"a\" is text", 7),
        ("ptx-jit.a and true", "'and' needs conditions, but ptx-jit.a is a number", 0),
        ("true or 'yes'", "'or' needs conditions, but \"yes\" is text", 8),
        ("not ptx-jit.a", "'not' needs conditions, but ptx-jit.a is a number", 4),
        ("differ(ptx-jit.a, ptx-jit.fast)", "differ() needs results with raw samples: ptx-jit.a has none", 7),
        ("true or ptx-jit.a > ptx-jit.grid", "ptx-jit.a (ms) compared with ptx-jit.grid (blocks)", 18),  # no short cut
    ],
)
def test_type_and_unit_errors(text: str, message: str, offset: int) -> None:
    with pytest.raises(ClaimTypeError) as caught:
        holds(text)
    assert (caught.value.message, caught.value.offset) == (message, offset)


def test_a_literal_number_fits_any_unit_and_units_of_products() -> None:
    assert holds("ptx-jit.grid > 2 and 2 < ptx-jit.a and max(ptx-jit.a, 1) == 3")
    assert holds("ptx-jit.a * ptx-jit.grid == 24")  # ms·blocks, and a plain number takes it
    with pytest.raises(ClaimTypeError, match=r"ptx-jit.a \* ptx-jit.grid \(ms·blocks\) compared with ptx-jit.a \(ms\)"):
        holds("ptx-jit.a * ptx-jit.grid > ptx-jit.a")
    with pytest.raises(ClaimTypeError, match=r"ptx-jit.a / 3 \(ms\) compared with ptx-jit.grid \(blocks\)"):
        holds("ptx-jit.a / 3 < ptx-jit.grid")
    with pytest.raises(ClaimTypeError, match=r"^-ptx-jit.a \(ms\) compared with ptx-jit.grid \(blocks\)$"):
        holds("-ptx-jit.a < ptx-jit.grid")


def test_the_value_an_unknown_reference_raises_is_the_callers() -> None:
    with pytest.raises(KeyError):
        holds("ptx-jit.nothing > 1")


@pytest.mark.parametrize(
    ("text", "explained"),
    [
        (
            f"ptx-jit.cuinit_median < max({LOADS})",
            "ptx-jit.cuinit_median = 148 ms < max(20.6 ms, 17.8 ms) = 20.6 ms",
        ),
        ("ptx-jit.a * 2 < 1", "3 ms * 2 = 6 ms < 1"),
        (
            "ptx-jit.a > ptx-jit.b and ptx-jit.grid < 3",
            "(ptx-jit.a = 3 ms > ptx-jit.b = 2 ms) is true and (ptx-jit.grid = 8 blocks < 3) is false",
        ),
        ("not ptx-jit.flag", "not (ptx-jit.flag = true)"),
        ("not (ptx-jit.a > 1)", "not (ptx-jit.a = 3 ms > 1) is true"),
        ("ptx-jit.flag or not ptx-jit.flag", "ptx-jit.flag = true or not (ptx-jit.flag = true)"),
        ("no-kernel-image.error_name == 'X'", 'no-kernel-image.error_name = "CUDA_ERROR_NO_BINARY_FOR_GPU" == "X"'),
        (
            "not differ(ptx-jit.fast, ptx-jit.slow)",
            "not (differ(ptx-jit.fast = 1.05 ms, ptx-jit.slow = 10.5 ms) = true)",
        ),
        (
            "(ptx-jit.a < 1 or differ(ptx-jit.left, ptx-jit.right)) and true",
            "((ptx-jit.a = 3 ms < 1) is false or differ(ptx-jit.left = 1.4 ms, ptx-jit.right = 1.5 ms) = false)"
            " is false and true",
        ),
        ("ptx-jit.flag", "ptx-jit.flag = true"),
        ("false", "false"),
    ],
)
def test_explain_shows_the_values(text: str, explained: str) -> None:
    assert explain(parse(text), lookup) == explained


def test_errors_share_one_base_with_offset_message_and_hint() -> None:
    assert issubclass(ClaimSyntaxError, ClaimError) and issubclass(ClaimTypeError, ClaimError)
    error = ClaimTypeError("m", 3, "h")
    assert (error.message, error.offset, error.hint, str(error)) == ("m", 3, "h", "m")
