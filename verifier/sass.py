"""The machine code a kernel really runs as: the SASS NVRTC made of it, disassembled on the GPU
node with the CUDA toolkit's cuobjdump, kept in the measurement file so a page can show the
instructions behind a number (the HMMA of mma.sync, the HGMMA of wgmma).

The cubin is the one the experiment loads: the same source, name, architecture and options
through the same NVRTC (compile_source is deterministic for them), written to a private
temporary file for cuobjdump and removed. A node without cuobjdump records why instead: the
timing results never depend on it. Standard library only (the verifier's rule).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

TIMEOUT_S = 60
BEFORE, AFTER = 4, 8
"""Instructions kept around the first one of interest: enough to see the loop it sits in."""
_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.+?)\s*;", re.MULTILINE)


def disassemble(image: bytes, kernel: str) -> dict[str, Any]:
    """{'dump': cuobjdump's SASS of kernel in the cubin image}, or {'missing': why not}."""
    tool = shutil.which("cuobjdump")
    if tool is None:
        return {"missing": "cuobjdump is not on this node's PATH"}
    with tempfile.TemporaryDirectory(prefix="cudagloss-sass-") as folder:
        path = Path(folder) / f"{kernel}.cubin"
        path.write_bytes(image)
        try:
            run = subprocess.run(
                [tool, "--dump-sass", "--function", kernel, str(path)],
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return {"missing": f"cuobjdump did not run: {exc}"}
    if run.returncode != 0:
        return {"missing": f"cuobjdump exited {run.returncode}: {run.stderr.strip()[:300]}"}
    return {"dump": run.stdout}


def instructions(dump: str) -> list[tuple[str, str]]:
    """(offset, instruction) of each SASS line of a cuobjdump dump, in order."""
    return [(m.group(1), " ".join(m.group(2).split())) for m in _LINE.finditer(dump)]


def summary(dump: str, opcode: str) -> dict[str, Any]:
    """The first instruction whose mnemonic starts with opcode, how many the kernel has, and
    the lines around the first one (offset and instruction, as cuobjdump numbers them)."""
    found = instructions(dump)
    hits = [i for i, (_, text) in enumerate(found) if _mnemonic(text).startswith(opcode)]
    if not hits:
        return {"count": 0, "instructions": len(found)}
    first = hits[0]
    lines = [f"/*{offset}*/ {text} ;" for offset, text in found[max(0, first - BEFORE) : first + AFTER + 1]]
    return {
        "count": len(hits),
        "instructions": len(found),
        "mnemonic": _mnemonic(found[first][1]),
        "excerpt": "\n".join(lines),
    }


def _mnemonic(instruction: str) -> str:
    """'HMMA.16816.F32' of '@P0 HMMA.16816.F32 R4, ...' (a predicate guard is not the opcode)."""
    words = instruction.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def results(name: str, kernel: str, opcode: str, found: dict[str, Any]) -> list[Result]:
    """The measurement's results of one kernel's SASS: its mnemonic and count (compared on a
    re-run: a compiler that changes them changes what ran), and the excerpt (information)."""
    if "missing" in found:
        return [Result(f"{name}_sass_note", str(found["missing"]), "", f"the SASS of {kernel} was not read")]
    got = summary(str(found.get("dump", "")), opcode)
    out = [
        Result(
            f"{name}_sass_count",
            got["count"],
            "instructions",
            f"{opcode} instructions in the SASS of {kernel}, as cuobjdump --dump-sass shows NVRTC's cubin",
        )
    ]
    if got["count"]:
        out += [
            Result(f"{name}_sass_mnemonic", got["mnemonic"], "", f"the first {opcode} instruction of {kernel}"),
            Result(
                f"{name}_sass",
                got["excerpt"],
                "",
                f"the SASS of {kernel} around its first {opcode} (cuobjdump --dump-sass; offset, instruction)",
                method="info",
            ),
        ]
    return out
