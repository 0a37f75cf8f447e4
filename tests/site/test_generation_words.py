"""What the pages say of other generations is what the computed tables hold (issue 41): each
sentence below is typed in a term's body, and each must stay true of the committed files, so a
new NVRTC or header that changes the answer fails here instead of leaving the words wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import ROOT

AVAILABILITY = json.loads((ROOT / "computed" / "instruction-availability.json").read_text(encoding="utf-8"))


def compiled(feature: str) -> set[str]:
    return {t for t, row in AVAILABILITY["values"].items() if row[feature] == "compiled"}


def sass_opcodes(feature: str, target: str) -> list[str]:
    return [line.split(" ", 1)[0] for line in AVAILABILITY["sass"][feature][target]]


def plain_and_later(least: int) -> set[str]:
    return {t for t in AVAILABILITY["values"] if int(t[3:].rstrip("af")) >= least}


SAID: list[tuple[str, str, Any]] = [
    ("tensor-core", "`wgmma` compiled for `sm_90a` and no other target", lambda: compiled("wgmma") == {"sm_90a"}),
    (
        "tensor-core",
        "`tcgen05.mma` compiled only for `sm_100a`, `sm_100f`, `sm_103a`, `sm_103f`, `sm_110a` and",
        lambda: compiled("tcgen05-mma") == {"sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f"},
    ),
    (
        "tensor-core",
        "whose `a` and `f` targets take FP6 and",
        lambda: compiled("mma-e2m1") == compiled("mma-e3m2") == {"sm_120a", "sm_120f", "sm_121a", "sm_121f"},
    ),
    (
        "tensor-core",
        "An FP8 `mma.sync` compiled for `sm_89` and every later target",
        lambda: compiled("mma-e4m3") == plain_and_later(89),
    ),
    (
        "tensor-core",
        "one FP8 matrix instruction (`QMMA`) for `sm_89`, `sm_120` and",
        lambda: all(
            sass_opcodes("mma-e4m3", t)[0].startswith("QMMA") and len(sass_opcodes("mma-e4m3", t)) == 1
            for t in ("sm_89", "sm_120", "sm_121")
        ),
    ),
    (
        "tensor-core",
        "a pair of FP16 ones (`HMMA`) for `sm_90`, `sm_100`, `sm_103` and `sm_110`",
        lambda: all(
            [o[:4] for o in sass_opcodes("mma-e4m3", t)] == ["HMMA", "HMMA"]
            for t in ("sm_90", "sm_100", "sm_103", "sm_110")
        ),
    ),
    (
        "warpgroup",
        "while `setmaxnreg` was accepted for the `a` and `f` targets of every later",
        lambda: compiled("setmaxnreg") == {t for t in plain_and_later(90) if t[-1] in "af"},
    ),
    ("warp", "accepted for `sm_80` and every later target", lambda: compiled("redux-sync") == plain_and_later(80)),
    ("warp", "the second for `sm_90` and every later one", lambda: compiled("elect-sync") == plain_and_later(90)),
]


@pytest.mark.parametrize(("term", "words", "holds"), SAID, ids=[f"{t}: {w[:40]}" for t, w, _ in SAID])
def test_the_words_are_in_the_term_and_true_of_the_table(term: str, words: str, holds: Any) -> None:
    body = " ".join((ROOT / "terms" / f"{term}.yaml").read_text(encoding="utf-8").split())
    assert " ".join(words.split()) in body, f"{term} no longer says {words!r}: update this test with it"
    assert holds(), f"{term} says {words!r}, which computed/instruction-availability.json no longer holds"
