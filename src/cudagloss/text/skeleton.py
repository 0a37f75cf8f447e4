"""Unicode TR39 skeletons and scripts, from the Unicode data that `confusable_homoglyphs` ships.

That package (pure Python, so the pre-commit hook installs anywhere) keeps Unicode's
confusables.txt as an undirected table: each character with the characters it is confused
with. confusables.txt maps every source character to one prototype, and no prototype is a
source, so each connected group of the table is one prototype with its sources: the
prototype is the member linked to all others (or the multi-character sequence a group maps
to). skeleton() maps each character of the NFD text to its group's prototype, as TR39 does.
"""

from __future__ import annotations

import functools
import unicodedata

_CJK = {"Han", "Hiragana", "Katakana", "Hangul", "Bopomofo"}
_IGNORABLE = [
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
]  # fmt: skip
"""Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): drawn as nothing."""


def default_ignorable(ch: str) -> bool:
    cp = ord(ch)
    return any(low <= cp <= high for low, high in _IGNORABLE)


@functools.cache
def _prototypes() -> dict[str, str]:
    """Each character of confusables.txt with its prototype (itself when it is one); read on
    first use, as the table is large and most runs meet no character outside ASCII."""
    from confusable_homoglyphs import confusables  # type: ignore[import-untyped]

    table = {_clean(k): [_clean(e["c"]) for e in v] for k, v in confusables.confusables_data.items()}
    seen: set[str] = set()
    out: dict[str, str] = {}
    for start in table:
        if start in seen:
            continue
        group, todo = {start}, [start]
        while todo:
            for other in table.get(todo.pop(), []):
                if other not in group:
                    group.add(other)
                    todo.append(other)
        seen |= group
        out.update(dict.fromkeys((m for m in group if len(m) == 1), _prototype(group, table)))
    return out


def _clean(text: str) -> str:
    """The table's text without the direction marks its comments put around right-to-left text."""
    return text.replace("\u200e", "").replace("\u200f", "")


def _prototype(group: set[str], table: dict[str, list[str]]) -> str:
    sequences = sorted(m for m in group if len(m) != 1)
    if sequences:
        return sequences[0]
    hubs = sorted(m for m in group if len(set(table.get(m, []))) == len(group) - 1)
    return hubs[0] if len(hubs) == 1 else min(group)  # a pair: either will do, as long as it is one


def confusable_characters() -> list[str]:
    """Every character that Unicode lists as confusable with another (prototypes included)."""
    return list(_prototypes())


ASCII_PROTOTYPES = {"`": "'", '"': "''", "1": "l", "|": "l", "I": "l", "0": "O", "m": "rn"}
"""The ASCII characters that are not their own prototype, with it (all ASCII, and each its own
prototype), but '%' (whose is 'º/₀'): the skeleton of other ASCII text, such as every slug,
needs no table, which takes a tenth of a second to build. A test holds this to the table."""
_ASCII_TABLE = str.maketrans(ASCII_PROTOTYPES)


def skeleton(text: str) -> str:
    """TR39 skeleton: texts a reader cannot tell apart have equal skeletons ('PTX', 'РТХ', 'ＰＴＸ')."""
    if text.isascii() and "%" not in text:
        return text.translate(_ASCII_TABLE)
    table = _prototypes()
    mapped = "".join(table.get(ch, ch) for ch in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", "".join(table.get(ch, ch) for ch in mapped))  # a sequence's letters too


@functools.lru_cache(maxsize=4096)
def script(ch: str) -> str:
    """A character's Unicode script ('Latin', 'Cyrillic', 'Common'), the scripts written
    together in East Asia counted as one ('Han')."""
    from confusable_homoglyphs import categories

    name = categories.alias(ch).title().replace("_", " ")
    return "Han" if name in _CJK else name
