"""Which targets each kernel is for, and what NVRTC makes of it on each: on the CPU, no GPU.

A kernel source is for every target this NVRTC supports unless the module that holds it says
otherwise with `NEEDS` beside it: one `Needs` for the module's only source, or a dict by the
source's constant name. `least` is the lowest compute capability it is for (a feature older
GPUs lack: `cp.async` is Ampere's); `only` lists the arch- or family-specific targets it is
for instead (`wgmma` is `sm_90a`'s alone); `builder="nvcc"` marks a whole host program that
nvcc builds on the node, which NVRTC is never asked to compile.

A declaration is checked against the compiler, never trusted: on a target it is for, NVRTC
must compile the source (ptxas's registers, spills and shared memory are read from its
verbose log); on one it is not for, NVRTC must refuse it, and its own words are the reason
shown. A source that compiles where it is declared not to, or is refused where it is declared
to, is an error (`make kernels` exits 1). NEEDS is no constant run() reaches, so declaring it
moves no recipe key.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from types import ModuleType
from typing import Literal

from cudagloss.model.measurement import KernelSource
from verifier.cuda import CudaError, compile_source

TARGET = re.compile(r"sm_(\d{2,3})([af]?)")
VERBOSE = ("--ptxas-options=--verbose",)
VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

SPILLS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


@dataclass(frozen=True)
class Needs:
    """What a kernel source needs of the target it is compiled for, and why."""

    why: str
    least: int = 0
    """The lowest compute capability it is for, as NVRTC numbers it (80: sm_80); 0: any."""
    only: tuple[str, ...] = ()
    """The arch- or family-specific targets it is for instead of any plain one ('sm_90a')."""
    builder: Literal["nvrtc", "nvcc"] = "nvrtc"


ANY = Needs("runs on every target NVRTC supports")


@dataclass(frozen=True)
class Entry:
    """One kernel as ptxas reported it for one target."""

    name: str
    registers: int = 0
    spill_bytes: int = 0
    """Spill stores plus spill loads, in bytes."""
    shared_bytes: int = 0
    stack_bytes: int = 0


@dataclass(frozen=True)
class Cell:
    """One source on one target: compiled (its kernels), refused (NVRTC's words), skipped, or wrong."""

    where: str
    target: str
    verdict: Literal["compiled", "refused", "skipped", "error"]
    detail: str = ""
    entries: tuple[Entry, ...] = field(default_factory=tuple)


def cc_of(target: str) -> int:
    """'sm_90a' -> 90; ValueError for anything but an sm_ target."""
    found = TARGET.fullmatch(target)
    if not found:
        raise ValueError(f"'{target}' is not a target: sm_ and the compute capability, as sm_90 or sm_90a")
    return int(found[1])


def needs_of(kernel: KernelSource, experiment: ModuleType | None = None) -> Needs:
    """The NEEDS declared for a kernel source (verifier/...py:NAME): in the experiment's module by
    the source's whole name, else beside the source, by its constant's name or for the module's
    every source; ANY where none is."""
    path, _, name = kernel.where.partition(":")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    for holder, key in ((experiment, kernel.where), (module, name)):
        declared = getattr(holder, "NEEDS", None)
        if isinstance(declared, dict):
            declared = declared.get(key)
        if declared is None:
            continue
        if not isinstance(declared, Needs):
            raise TypeError(f"{kernel.where}: NEEDS is {type(declared).__name__}, not a verifier.targets.Needs")
        return declared
    return ANY


def is_for(needs: Needs, target: str) -> bool:
    """Whether the declaration says the source is for target."""
    if needs.only:
        return target in needs.only
    return cc_of(target) >= needs.least


def entries(log: str) -> tuple[Entry, ...]:
    """Each entry function's registers, spills, shared memory and stack from ptxas's verbose log."""
    found: dict[str, dict[str, int]] = {}
    current = ""
    for line in log.splitlines():
        if m := re.search(r"Compiling entry function '([^']+)'", line):
            current = m[1]
            found.setdefault(current, {})
        elif m := re.search(r"Function properties for (\S+)", line):
            current = m[1] if m[1] in found else ""
        elif current and (m := SPILLS.search(line)):
            found[current] |= {"stack_bytes": int(m[1]), "spill_bytes": int(m[2]) + int(m[3])}
        elif current and (m := re.search(r"Used (\d+) registers", line)):
            smem = re.search(r"(\d+) bytes smem", line)
            found[current] |= {"registers": int(m[1]), "shared_bytes": int(smem[1]) if smem else 0}
    return tuple(Entry(name, **values) for name, values in found.items())


def _refusal(exc: CudaError) -> str:
    """NVRTC's reason in its own words: the log's first error line, else the call's message."""
    lines = [line.strip() for line in (exc.log or "").splitlines() if "error" in line.lower()]
    return " ".join((lines[0] if lines else f"{exc.name}: {exc.message}").split())[:300]


PTXAS_LINE = re.compile(r"^ptxas[^;]*; error\s*:\s*(.+)$")
"""ptxas's error line: 'ptxas application ptx input, line 42; error   : Instruction ... '."""
FRONT_LINE = re.compile(r"^\S+\.cu\(\d+\): error:\s*(.+)$")
"""NVRTC's front end: 'cluster-dsmem.cu(4): error: __cluster_dims__ is not supported ...'."""
MAX_REASON = 300


def refusal(exc: CudaError) -> str:
    """Who refused and why, in the compiler's words, without the line number of the PTX it wrote."""
    for line in (exc.log or "").splitlines():
        line = " ".join(line.split())
        if found := PTXAS_LINE.match(line):
            return f"ptxas: {found[1]}"[:MAX_REASON]
        if found := FRONT_LINE.match(line):
            return f"nvrtc: {found[1]}"[:MAX_REASON]
    return f"nvrtc: {exc.name}: {' '.join((exc.log or exc.message).split())}"[:MAX_REASON]


def cell(kernel: KernelSource, target: str, experiment: ModuleType | None = None) -> Cell:
    """What NVRTC makes of one source for one target, judged against its declaration."""
    needs = needs_of(kernel, experiment)
    if needs.builder == "nvcc":
        return Cell(kernel.where, target, "skipped", needs.why)
    meant = is_for(needs, target)
    name = kernel.where.rpartition("/")[2].replace(":", "_") + ".cu"
    try:
        compiled = compile_source(kernel.source, name, target, VERBOSE)
    except CudaError as exc:
        if meant:
            return Cell(kernel.where, target, "error", f"declared for {target}, but NVRTC refused it: {_refusal(exc)}")
        return Cell(kernel.where, target, "refused", f"{needs.why}; NVRTC: {_refusal(exc)}")
    if not meant:
        return Cell(
            kernel.where, target, "error", f"declared not for {target} ({needs.why}), but NVRTC compiled it: fix NEEDS"
        )
    return Cell(kernel.where, target, "compiled", entries=entries(compiled.log))


def not_for(experiment: ModuleType, kernels: tuple[KernelSource, ...], capability: str) -> str | None:
    """Why an experiment is not for a GPU of this compute capability ('8.0'), with NVRTC's own
    refusal; None where it is. The experiment's RUNS_ON (a Needs) decides where it declares one
    (an experiment that asks the compiler about other GPUs' code runs anywhere); else each kernel
    source NVRTC compiles must be for the GPU's plain, arch- or family-specific target."""
    plain = f"sm_{capability.replace('.', '')}"
    targets = (plain, f"{plain}a", f"{plain}f")
    declared = getattr(experiment, "RUNS_ON", None)
    if isinstance(declared, Needs):
        return None if any(is_for(declared, t) for t in targets) else f"{declared.why} (not {plain})"
    for kernel in kernels:
        needs = needs_of(kernel, experiment)
        if needs.builder == "nvcc" or any(is_for(needs, t) for t in targets):
            continue
        name = kernel.where.rpartition("/")[2].replace(":", "_") + ".cu"
        try:
            compile_source(kernel.source, name, plain)
        except CudaError as exc:
            return f"{kernel.where}: {needs.why}; {plain}: {refusal(exc)}"
    return None
