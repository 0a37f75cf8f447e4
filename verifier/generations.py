"""`make generations`: per-compute-capability facts computed by NVIDIA's occupancy calculator.

    python3 -m verifier.generations            # print a table, one row per compute capability
    python3 -m verifier.generations --write    # also write computed/compute-capabilities.json

The glossary types no per-generation constant: NVIDIA's own header, cuda_occupancy.h, answers
them. A small C++ program (PROGRAM) includes it, is compiled by g++ on the CPU and asked, for
every compute capability NVRTC supports, each header function whose answer depends on the
compute capability alone (FUNCTIONS). A function that answers CUDA_OCC_ERROR_UNKNOWN_DEVICE is
recorded as the header's own refusal. The header's other per-CC functions (cudaOccSMemPerBlock,
cudaOccSMemPerMultiprocessor, cudaOccSMemPreference) need a device's properties too: not used.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cudagloss.boundary import guarded
from cudagloss.errors import ExitCode, UsageError, complain
from verifier import computed_file
from verifier.cuda import nvrtc_version, supported_archs

PROG = "make generations"
REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "computed" / "compute-capabilities.json"
HEADER = "cuda_occupancy.h"
TIMEOUT_S = 120
MAX_OUTPUT = 64 * 1024
"""The program prints about 100 bytes a function and CC: more is not its output."""
MAX_BYTES = 1 << 20
"""cudaOccAlignUpShmemSizeVoltaPlus is asked every size from 0 to this many bytes."""

FUNCTIONS: dict[str, tuple[str, str]] = {
    "cudaOccSMemAllocationGranularity": ("int", "smem gran"),
    "cudaOccRegAllocationMaxPerThread": ("int", "regs/thread"),
    "cudaOccRegAllocationGranularity": ("int", "reg gran"),
    "cudaOccSubPartitionsPerMultiprocessor": ("int", "sub-parts"),
    "cudaOccMaxBlocksPerMultiprocessor": ("int", "blocks/SM"),
    "cudaOccMaxVirtualResourceCountPerSM": ("int", "virt res"),
    "cudaOccMaxBlocksPerSMBlockBarrierLimit": ("int", "barriers"),
    "cudaOccPartitionedGlobalCachingModeSupport": ("enum", "part. GC"),
    "cudaOccAlignUpShmemSizeVoltaPlus": ("ints", "shared KiB"),
}
"""Each header function asked, the kind of its answer (a number, an enumerator of the header,
or the distinct sizes it gives, bytes ascending) and its column in the table."""
ENUMS = frozenset({"PARTITIONED_GC_SUPPORTED", "PARTITIONED_GC_NOT_SUPPORTED"})
ERRORS = frozenset({"CUDA_OCC_ERROR_INVALID_INPUT", "CUDA_OCC_ERROR_UNKNOWN_DEVICE", "CUDA_OCC_ERROR_OTHER"})
INPUTS = {
    "cudaOccMaxBlocksPerSMBlockBarrierLimit": "ctaLimitBlocks: the CC's cudaOccMaxBlocksPerMultiprocessor, "
    "numBlockBarriers: 1 (the calculator applies this limit from compute capability 9.0 on)",
    "cudaOccAlignUpShmemSizeVoltaPlus": f"every size from 0 to {MAX_BYTES} bytes; the distinct sizes it rounds "
    "them up to, until its first CUDA_OCC_ERROR_INVALID_INPUT",
}
"""What the functions that take more than the compute capability were given."""

PROGRAM = r"""
#include <cstdio>
#include <cstdlib>
#include "cuda_occupancy.h"

static const char *error_name(cudaOccError e) {
    return e == CUDA_OCC_ERROR_INVALID_INPUT ? "CUDA_OCC_ERROR_INVALID_INPUT"
         : e == CUDA_OCC_ERROR_UNKNOWN_DEVICE ? "CUDA_OCC_ERROR_UNKNOWN_DEVICE" : "CUDA_OCC_ERROR_OTHER";
}
static void answer(int cc, const char *name, cudaOccError e, const char *value) {
    if (e == CUDA_OCC_SUCCESS) std::printf("%d %s ok %s\n", cc, name, value);
    else std::printf("%d %s refused %s\n", cc, name, error_name(e));
}
static void number(int cc, const char *name, cudaOccError e, long long value) {
    char text[32];
    answer(cc, name, e, (std::snprintf(text, sizeof text, "%lld", value), text));
}
#define ASK(fn) { int v = 0; cudaOccError e = fn(&v, &p); number(cc, #fn, e, v); }

int main(int argc, char **argv) {
    for (int i = 1; i < argc; ++i) {
        int cc = std::atoi(argv[i]);
        cudaOccDeviceProp p;
        p.computeMajor = cc / 10, p.computeMinor = cc % 10;
        ASK(cudaOccSMemAllocationGranularity)
        ASK(cudaOccRegAllocationMaxPerThread)
        ASK(cudaOccRegAllocationGranularity)
        ASK(cudaOccSubPartitionsPerMultiprocessor)
        ASK(cudaOccMaxBlocksPerMultiprocessor)
        ASK(cudaOccMaxVirtualResourceCountPerSM)
        {
            int blocks = 0, v = 0;
            cudaOccFuncAttributes a;
            a.numBlockBarriers = 1;  // INPUTS says what the program gives
            cudaOccError e = cudaOccMaxBlocksPerMultiprocessor(&blocks, &p);
            if (e == CUDA_OCC_SUCCESS) e = cudaOccMaxBlocksPerSMBlockBarrierLimit(&v, blocks, &p, &a);
            number(cc, "cudaOccMaxBlocksPerSMBlockBarrierLimit", e, v);
        }
        {
            cudaOccPartitionedGCSupport s = PARTITIONED_GC_NOT_SUPPORTED;
            cudaOccError e = cudaOccPartitionedGlobalCachingModeSupport(&s, &p);
            answer(cc, "cudaOccPartitionedGlobalCachingModeSupport", e,
                   s == PARTITIONED_GC_SUPPORTED ? "PARTITIONED_GC_SUPPORTED" : "PARTITIONED_GC_NOT_SUPPORTED");
        }
        {
            char sizes[4096] = "";
            int used = 0; size_t last = (size_t)-1;
            cudaOccError e = CUDA_OCC_SUCCESS;
            for (size_t asked = 0; asked <= MAX_BYTES; ++asked) {
                size_t size = asked;
                cudaOccError got = cudaOccAlignUpShmemSizeVoltaPlus(&size, &p);
                if (got == CUDA_OCC_ERROR_INVALID_INPUT && asked > 0) break;
                if (got != CUDA_OCC_SUCCESS) { e = got; break; }
                if (size != last && used < (int)sizeof sizes - 24)
                    used += std::snprintf(sizes + used, sizeof sizes - used, "%s%zu", used ? "," : "", size);
                last = size;
            }
            answer(cc, "cudaOccAlignUpShmemSizeVoltaPlus", e, sizes);
        }
    }
    return 0;
}
"""

QUIET: dict[str, Any] = {"capture_output": True, "text": True, "timeout": TIMEOUT_S, "check": False}
Value = int | str | list[int] | dict[str, str]
LINE = re.compile(r"(\d{2,4}) (cudaOcc[A-Za-z]{1,60}) (ok|refused) ([A-Z_]{1,60}|\d{1,10}(?:,\d{1,10}){0,99})")


class BadOutput(Exception):
    """The program's output is not what PROGRAM prints: nothing of it is kept."""


def cc_name(cc: int) -> str:
    """NVRTC's 90 as the compute capability '9.0'."""
    return f"{cc // 10}.{cc % 10}"


def find_header(environ: Mapping[str, str], fallbacks: bool = True) -> Path:
    """cuda_occupancy.h: under CUDA_HOME or CUDA_PATH first, then /usr/local/cuda, then the newest
    /usr/local/cuda-X.Y (fallbacks=False: the environment's alone). UsageError if none has it."""
    places = [Path(environ[v]) / "include" for v in ("CUDA_HOME", "CUDA_PATH") if environ.get(v)]
    if fallbacks:
        local = Path("/usr/local")
        versioned = [p for p in local.glob("cuda-*") if re.fullmatch(r"cuda-\d+(\.\d+)*", p.name)]
        newest = sorted(versioned, key=lambda p: [int(n) for n in p.name[5:].split(".")], reverse=True)
        places += [local / "cuda" / "include", *(p / "include" for p in newest)]
    for place in places:
        if (place / HEADER).is_file():
            return place / HEADER
    looked = ", ".join(str(p) for p in places) or "nowhere (CUDA_HOME and CUDA_PATH are unset)"
    raise UsageError(f"no {HEADER} in {looked}: install the CUDA toolkit or set CUDA_HOME to its folder")


def cuda_version(header: Path) -> int | None:
    """CUDA_VERSION from cuda.h beside the header (13000 for CUDA 13.0), None if it has none."""
    beside = header.parent / "cuda.h"
    text = beside.read_text(errors="replace") if beside.is_file() else ""
    found = re.search(r"^#define CUDA_VERSION (\d+)$", text, re.M)
    return int(found.group(1)) if found else None


def compiler() -> str:
    """g++'s path, or UsageError naming what is missing."""
    found = shutil.which("g++")
    if found is None:
        raise UsageError("no g++ on PATH: install g++ (Debian: apt-get install g++)")
    return found


def parse(text: str, ccs: list[int]) -> dict[str, dict[str, Value]]:
    """The program's output as {CC: {function: value}}; BadOutput for anything PROGRAM would not
    print: an unknown line, CC or function, a value of the wrong kind, a repeat or a gap."""
    if len(text) > MAX_OUTPUT:
        raise BadOutput(f"{len(text)} characters of output, more than {MAX_OUTPUT}")
    values: dict[str, dict[str, Value]] = {cc_name(cc): {} for cc in ccs}
    for n, line in enumerate(text.splitlines(), 1):
        m = LINE.fullmatch(line)
        if not m:
            raise BadOutput(f"line {n} is not 'CC function ok|refused value': {line[:80]!r}")
        cc, fn, verdict, value = int(m[1]), m[2], m[3], m[4]
        kind = FUNCTIONS.get(fn, ("", ""))[0] or None
        if cc not in ccs or kind is None:
            what = f"function {fn}" if kind is None else f"compute capability {cc}"
            raise BadOutput(f"line {n}: {what} was not asked")
        row = values[cc_name(cc)]
        if fn in row:
            raise BadOutput(f"line {n}: {fn} for {cc_name(cc)} given twice")
        if verdict == "refused":
            if value not in ERRORS:
                raise BadOutput(f"line {n}: {value!r} is not one of the header's errors")
            row[fn] = {"refused": value}
        elif kind == "enum":
            if value not in ENUMS:
                raise BadOutput(f"line {n}: {value!r} is not an enumerator {fn} gives")
            row[fn] = value
        elif not value[0].isdigit() or (kind == "int" and "," in value):
            raise BadOutput(f"line {n}: {fn} gives {'a number' if kind == 'int' else 'sizes'}, not {value!r}")
        else:
            numbers = [int(v) for v in value.split(",")]
            row[fn] = numbers[0] if kind == "int" else numbers
    for name, row in values.items():
        if missing := sorted(set(FUNCTIONS) - set(row)):
            raise BadOutput(f"no answer for {name} from {', '.join(missing)}")
    return values


def run_program(header: Path, ccs: list[int]) -> str:
    """Compile PROGRAM against header with g++ in a temporary folder, run it for ccs, its output."""
    gxx = compiler()
    with tempfile.TemporaryDirectory(prefix="generations-") as tmp:
        source, binary = Path(tmp) / "occupancy.cpp", Path(tmp) / "occupancy"
        source.write_text(PROGRAM, encoding="utf-8")
        flags = ["-std=c++17", "-O1", f"-DMAX_BYTES={MAX_BYTES}", "-I", str(header.parent)]
        built = subprocess.run([gxx, *flags, str(source), "-o", str(binary)], **QUIET)
        if built.returncode != 0:
            first = next((ln for ln in built.stderr.splitlines() if "error" in ln), built.stderr.strip()[:200])
            raise BadOutput(f"g++ could not compile the program against {header}: {first}")
        ran = subprocess.run([str(binary), *map(str, ccs)], **QUIET)
        if ran.returncode != 0:
            raise BadOutput(f"the program exited {ran.returncode}: {ran.stderr.strip()[:200]}")
        return str(ran.stdout)


def compute(header: Path, ccs: list[int]) -> dict[str, Any]:
    """The document written: provenance (which header, toolkit, compiler, NVRTC, when) and values."""
    gxx = compiler()
    version = subprocess.run([gxx, "--version"], **QUIET)
    return {
        "provenance": {
            "tool": "verifier/generations.py",
            "header": str(header.resolve()),
            "header_sha256": hashlib.sha256(header.read_bytes()).hexdigest(),
            "cuda_version": cuda_version(header),
            "compiler": version.stdout.splitlines()[0] if version.stdout else "",
            "nvrtc_version": nvrtc_version(),
            "compute_capabilities": "nvrtcGetSupportedArchs",
            "functions": sorted(FUNCTIONS),
            "inputs": INPUTS,
            "computed_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        "values": parse(run_program(header, ccs), ccs),
    }


def table(values: Mapping[str, Mapping[str, Value]]) -> list[str]:
    """One row per compute capability; a refusal is shown as 'refused'."""

    def show(v: Value) -> str:
        if isinstance(v, dict):
            return "refused"
        return ",".join(str(n // 1024) for n in v) if isinstance(v, list) else str(v).removeprefix("PARTITIONED_GC_")

    rows = [
        ["CC", *(h for _, h in FUNCTIONS.values())],
        *([cc, *(show(row[fn]) for fn in FUNCTIONS)] for cc, row in values.items()),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(REPO)}")
    parser.add_argument("--out", type=Path, default=OUT, help="where --write writes (inside the repository)")
    parser.add_argument("--no-fallback", action="store_true", help="look for the header under CUDA_HOME/CUDA_PATH only")
    args = parser.parse_args(argv)
    out = computed_file.writable(args.out) if args.write else args.out
    header = find_header(os.environ, fallbacks=not args.no_fallback)
    ccs = supported_archs()
    try:
        doc = compute(header, ccs)
    except (BadOutput, subprocess.TimeoutExpired) as exc:
        complain(PROG, str(exc))
        return ExitCode.FAILED
    print(f"{HEADER} ({header}), NVRTC {nvrtc_version()}:", *table(doc["values"]), sep="\n")
    if args.write:
        computed_file.write(out, doc)
    return ExitCode.OK


def main(argv: list[str] | None = None) -> int:
    """_main inside the error boundary: a missing header or g++ is one line, exit 2."""
    return guarded(PROG, lambda: _main(argv))


if __name__ == "__main__":
    sys.exit(main())
