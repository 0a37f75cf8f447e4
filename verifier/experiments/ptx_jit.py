"""PTX-only JIT: a compute_75 PTX kernel JIT-compiled by the driver, run, checked and timed.

The first load is timed four ways, each in fresh processes: JIT with the cache disabled,
JIT into an empty cache, load from a warm cache, and native SASS (a cubin NVRTC built for
this GPU). Occupancy is reported at a stated block size, with the grid that fills the GPU.

Every time here is a host cost (method 'host'): perf_counter in a fresh process around
cuModuleLoadData (the driver's JIT compile runs on the CPU; a sub-millisecond load is the
driver and the file system) and around cuInit. The host CPU is in the provenance; the
occupancy, the grid and the PTX version are facts of the GPU, the kernel and NVRTC.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier import cachedir
from verifier.cuda import Device, compile_source, ptx_isa_version
from verifier.experiment import Outcome, failure, timing
from verifier.kernels import saxpy
from verifier.spawn import spawn

ID = "ptx-jit"
PURPOSE = "JIT-compile compute_75 PTX in a fresh process; occupancy, grid, and first-load time four ways"
VIRTUAL_ARCH = "compute_75"


def host_timing(name: str, seconds: list[float], what: str) -> list[Result]:
    """experiment.timing()'s median, min and max, said to be host costs (method 'host')."""
    return [
        replace(r, method="host", description=f"host cost: {r.description}; the host CPU is in the provenance")
        for r in timing(name, seconds, what)
    ]


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    outcome = Outcome(repeats=repeats)
    cc = device.describe()["compute_capability"].replace(".", "")
    ptx = compile_source(saxpy.SOURCE, "saxpy.cu", VIRTUAL_ARCH)
    cubin = compile_source(saxpy.SOURCE, "saxpy.cu", f"sm_{cc}")
    ptx_file, cubin_file = workdir / "saxpy.ptx", workdir / "saxpy.cubin"
    ptx_file.write_bytes(ptx.image.rstrip(b"\0 ") + b"\0")
    cubin_file.write_bytes(cubin.image)
    outcome.add(Result("ptx_isa_version", ptx_isa_version(ptx.image), "", "PTX ISA version NVRTC emitted"))

    def once(image: Path, env: dict[str, str]) -> dict[str, Any]:
        return spawn("kernels.saxpy", "load_and_run", {"image": str(image)}, env)

    first = once(ptx_file, {"CUDA_CACHE_DISABLE": "1"})
    if not outcome.gate("ptx loads on this driver", first["ok"], failure(first)):
        return outcome
    outcome.gate(
        "results match numpy on fresh random data",
        first["correct"],
        f"max relative error {first['max_rel_error']:.2e}",
    )
    outcome.add(
        Result("block_size", saxpy.BLOCK_SIZE, "threads/block", "threads per block used for occupancy"),
        Result(
            "blocks_per_sm", first["blocks_per_sm"], "blocks/SM", f"active blocks per SM at {saxpy.BLOCK_SIZE} threads"
        ),
        Result("sm_count", first["sm_count"], "SMs", "multiprocessors on the GPU"),
        Result("grid", first["grid"], "blocks", "grid that fills the GPU (blocks per SM × SMs)"),
    )
    samples: dict[str, list[float]] = {
        "jit_cache_disabled": [],
        "jit_cold_cache": [],
        "warm_cache": [],
        "native_sass": [],
    }
    inits: list[float] = []
    cache_files = 0
    all_ok = True
    for i in range(repeats):
        with tempfile.TemporaryDirectory(prefix="jitcache-", dir=workdir) as cache:
            env = {"CUDA_CACHE_PATH": cache, "CUDA_CACHE_DISABLE": "0"}
            disabled = {"CUDA_CACHE_DISABLE": "1", "CUDA_CACHE_PATH": cache}
            # Three units, rotated each repeat so that no way is always the first to run.
            units: list[list[tuple[str, Path, dict[str, str]]]] = [
                [("jit_cache_disabled", ptx_file, disabled)],
                [("jit_cold_cache", ptx_file, env), ("warm_cache", ptx_file, env)],
                [("native_sass", cubin_file, disabled)],
            ]
            runs = {}
            for unit in units[i % 3 :] + units[: i % 3]:
                for way, image, way_env in unit:
                    runs[way] = once(image, way_env)
                    if way == "jit_cold_cache":
                        cache_files = max(cache_files, len(cachedir.entries(cachedir.listing(Path(cache)))))
        for way, r in runs.items():
            all_ok &= bool(r["ok"] and r["correct"])
            if r["ok"]:
                samples[way].append(r["load_s"])
                inits.append(r["init_s"])
    outcome.gate("every timed run loaded and computed correctly", all_ok)
    outcome.gate(
        "the cold-cache run wrote entries into its fresh CUDA_CACHE_PATH", cache_files > 0, f"{cache_files} entries"
    )
    labels = {
        "jit_cache_disabled": "first load of the PTX with CUDA_CACHE_DISABLE=1",
        "jit_cold_cache": "first load of the PTX into an empty JIT cache",
        "warm_cache": "load of the PTX from a warm JIT cache",
        "native_sass": f"load of native SASS (sm_{cc} cubin)",
    }
    for way, values in samples.items():
        if values:
            outcome.add(*host_timing(f"load_{way}", values, labels[way]))
    if inits:
        outcome.add(*host_timing("cuinit", inits, "cuInit and primary context in a fresh process"))
    return outcome


summarise = None
"""No pure summary: run() judges what it saw as it goes (the experiment contract, verifier/contract.py)."""
