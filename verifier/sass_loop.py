"""The body of a kernel's timed loop in its SASS: which instructions it repeats, and how many.

verifier/sass.py disassembles a cubin and finds the first instruction of a kind; a throughput
experiment needs the loop itself, where an opcode that also serves the prologue (an IMAD that
computes the thread index) would mislead. The loop body is the stretch between two branches that
holds the most of the instructions asked for. Standard library only (the verifier's rule).
"""

from __future__ import annotations

from typing import Any

from cudagloss.model.measurement import Result
from verifier.sass import instructions


def loop_body(dump: str, mnemonics: tuple[str, ...]) -> dict[str, Any]:
    """The stretch of SASS between two branches that holds the most of these mnemonics (the
    timed loop's body): how many, which, and the instructions around the first of them."""
    found = instructions(dump)
    best: list[int] = []
    run: list[int] = []
    for i, (_, text) in enumerate(found):
        words = [w for w in text.split() if not w.startswith("@")]
        mnemonic = words[0] if words else ""
        if mnemonic.startswith("BRA"):
            best, run = max(best, run, key=len), []
        elif mnemonic in mnemonics:
            run.append(i)
    best = max(best, run, key=len)
    if not best:
        return {"count": 0}
    names = [next(w for w in found[i][1].split() if not w.startswith("@")) for i in best]
    kinds = ", ".join(f"{names.count(m)} {m}" for m in dict.fromkeys(names))
    lines = [f"/*{o}*/ {t} ;" for o, t in found[max(0, best[0] - 4) : best[0] + 9]]
    return {"count": len(best), "mnemonics": kinds, "excerpt": "\n".join(lines)}


def loop_results(
    name: str, kernel: str, mnemonics: tuple[str, ...], found: dict[str, Any], written: str
) -> list[Result]:
    """What a kernel's loop ran, from sass.disassemble's answer (information: no rate depends on
    it): `<name>_sass_per_loop`, and where there are any, `<name>_sass_mnemonics` and the
    `<name>_sass` listing; `<name>_sass_note` where the node could not disassemble. written
    says how many the source puts in one turn."""
    if "dump" not in found:
        return [Result(f"{name}_sass_note", str(found.get("missing", "no SASS")), "", f"{kernel}'s SASS was not read")]
    body = loop_body(str(found["dump"]), mnemonics)
    out = [
        Result(
            f"{name}_sass_per_loop",
            body["count"],
            "instructions",
            f"{' or '.join(mnemonics)} instructions in the body of {kernel}'s timed loop ({written}), as "
            "cuobjdump --dump-sass shows NVRTC's cubin",
        )
    ]
    if body["count"]:
        out += [
            Result(f"{name}_sass_mnemonics", body["mnemonics"], "", f"the instructions counted in {kernel}'s loop"),
            Result(f"{name}_sass", body["excerpt"], "", f"the SASS of {kernel}'s loop (cuobjdump)", method="info"),
        ]
    return out
