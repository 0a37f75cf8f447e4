"""cuobjdump on the CPU, for tables `make generations` writes: the SASS a cubin NVRTC made holds.

The tools come from the package registry's nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm
wheels (requirements.lock), found under any `nvidia/cu13/bin` of the import path, else on PATH;
cuobjdump is told where nvdisasm is (NVDISASM_PATH), which it runs to disassemble. A GPU node's
own disassembly is verifier/sass.py's; this module is never imported by an experiment.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_S = 60
MAX_OUTPUT = 1 << 20
_LINE = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.+?)\s*;", re.MULTILINE)
_VERSION = re.compile(r"V\d+\.\d+\.\d+")


@dataclass(frozen=True)
class Disassembler:
    cuobjdump: Path
    nvdisasm: Path

    def version(self) -> str:
        """cuobjdump's own version ('V13.5.37'), as --version prints it."""
        run = subprocess.run([self.cuobjdump, "--version"], capture_output=True, text=True, timeout=TIMEOUT_S)
        found = _VERSION.search(run.stdout)
        return found[0] if found else "unknown"

    def instructions(self, image: bytes) -> list[str]:
        """Every SASS instruction of the cubin, in order, its spaces made single; RuntimeError when
        cuobjdump fails (its first line of stderr says why)."""
        with tempfile.TemporaryDirectory(prefix="cudagloss-sass-") as folder:
            path = Path(folder) / "k.cubin"
            path.write_bytes(image)
            env = {**os.environ, "NVDISASM_PATH": str(self.nvdisasm.parent)}
            run = subprocess.run(
                [self.cuobjdump, "--dump-sass", path], capture_output=True, text=True, timeout=TIMEOUT_S, env=env
            )
        if run.returncode != 0 or len(run.stdout) > MAX_OUTPUT:
            raise RuntimeError(f"cuobjdump exited {run.returncode}: {run.stderr.strip()[:300]}")
        return [" ".join(m[1].split()) for m in _LINE.finditer(run.stdout)]


@functools.cache
def find() -> Disassembler | None:
    """cuobjdump and nvdisasm from the installed wheels (any nvidia/cu13/bin on sys.path), else PATH;
    looked for once a process (make generations asks before it forks its compiling workers)."""
    for entry in sys.path:
        folder = Path(entry or ".") / "nvidia" / "cu13" / "bin"
        tools = folder / "cuobjdump", folder / "nvdisasm"
        if all(t.is_file() and os.access(t, os.X_OK) for t in tools):
            return Disassembler(*tools)
    found = shutil.which("cuobjdump"), shutil.which("nvdisasm")
    return Disassembler(Path(found[0]), Path(found[1])) if found[0] and found[1] else None
