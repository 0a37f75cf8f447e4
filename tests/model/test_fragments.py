"""Text-fragment links to a source's quote (model/fragments.py), after the WICG's Scroll To
Text Fragment: `#:~:text=[prefix-,]textStart[,textEnd][,-suffix]`, percent-encoded."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from cudagloss.model.fragments import text_fragment_url
from cudagloss.model.limits import URL_MAX

BASE = "https://docs.example/guide/index.html"


def directive(url: str) -> list[str]:
    """The text directive's parts, decoded."""
    return [unquote(part) for part in url.split(":~:text=", 1)[1].split(",")]


@pytest.mark.parametrize(
    ("quote", "encoded"),
    [
        ("warp scheduler", "warp%20scheduler"),
        ("one, two", "one%2C%20two"),
        ("non-blocking", "non%2Dblocking"),
        ("A & B", "A%20%26%20B"),
        ("café – naïve", "caf%C3%A9%20%E2%80%93%20na%C3%AFve"),
        ('it\'s "quoted"', "it%27s%20%22quoted%22"),
        ("a#b?c=d/e%f", "a%23b%3Fc%3Dd%2Fe%25f"),
        ("x_y.z~w", "x_y.z~w"),
        ("  spaced\n\tout  ", "spaced%20out"),
    ],
)
def test_the_quote_is_percent_encoded(quote: str, encoded: str) -> None:
    assert text_fragment_url(BASE, quote) == f"{BASE}#:~:text={encoded}"


def test_only_unreserved_letters_digits_and_underscore_dot_tilde_stay_as_they_are() -> None:
    every = "".join(chr(c) for c in range(33, 127)) + "é—中"
    text = text_fragment_url(BASE, every).split(":~:text=", 1)[1]
    left = set(text.replace("%", "")) - set("0123456789ABCDEF")
    assert left <= set("abcdefghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ_.~")
    assert unquote(text) == every


def test_an_existing_fragment_is_kept() -> None:
    assert text_fragment_url(BASE + "#warps", "warp size") == BASE + "#warps:~:text=warp%20size"
    assert text_fragment_url(BASE + "#", "warp") == BASE + "#:~:text=warp"


def test_a_url_with_a_fragment_directive_is_left_alone() -> None:
    url = BASE + "#:~:text=already"
    assert text_fragment_url(url, "warp") == url
    assert text_fragment_url(BASE + "#x:~:text=a", "warp") == BASE + "#x:~:text=a"


def test_a_quote_with_no_words_gives_the_url_as_it_is() -> None:
    assert text_fragment_url(BASE, " \n ") == BASE


def test_a_short_quote_is_linked_whole() -> None:
    quote = "Each SM partitions its warps among four schedulers."  # 8 words, 51 characters
    assert directive(text_fragment_url(BASE, quote)) == [quote]


def test_a_long_quote_is_linked_by_its_first_and_last_words() -> None:
    quote = "A warp executes one common instruction at a time, so full efficiency is realized when all threads agree."
    assert directive(text_fragment_url(BASE, quote)) == ["A warp executes one", "when all threads agree."]


def test_a_quote_of_few_long_words_is_split_without_overlap() -> None:
    words = ["x" * 30, "y" * 30, "z" * 30]  # 3 words, over 80 characters
    assert directive(text_fragment_url(BASE, " ".join(words))) == [words[0], words[2]]


def test_a_single_long_word_is_linked_whole() -> None:
    word = "cudaErrorCooperativeLaunchTooLarge" * 3
    assert directive(text_fragment_url(BASE, word)) == [word]


def test_the_link_never_passes_the_url_limit() -> None:
    quote = " ".join(["中文字符" * 20] * 10)  # ten words of 80 CJK characters: 720 encoded characters each
    url = text_fragment_url(BASE, quote)
    assert len(url) <= URL_MAX
    start, end = directive(url)
    assert start and end and start in quote and end in quote
    near_limit = BASE + "?q=" + "a" * (URL_MAX - len(BASE) - 3 - 40)
    shortened = text_fragment_url(near_limit, "one two three four five six seven eight nine ten")
    assert len(shortened) <= URL_MAX
    assert directive(shortened) == ["one two", "nine ten"]
    assert text_fragment_url(near_limit, "中" * 80) == near_limit  # one word that cannot fit


def test_a_quote_with_a_lone_surrogate_does_not_raise() -> None:
    assert text_fragment_url(BASE, "bad \ud800 char").startswith(BASE + "#:~:text=bad%20")
