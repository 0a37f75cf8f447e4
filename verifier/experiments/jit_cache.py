"""JIT cache: which ways of loading a kernel put the driver's JIT output in its cache.

The seed Q&A's table, measured: for each way, in a fresh CUDA_CACHE_PATH, a first process
loads and runs the kernel, then the cache folder is listed, then a second process loads it
again. The cache was used when the load added entries (files other than the index; for
NVRTC, beyond those NVRTC itself writes, which a process that only compiles shows) and the
second load was faster. The user's own cache folder is never used: every process gets a
fresh CUDA_CACHE_PATH (the runner gates every experiment on ~/.nv/ComputeCache not changing).
Controls: a process that only calls cuInit, and processes that only run NVRTC, show what
writes to the cache besides the driver's JIT.

What a re-run compares, and why. Cache file names and sizes changed on a fresh node whose
recorded environment (GPU, driver, CUDA, NVRTC, cuda-python) was the same (make verify exited 1
with CHANGED), and how many files there are follows from the same unrecorded causes; so the
listings and every count of entries are information (method 'info', never CHANGED). Load
times are host costs (method 'host': perf_counter in a fresh process; the host CPU is in the
provenance). The discrete values left are facts of the software and the GPU, each with its
cause:
- init_only_wrote_cache: whether cuInit alone writes to the cache, the driver's behaviour.
- nvrtc_only_<arch>_wrote_cache, nvrtc_writes_cache: whether NVRTC (its version is recorded)
  writes to CUDA_CACHE_PATH with no driver call.
- <case>_cache_used: whether the load added an entry, which the driver does when the image
  gives it PTX to compile and no SASS for this GPU's architecture: set by the image, the GPU's
  architecture and the driver.
- <case>_second_faster: whether the second load took at most 1/FASTER of the first, which
  follows from <case>_cache_used: a cached load skips a JIT compile of tens of ms (37-71x
  faster on two H200 nodes), a SASS load has nothing to skip (0.97-1.10x), both far from 2x.
"""

from __future__ import annotations

import statistics
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier import cachedir
from verifier.cuda import Device, compile_source, make_fatbin
from verifier.experiment import Outcome, failure, timing
from verifier.kernels import saxpy
from verifier.spawn import spawn

ID = "jit-cache"
PURPOSE = (
    "Which loading paths (NVRTC cubin or PTX, PTX file, fat binaries) fill a fresh JIT cache and load faster again"
)
VIRTUAL_ARCH = "compute_75"
FASTER = 2.0  # the second load counts as faster when it takes at most 1/FASTER of the first
INFO = "for information, not compared on re-runs: cache file names, sizes and counts vary between nodes"

CASES = {
    "cubin_data": "a cubin for the GPU's real architecture, made beforehand, loaded with cuModuleLoadData",
    "nvrtc_cubin": "NVRTC compiles for the GPU's real architecture (a cubin), loaded with cuModuleLoadData",
    "nvrtc_ptx": f"NVRTC compiles for a virtual architecture ({VIRTUAL_ARCH}, PTX), loaded with cuModuleLoadData",
    "ptx_file": f"a .ptx file ({VIRTUAL_ARCH}) loaded with cuModuleLoad",
    "fatbin_ptx_only": f"a fat binary holding only {VIRTUAL_ARCH} PTX, loaded with cuModuleLoadData",
    "fatbin_sass_and_ptx": f"a fat binary holding SASS for this GPU and {VIRTUAL_ARCH} PTX",
}


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    outcome = Outcome(repeats=repeats)
    cc = device.describe()["compute_capability"].replace(".", "")
    real_arch = f"sm_{cc}"
    ptx = compile_source(saxpy.SOURCE, "saxpy.cu", VIRTUAL_ARCH)
    cubin = compile_source(saxpy.SOURCE, "saxpy.cu", real_arch)
    ptx_file = workdir / "saxpy.ptx"
    ptx_file.write_bytes(ptx.image.rstrip(b"\0 ") + b"\0")
    fatbin_ptx = workdir / "ptx-only.fatbin"
    fatbin_ptx.write_bytes(make_fatbin([ptx], [VIRTUAL_ARCH]))
    fatbin_both = workdir / "sass-and-ptx.fatbin"
    fatbin_both.write_bytes(make_fatbin([cubin, ptx], [real_arch, VIRTUAL_ARCH]))
    cubin_file = workdir / "saxpy.cubin"
    cubin_file.write_bytes(cubin.image)
    how: dict[str, dict[str, Any]] = {
        "cubin_data": {"how": "data", "image": str(cubin_file)},
        "nvrtc_cubin": {"how": "nvrtc", "arch": real_arch},
        "nvrtc_ptx": {"how": "nvrtc", "arch": VIRTUAL_ARCH},
        "ptx_file": {"how": "file", "image": str(ptx_file)},
        "fatbin_ptx_only": {"how": "data", "image": str(fatbin_ptx)},
        "fatbin_sass_and_ptx": {"how": "data", "image": str(fatbin_both)},
    }

    with tempfile.TemporaryDirectory(prefix="jitcache-", dir=workdir) as cache:
        control = spawn("kernels.saxpy", "init_only", {}, {"CUDA_CACHE_PATH": cache, "CUDA_CACHE_DISABLE": "0"})
        found = cachedir.listing(Path(cache))
    if not outcome.gate("a process that only calls cuInit starts", control["ok"], failure(control)):
        return outcome
    outcome.add(*control_results("init_only", found, "cuInit alone"))
    # Does NVRTC itself write to the cache? A process that only compiles, without cuInit.
    # What it writes is told apart from what the driver's load writes in the NVRTC cases.
    nvrtc_wrote: dict[str, set[str]] = {}
    for arch in (real_arch, VIRTUAL_ARCH):
        with tempfile.TemporaryDirectory(prefix="jitcache-", dir=workdir) as cache:
            compiled = spawn(
                "kernels.saxpy", "compile_only", {"arch": arch}, {"CUDA_CACHE_PATH": cache, "CUDA_CACHE_DISABLE": "0"}
            )
            found = cachedir.listing(Path(cache))
        if not outcome.gate(f"NVRTC compiles for {arch} in a fresh process", compiled["ok"], failure(compiled)):
            return outcome
        nvrtc_wrote[arch] = cachedir.entries(found)
        label = f"a process that only runs NVRTC for {arch} (no cuInit, no load)"
        outcome.add(*control_results(f"nvrtc_only_{arch}", found, label))
    outcome.add(
        Result(
            "nvrtc_writes_cache",
            any(nvrtc_wrote.values()),
            "",
            "does NVRTC, with no driver call at all, write entries into CUDA_CACHE_PATH?",
        )
    )

    all_ok, problems = True, []
    for case, args in how.items():
        raw: dict[str, list[Any]] = {"first_s": [], "second_s": [], "entries": [], "load_entries": [], "listings": []}
        written_by_nvrtc = nvrtc_wrote.get(args.get("arch", ""), set()) if args["how"] == "nvrtc" else set()
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(prefix="jitcache-", dir=workdir) as cache:
                env = {"CUDA_CACHE_PATH": cache, "CUDA_CACHE_DISABLE": "0"}
                first = spawn("kernels.saxpy", "load_and_run", args, env)
                found = cachedir.listing(Path(cache))
                second = spawn("kernels.saxpy", "load_and_run", args, env)
            for r in (first, second):
                if not (r["ok"] and r["correct"]):
                    all_ok = False
                    problems.append(f"{case}: {failure(r) or 'wrong result'}")
            if first["ok"] and second["ok"]:
                raw["first_s"].append(first["load_s"])
                raw["second_s"].append(second["load_s"])
                raw["entries"].append(len(cachedir.entries(found)))
                raw["load_entries"].append(len(cachedir.entries(found) - written_by_nvrtc))
                raw["listings"].append(cachedir.describe(found))
        if raw["first_s"]:
            outcome.add(*case_results(case, raw))
    outcome.gate("every load ran the kernel correctly", all_ok, "; ".join(problems[:3]))
    return outcome


def info(name: str, value: str | int, unit: str, description: str) -> Result:
    """A value recorded for information: not a fact of the GPU or the software (see the docstring)."""
    return Result(name, value, unit, f"{description} ({INFO})", method="info")


def host_timing(name: str, seconds: list[float], what: str) -> list[Result]:
    """experiment.timing()'s median, min and max, said to be host costs (method 'host')."""
    return [
        replace(r, method="host", description=f"host cost: {r.description}; the host CPU is in the provenance")
        for r in timing(name, seconds, what)
    ]


def control_results(prefix: str, found: dict[str, tuple[int, int]], label: str) -> list[Result]:
    """What a control process left in its fresh cache: whether it wrote any entry (a fact of the
    software), and its entries and files (information)."""
    entries = cachedir.entries(found)
    return [
        info(f"{prefix}_entries", len(entries), "entries", f"{label}: cache entries written"),
        info(f"{prefix}_cache_listing", cachedir.describe(found), "", f"{label}: the files"),
        Result(f"{prefix}_wrote_cache", bool(entries), "", f"{label}: did it write any entry into the cache?"),
    ]


def case_results(case: str, raw: dict[str, list[Any]]) -> list[Result]:
    """One loading path's results from its repeats (pure: the CPU test feeds it fixtures): raw
    holds per repeat the two load times (s), the entries after the first process, those the
    load added, and the listing."""
    label = CASES[case]
    first_s, second_s, load_entries = raw["first_s"], raw["second_s"], raw["load_entries"]
    speedup = statistics.median(first_s) / statistics.median(second_s)
    return [
        info(f"{case}_cache_entries", max(raw["entries"]), "entries", f"{label}: entries after the first process"),
        info(
            f"{case}_load_entries",
            max(load_entries),
            "entries",
            f"{label}: entries the driver's load added (beyond those NVRTC itself writes)",
        ),
        info(f"{case}_cache_listing", raw["listings"][0], "", f"{label}: the files after the first process"),
        Result(
            f"{case}_cache_used",
            max(load_entries) > 0,
            "",
            f"{label}: did loading it put the driver's JIT output in the cache?",
        ),
        *host_timing(f"{case}_first_load", first_s, f"{label}: first load in a fresh cache"),
        *host_timing(f"{case}_second_load", second_s, f"{label}: second load, same cache, new process"),
        Result(f"{case}_speedup", round(speedup, 2), "×", f"{label}: first load time ÷ second load time (medians)"),
        Result(
            f"{case}_second_faster",
            speedup >= FASTER,
            "",
            f"{label}: was the second load at least {FASTER:g}× faster?",
        ),
    ]


summarise = None
"""No pure summary: run() judges what it saw as it goes (the experiment contract, verifier/contract.py)."""
