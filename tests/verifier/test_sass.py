"""The SASS behind a number (issue 30, part 3): the timed tensor-core kernels' machine code, read
with cuobjdump on the GPU node, summarised into the measurement file. The dump here is in
cuobjdump's own layout (offset comment, instruction, encoding comments); the node runs the
real tool, and a node without it records why instead."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest

from verifier import sass

DUMP = """
\tcode for sm_90
\t\tFunction : mma_loop
\t.headerflags\t@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                    /* 0x00000a00ff017b82 */
                                                                             /* 0x000fe20000000800 */
        /*0010*/                   S2R R0, SR_TID.X ;                        /* 0x0000000000007919 */
        /*0020*/                   LDG.E R4, desc[UR4][R2.64] ;              /* 0x0000000402047981 */
        /*0030*/              @!P0 BRA 0x90 ;                                /* 0x0000000000008947 */
        /*0040*/                   HMMA.16816.F32 R8, R4, R6, R8 ;           /* 0x000000060408723c */
        /*0050*/                   HMMA.16816.F32 R12, R4, R7, R12 ;         /* 0x00000007040c723c */
        /*0060*/              @P1  HMMA.16816.F32 R16, R4, R6, R16 ;         /* 0x0000000604101a3c */
        /*0070*/                   EXIT ;                                    /* 0x000000000000794d */
"""


def test_the_instructions_are_read_with_their_offsets_and_predicates_are_not_opcodes() -> None:
    found = sass.instructions(DUMP)
    assert found[0] == ("0000", "LDC R1, c[0x0][0x28]") and found[-1] == ("0070", "EXIT")
    got = sass.summary(DUMP, "HMMA")
    assert (got["count"], got["instructions"], got["mnemonic"]) == (3, 8, "HMMA.16816.F32")
    assert got["excerpt"].splitlines()[0] == "/*0000*/ LDC R1, c[0x0][0x28] ;"  # four before the first HMMA
    assert "/*0060*/ @P1 HMMA.16816.F32 R16, R4, R6, R16 ;" in got["excerpt"]
    assert sass.summary(DUMP, "HGMMA") == {"count": 0, "instructions": 8}


def test_the_file_keeps_the_count_and_mnemonic_compared_and_the_excerpt_as_information() -> None:
    count, mnemonic, excerpt = sass.results("mma_sync", "mma_loop", "HMMA", {"dump": DUMP})
    assert (count.name, count.value, count.unit) == ("mma_sync_sass_count", 3, "instructions")
    assert (mnemonic.value, mnemonic.method) == ("HMMA.16816.F32", "")
    assert excerpt.method == "info" and "HMMA" in str(excerpt.value)
    (note,) = sass.results("wgmma", "wgmma_loop", "HGMMA", {"missing": "cuobjdump is not on this node's PATH"})
    assert note.name == "wgmma_sass_note" and "PATH" in str(note.value)


def test_a_node_without_cuobjdump_says_so_and_leaves_nothing_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert sass.disassemble(b"\x7fELF", "k") == {"missing": "cuobjdump is not on this node's PATH"}


@pytest.mark.processes
def test_a_cuobjdump_that_fails_is_a_reason_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in cuobjdump (a real program on PATH, named as a mock: no real one is installed
    here) that fails: the reason is recorded and the temporary cubin is gone."""
    fake = tmp_path / "bin" / "cuobjdump"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'cuobjdump fatal : not a cubin' >&2\nexit 1\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the cubin is written, to see it go
    seen: list[str] = []
    real = subprocess.run

    def run(command: list[str], **kwargs: object) -> object:
        seen.extend(p.name for p in tmp_path.glob("cudagloss-sass-*/*"))  # the cubin, while cuobjdump reads it
        return real(command, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "run", run)
    got = sass.disassemble(b"not a cubin", "k")
    assert seen == ["k.cubin"]
    assert got == {"missing": "cuobjdump exited 1: cuobjdump fatal : not a cubin"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin"]
