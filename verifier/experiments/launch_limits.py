"""Launch limits: the grid and block shapes allowed, the answer one past each, where blocks ran.

Read here: the attributes device-limits lacks (largest block and grid per dimension, cooperative
launch; pages cite device-limits for the rest) and cuOccupancyMaxPotentialClusterSize's largest
cluster for a light kernel, portable and non-portable.

Each limit is launched at and one past (cuLaunchKernel); also dynamic shared memory one byte over
the default per-block limit, and a block of the GPU's most threads for a kernel whose registers
do not fit that many. A launch at a limit must run every block (each counts itself with an
atomic); one past it must be refused, and the error's name, number and message are the
measurement. After each refusal a one-block launch checks that the context still works.
Placement: grids of 1, 8, the SM count and twice it of one-warp blocks, REPEATS times each, each
block recording %smid, %nsmid, %globaltimer at its start and end and the clock64 cycles of a
SPIN_NS spin (so a small grid's blocks are resident together). Nothing else is timed.

Prediction for an H200 SXM (132 SMs; the CUDA Programming Guide's table of compute capability
9.0 gives the limits): blocks of at most 1024 × 1024 × 64 threads, grids of 2^31-1 × 65535 ×
65535 blocks, cooperative launch; a largest cluster of 8 blocks (the documented portable size),
16 non-portable. Every launch past a limit fails at cuLaunchKernel with CUDA_ERROR_INVALID_VALUE,
but the register case with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES. The block scheduler spreads
blocks over SMs before doubling up: grids of 1, 8 and 132 blocks run each block on its own SM,
264 blocks two per SM on all 132; %nsmid is 132; all blocks start within a few µs.
"""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import CudaError, Device, check
from verifier.experiment import Outcome
from verifier.gpu import opened

ID = "launch-limits"
PURPOSE = (
    "Block and grid dimension limits, the driver's answer one past each, the largest cluster, "
    "and which SMs ran the blocks of a small grid"
)
USES = ("gpu.py",)

ATTRIBUTES = {
    "max_block_dim_x": ("MAX_BLOCK_DIM_X", "threads/block", "largest block size in x"),
    "max_block_dim_y": ("MAX_BLOCK_DIM_Y", "threads/block", "largest block size in y"),
    "max_block_dim_z": ("MAX_BLOCK_DIM_Z", "threads/block", "largest block size in z"),
    "max_grid_dim_x": ("MAX_GRID_DIM_X", "blocks", "largest grid size in x"),
    "max_grid_dim_y": ("MAX_GRID_DIM_Y", "blocks", "largest grid size in y"),
    "max_grid_dim_z": ("MAX_GRID_DIM_Z", "blocks", "largest grid size in z"),
    "cooperative_launch": ("COOPERATIVE_LAUNCH", "", "whether kernels can be launched cooperatively"),
}
"""Recorded here: result name -> (CU_DEVICE_ATTRIBUTE_ suffix, unit, what)."""
USED = {"sm_count": "MULTIPROCESSOR_COUNT", "max_threads_per_block": "MAX_THREADS_PER_BLOCK"}
USED |= {"shared_memory_per_block": "MAX_SHARED_MEMORY_PER_BLOCK"}
"""Read to build the cases, recorded by device-limits (not repeated here)."""
SPIN_NS, REPEATS, WARP, CLUSTER_BLOCK = 20_000, 5, 32, 128

SOURCE = r"""
extern "C" __global__ void edge(unsigned int* count) {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) atomicAdd(count, 1u);
}
// 64 values live across a loop: more registers per thread than 1024 threads can have.
extern "C" __global__ void heavy(unsigned int* count, float* out, const float* in, int rounds) {
    if (threadIdx.x == 0) atomicAdd(count, 1u);
    if (in == 0) return;  // launched with null arrays: it computes nothing, whatever its block
    float x = in[threadIdx.x], v[64], sum = 0.0f;
#pragma unroll
    for (int k = 0; k < 64; ++k) v[k] = x * (float)(k + 1);
    for (int r = 0; r < rounds; ++r)
#pragma unroll
        for (int k = 0; k < 64; ++k) v[k] = fmaf(v[k], 0.5f, fmaf(v[(k + 1) % 64], 0.25f, x));
#pragma unroll
    for (int k = 0; k < 64; ++k) sum += v[k];
    out[threadIdx.x] = sum;
}
// Each block's first thread: where it ran, when it started and ended, and the cycles it spun.
extern "C" __global__ void where(unsigned long long* rec, unsigned long long spin_ns) {
    if (threadIdx.x != 0) return;
    unsigned int smid, nsmid;
    unsigned long long t0, t;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(nsmid));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    long long c0 = clock64();
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < spin_ns);
    long long c1 = clock64();
    unsigned long long* r = rec + 5ull * blockIdx.x;
    r[0] = smid; r[1] = nsmid; r[2] = t0; r[3] = t; r[4] = (unsigned long long)(c1 - c0);
}
"""


Case = tuple[str, tuple[int, int, int], tuple[int, int, int], int]  # kernel, grid, block, dynamic shared bytes


def cases(a: dict[str, int], heavy_max: int) -> dict[str, Case]:
    """Each limit launched at and one past; the block of (32, 32, 2) has each side in range."""
    t, s, one, warp = a["max_threads_per_block"], a["shared_memory_per_block"], (1, 1, 1), (WARP, 1, 1)
    gx, gy, gz, bz = (a[f"max_{d}"] for d in ("grid_dim_x", "grid_dim_y", "grid_dim_z", "block_dim_z"))
    return {
        "threads_at_limit": ("edge", one, (t, 1, 1), 0),
        "threads_over": ("edge", one, (t + 1, 1, 1), 0),
        "block_z_at_limit": ("edge", one, (1, 1, bz), 0),
        "block_z_over": ("edge", one, (1, 1, bz + 1), 0),
        "block_product_over": ("edge", one, (32, 32, 2), 0),
        "grid_x_over": ("edge", (gx + 1, 1, 1), one, 0),
        "grid_y_at_limit": ("edge", (1, gy, 1), warp, 0),
        "grid_y_over": ("edge", (1, gy + 1, 1), warp, 0),
        "grid_z_at_limit": ("edge", (1, 1, gz), warp, 0),
        "grid_z_over": ("edge", (1, 1, gz + 1), warp, 0),
        "shared_at_limit": ("edge", one, warp, s),
        "shared_over": ("edge", one, warp, s + 1),
        "registers_at_limit": ("heavy", one, (heavy_max, 1, 1), 0),
        "registers_over": ("heavy", one, (t, 1, 1), 0),
    }


def past_limit(c: Case, a: dict[str, int], heavy_max: int) -> bool:
    """Whether a launch breaks a limit the attributes (or the kernel's own) state."""
    kernel, grid, block, shared = c
    dims = ("grid_dim_x", "grid_dim_y", "grid_dim_z", "block_dim_x", "block_dim_y", "block_dim_z")
    over = any(n > a[f"max_{d}"] for n, d in zip((*grid, *block), dims, strict=True))
    most = heavy_max if kernel == "heavy" else a["max_threads_per_block"]
    return over or block[0] * block[1] * block[2] > most or shared > a["shared_memory_per_block"]


def launch(drv: Any, fn: Any, grid: tuple[int, ...], block: tuple[int, ...], shared: int, args: list[Any]) -> None:
    """cuLaunchKernel with all three dimensions, on the default stream; args as numpy scalars."""
    import numpy as np

    held = [np.array([x]) for x in args]
    pointers = np.array([h.ctypes.data for h in held], dtype=np.uint64)
    check("cuLaunchKernel", drv.cuLaunchKernel(fn, *grid, *block, shared, 0, pointers.ctypes.data, 0))


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    drv = device.driver
    a = {k: device.attribute(f"CU_DEVICE_ATTRIBUTE_{s}") for k, (s, _, _) in ATTRIBUTES.items()}
    a |= {k: device.attribute(f"CU_DEVICE_ATTRIBUTE_{s}") for k, s in USED.items()}
    raw: dict[str, Any] = {"cases": {}, "placement": {}}
    with opened(device) as gpu, gpu.buffer(4) as count, gpu.buffer(2 * a["sm_count"] * 5 * 8) as rec:
        fns = {k: gpu.kernel(SOURCE, k) for k in ("edge", "heavy", "where")}
        for key, suffix in (("heavy_max_threads", "MAX_THREADS_PER_BLOCK"), ("heavy_registers", "NUM_REGS")):
            attr = getattr(drv.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{suffix}")
            raw[key] = int(check("cuFuncGetAttribute", drv.cuFuncGetAttribute(attr, fns["heavy"])))
        heavy_max = raw["heavy_max_threads"]

        def attempt(kernel: str, grid: tuple[int, ...], block: tuple[int, ...], shared: int) -> dict[str, Any]:
            check("cuMemsetD32", drv.cuMemsetD32(count, 0, 1))
            args = [np.uint64(count)] + ([] if kernel == "edge" else [np.uint64(0), np.uint64(0), np.int32(1)])
            try:
                launch(drv, fns[kernel], grid, block, shared, args)
                check("cuCtxSynchronize", drv.cuCtxSynchronize())
                out: dict[str, Any] = {"ok": True}
            except CudaError as exc:
                out = exc.as_result()
            out["blocks_ran"] = int(gpu.download(np.zeros(1, dtype=np.uint32), count)[0])
            return out

        for name, c in cases(a, heavy_max).items():
            result = attempt(*c)
            if not result["ok"]:
                result["after_ok"] = attempt("edge", (1, 1, 1), (1, 1, 1), 0) == {"ok": True, "blocks_ran": 1}
            raw["cases"][name] = result
        raw["cluster"] = cluster_sizes(drv, fns["edge"], gpu.stream, a["sm_count"])
        for key, n in placements(a["sm_count"]).items():
            runs = []
            for _ in range(REPEATS):
                check("cuMemsetD32", drv.cuMemsetD32(rec, 0, n * 10))
                launch(drv, fns["where"], (n, 1, 1), (WARP, 1, 1), 0, [np.uint64(rec), np.uint64(SPIN_NS)])
                check("cuCtxSynchronize", drv.cuCtxSynchronize())
                words = gpu.download(np.zeros(n * 5, dtype=np.uint64), rec)
                runs.append([[int(w) for w in words[5 * b : 5 * b + 5]] for b in range(n)])
            raw["placement"][key] = runs
    return summarise(raw, a)


def cluster_sizes(drv: Any, fn: Any, stream: Any, sms: int) -> dict[str, int | str]:
    """cuOccupancyMaxPotentialClusterSize for CLUSTER_BLOCK-thread blocks, portable and not."""
    config = drv.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = 16 * sms, 1, 1
    config.blockDimX, config.blockDimY, config.blockDimZ = CLUSTER_BLOCK, 1, 1
    config.sharedMemBytes, config.hStream, config.numAttrs, config.attrs = 0, stream, 0, []
    out: dict[str, int | str] = {}
    for key, allowed in (("portable", 0), ("non_portable", 1)):
        try:
            attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
            check("cuFuncSetAttribute", drv.cuFuncSetAttribute(fn, attr, allowed))
            call = drv.cuOccupancyMaxPotentialClusterSize(fn, config)
            out[key] = int(check("cuOccupancyMaxPotentialClusterSize", call))
        except CudaError as exc:
            out[key] = str(exc)
    return out


def placements(sms: int) -> dict[str, int]:
    """The grid sizes of the placement runs, by result-name key."""
    return {"1": 1, "8": 8, "sms": sms, "2sms": 2 * sms}


def summarise(raw: dict[str, Any], a: dict[str, int]) -> Outcome:
    """Gates and results from the raw numbers (pure: the CPU test feeds it fixture data)."""
    outcome = Outcome(repeats=REPEATS)
    for name, (suffix, unit, what) in ATTRIBUTES.items():
        value = bool(a[name]) if name == "cooperative_launch" else a[name]
        outcome.add(Result(name, value, unit, f"{what} (CU_DEVICE_ATTRIBUTE_{suffix})"))
    for key, what in (("portable", "portable sizes only"), ("non_portable", "non-portable sizes allowed")):
        size, text = raw["cluster"][key], f"largest cluster of a light kernel's {CLUSTER_BLOCK}-thread blocks, {what}"
        text += " (cuOccupancyMaxPotentialClusterSize)" + (f": not answered: {size}" if isinstance(size, str) else "")
        outcome.add(Result(f"max_cluster_size_{key}", None if isinstance(size, str) else size, "blocks", text[:1000]))
    launches(outcome, raw, a)
    placement(outcome, raw, a["sm_count"])
    return outcome


def launches(outcome: Outcome, raw: dict[str, Any], a: dict[str, int]) -> None:
    heavy_max = raw["heavy_max_threads"]
    of = "of the heavy kernel (cuFuncGetAttribute)"
    outcome.add(
        Result("heavy_registers", raw["heavy_registers"], "registers/thread", f"registers per thread {of}"),
        Result("heavy_max_threads_per_block", heavy_max, "threads/block", f"largest block {of}"),
    )
    ran, short, refused, usable = [], [], [], []
    for name, c in cases(a, heavy_max).items():
        r, (kernel, grid, block, shared) = raw["cases"][name], c
        shape = f"{kernel} kernel, grid {grid}, block {block}, {shared} bytes of dynamic shared memory"
        blocks = grid[0] * grid[1] * grid[2]
        if not past_limit(c, a, heavy_max):
            ran.append(f"{name}: {'ran' if r['ok'] else r['error_name']}, {r['blocks_ran']} of {blocks} blocks")
            ok = r["ok"] and r["blocks_ran"] == blocks
            short += [] if ok else [name]
            outcome.add(Result(f"{name}_launched", ok, "", f"{shape}: launched and ran every block"))
            continue
        if r["ok"] or r["blocks_ran"]:
            refused.append(f"{name}: launched, {r['blocks_ran']} blocks ran")
            outcome.add(Result(f"{name}_error", "launched", "", f"{shape}: past a limit, yet launched"))
            continue
        usable.append(f"{name}: " + ("usable" if r["after_ok"] else "NOT usable"))
        outcome.add(
            Result(f"{name}_error", r["error_name"], "", f"{shape}: the error {r['call']} returned"),
            Result(f"{name}_error_code", r["error_code"], "", f"{shape}: the error's number"),
            Result(f"{name}_error_message", r["error_message"], "", f"{shape}: the driver's message"),
        )
    outcome.gate("every launch at a limit ran all its blocks", not short, "; ".join(ran))
    outcome.gate("every launch past a limit was refused, no block ran", not refused, "; ".join(refused) or "all")
    after = all(s.endswith(": usable") for s in usable)
    outcome.gate("after each refused launch the context still runs a kernel", after, "; ".join(usable))


def placement(outcome: Outcome, raw: dict[str, Any], sms: int) -> None:
    """How many SMs ran each grid's blocks, from each block's record: smid, nsmid, start, end, cycles."""
    bad, missing, clocks, nsmid = [], [], [], 0
    for key, n in placements(sms).items():
        runs = raw["placement"][key]
        distinct, most, spread, together = [], [], [], []
        for i, blocks in enumerate(runs):
            if any(b[2] == 0 for b in blocks) or len(blocks) != n:
                missing.append(f"{key} run {i}")
                continue
            bad += [f"{key} run {i}: SM {b[0]}" for b in blocks if b[0] >= sms]
            nsmid = max(nsmid, *(b[1] for b in blocks))
            on = Counter(b[0] for b in blocks)
            starts, ends = [b[2] for b in blocks], [b[3] for b in blocks]
            distinct.append(len(on))
            most.append(max(on.values()))
            together.append(max(starts) < min(ends))
            spread.append((max(starts) - min(starts)) / 1000)
            clocks += [1000 * b[4] / (b[3] - b[2]) for b in blocks if b[3] > b[2]]
        if not distinct:
            continue
        grid = f"a grid of {n} one-warp blocks, each spinning {SPIN_NS // 1000} µs ({len(distinct)} runs)"
        outcome.add(
            Result(f"placement_{key}_blocks", n, "blocks", f"blocks in {grid}"),
            Result(f"placement_{key}_distinct_sms", min(distinct), "SMs", f"distinct %smid values in {grid}, fewest"),
            Result(f"placement_{key}_most_on_one_sm", max(most), "blocks", f"most blocks on one SM in {grid}"),
            Result(f"placement_{key}_co_resident", all(together), "", f"every block started before any ended, {grid}"),
        )
        if n > 1:  # a duration is positive: a run whose blocks all started in one timer tick gives none
            ticks = [round(s, 3) for s in spread if s]
            what = f"last block's start minus the first's (%globaltimer), {grid}; median of the {len(ticks)} runs "
            what += "whose blocks did not all start in one tick"
            median = statistics.median(ticks) if ticks else None
            outcome.add(Result(f"placement_{key}_start_spread", median, "µs", what, ticks, method="in-kernel"))
        if n <= sms:
            own, what = all(d == n for d in distinct), f"every block on an SM of its own in every run, {grid}"
            outcome.add(Result(f"placement_{key}_own_sm", own, "", what))
        if n == 8:
            ids = ", ".join(str(b[0]) for b in runs[0])
            outcome.add(Result("placement_8_sm_ids", ids, "", "the %smid of blocks 0 to 7, first run", method="info"))
    outcome.add(Result("nsmid", nsmid, "SMs", "%nsmid, the SM identifiers' range as PTX reports it (largest seen)"))
    if clocks:
        what = "SM clock during the placement spins (clock64 cycles over %globaltimer ns per block), median"
        outcome.add(Result("placement_clock", round(statistics.median(clocks)), "MHz", what, method="in-kernel"))
    outcome.gate("every block of every placement grid recorded itself", not missing, ", ".join(missing))
    outcome.gate(f"every block recorded an SM id below the SM count ({sms})", not bad, "; ".join(bad[:50]))
