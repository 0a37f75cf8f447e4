"""Global memory latency: one thread chasing pointers through a random cycle over footprints from
8 KiB to 1 GiB, and the latency levels that curve shows, found by a stated rule, not assumed.

Nodes are 128 bytes apart (one L1/L2 line each), linked in one random cycle; each node holds the
next one's address, so each load's address is the previous load's value: loads cannot overlap
and the time per load is the latency. Plain global loads (ld.global, LDG in the SASS; no .cg),
so L1 may serve them; the chase prefers the largest L1 carveout. The footprints (verifier/latency_levels.py) are dense
in L1 (8-224 KiB), sparse to L2 / 4, every ~L2 / 30 (2 MiB on a 60 MiB L2) to 1.6 × L2, then 128
MiB, 256 MiB and 1 GiB, placed from CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE. One launch per footprint:
the thread first walks the whole cycle (at most WARM_CAP nodes), so every timed load's line was
last touched one full cycle before (a footprint larger than a cache then misses it each time),
then times SEGMENTS segments of STEPS loads with clock64: cycles per load, one sample a segment.
The levels and their boundaries come from the curve alone (latency_levels.LEVEL_RULE) and are
named by order (level_1 ...); each boundary's description says which known size it is nearest.

Per SM: one block per SM (grid = SM count; each block asks for over half the SM's shared memory,
so no SM holds two), one thread each, reading %smid (SR_VIRTUALSMID in the SASS: unique per SM,
not a floorplan position) and chasing its own start in one PER_SM_BYTES cycle (L1 misses, far
inside L2, warmed by a whole walk), all SMs at once: the spread of L2 latency over SMs shows.

ns are cycles over the SM clock read inside the same kernel (clock64 cycles over %globaltimer ns
across the launch), not the attribute's maximum. The final node of every chase (each footprint,
each block) is checked against the CPU's walk of the same cycle. Estimated time on an H200: ~7 s
of chasing (the warm walks of 16-256 MiB dominate: ~21 M dependent loads), ~10 s with the CPU's
permutations and the links; the whole run stays well under 30 s.

Prediction, written before this version first ran (leads from published microbenchmarks and the
previous coarse run, not facts): H200 SXM, 132 SMs, SM clock 1980 MHz. Four levels:
level_1 ≈ 30-40 cycles (≈ 16-20 ns) to ~192-224 KiB, its boundary nearest the 256 KiB L1 + shared
storage; level_2 ≈ 250-290 cycles (≈ 130-145 ns) to ~28-30 MiB, nearest half the L2 (30 MiB);
level_3 ≈ 400-500 cycles (≈ 200-250 ns, the far L2 partition) to ~56-60 MiB, nearest the L2
(60 MiB); level_4 ≈ 620-700 cycles (≈ 315-355 ns, HBM) to 1 GiB. Per SM: median ≈ level_2,
fastest to slowest SM 10-25% apart; in-kernel clock ≈ 1980 MHz.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check, compile_source
from verifier.experiment import Outcome, clock_result
from verifier.gpu import PROBE_SOURCE
from verifier.latency_levels import (
    IN_KERNEL,
    KIB,
    MIB,
    find_levels,
    footprints,
    known_sizes,
    label,
    level_results,
    per_sm_results,
    pretty,
    to_ns,
)

ID = "memory-latency"
PURPOSE = "Pointer-chasing latency per footprint: the levels the curve shows, their boundaries, and L2 latency per SM"
USES = ("gpu.py", "timing.py", "latency_levels.py")

NODE_BYTES = 128
STEPS = 2048
SEGMENTS = 16
WARM_CAP = 1 << 20
"""Nodes walked before timing: the whole cycle up to 128 MiB; beyond, far past L2, a part suffices."""
PER_SM_BYTES = 4 * MIB
PER_SM_STEPS = 16384
SEED = 15

SOURCE = (
    PROBE_SOURCE
    + r"""
// Each node holds the address of the next: a load's value is the next load's address, with no
// arithmetic between them. A plain global load (ld.global: LDG, cached in L1 by default; C++'s *p
// of a loaded pointer gives a generic LD), ordered with the clock reads as volatile asm.
__device__ __forceinline__ const unsigned long long* next(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(p));
    return (const unsigned long long*)v;
}
extern "C" __global__ void chase(const unsigned long long* base, unsigned int warm, unsigned int steps,
                                 unsigned int segments, unsigned long long* log) {
    // log[0]: the node the chase ended on, [1]: clock64 cycles of the launch, [2]: its %globaltimer
    // ns, [3 + s]: clock64 cycles of timed segment s. The chase starts at node 0.
    long long c0 = clock64();
    unsigned long long n0 = probe_ns();
    const unsigned long long* p = base;
    for (unsigned int i = 0; i < warm; ++i) p = next(p);
    for (unsigned int s = 0; s < segments; ++s) {
        long long t0 = clock64();
        for (unsigned int i = 0; i < steps; ++i) p = next(p);
        long long t1 = clock64();
        log[3 + s] = (unsigned long long)(t1 - t0);
    }
    long long c1 = clock64();
    unsigned long long n1 = probe_ns();
    log[0] = (unsigned long long)(p - base) / NODE_WORDS;
    log[1] = (unsigned long long)(c1 - c0);
    log[2] = n1 - n0;
}

extern "C" __global__ void chase_per_sm(const unsigned long long* base, const unsigned int* starts,
                                        unsigned int warm, unsigned int steps, unsigned long long* out) {
    // One thread per block, one block per SM (the launch's dynamic shared memory sees to it).
    // out[5 * block + 0]: %smid, 1: clock64 cycles of the timed steps, 2: the block's clock64
    // cycles, 3: its %globaltimer ns, 4: the node it ended on.
    unsigned int smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    long long c0 = clock64();
    unsigned long long n0 = probe_ns();
    const unsigned long long* p = base + (unsigned long long)starts[blockIdx.x] * NODE_WORDS;
    for (unsigned int i = 0; i < warm; ++i) p = next(p);
    long long t0 = clock64();
    for (unsigned int i = 0; i < steps; ++i) p = next(p);
    long long t1 = clock64();
    unsigned long long n1 = probe_ns();
    unsigned long long* o = out + 5ull * blockIdx.x;
    o[0] = smid;
    o[1] = (unsigned long long)(t1 - t0);
    o[2] = (unsigned long long)(t1 - c0);
    o[3] = n1 - n0;
    o[4] = (unsigned long long)(p - base) / NODE_WORDS;
}

extern "C" __global__ void link(unsigned long long* base, const unsigned int* order, unsigned int nodes) {
    // Node order[i] holds the address of node order[i + 1]: one cycle through every node.
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < nodes; i += gridDim.x * blockDim.x)
        base[(unsigned long long)order[i] * NODE_WORDS] =
            (unsigned long long)(base + (unsigned long long)order[i + 1 == nodes ? 0 : i + 1] * NODE_WORDS);
}
""".replace("NODE_WORDS", str(NODE_BYTES // 8))
)


def summarise(raw: dict[str, Any], attrs: dict[str, int]) -> Outcome:
    """Gates and results from per-footprint cycle samples and the per-SM chase (fixtures on the CPU)."""
    fps: list[dict[str, Any]] = raw["footprints"]
    per_sm: dict[str, Any] | None = raw.get("per_sm")
    blocks: list[dict[str, Any]] = per_sm["blocks"] if per_sm else []
    l2, max_mhz = attrs["l2_bytes"], attrs.get("clock_khz", 0) / 1000
    outcome = Outcome(repeats=min((len(f["cycles"]) for f in fps), default=0))
    wrong = [f"{pretty(f['bytes'])}: {f['final']} != {f['expected']}" for f in fps if f["final"] != f["expected"]]
    wrong += [f"SM {b['sm']}: {b['final']} != {b['expected']}" for b in blocks if b["final"] != b["expected"]]
    outcome.gate(
        "the chase ends where the CPU's walk of the same cycle ends (every footprint, every per-SM block)",
        bool(fps) and bool(blocks) and not wrong,
        "; ".join(wrong) or f"{len(fps)} footprints, {len(blocks)} blocks; skipped: {raw.get('skipped', [])}",
    )
    clocks = [float(f["clock_mhz"]) for f in fps if f["clock_mhz"] > 0]
    mhz = statistics.median(clocks) if clocks else 0.0
    outcome.gate(
        "the SM clock read inside the chase is above zero and at most the attribute's maximum (+5%)",
        0 < mhz <= 1.05 * max_mhz,
        f"{mhz:.0f} MHz in-kernel, {max_mhz:.0f} MHz maximum",
    )
    curve = [(int(f["bytes"]), statistics.median(f["cycles"])) for f in fps]
    for f, (size, cycles) in zip(fps, curve, strict=True):
        whole = "the whole cycle" if f["warm"] >= f["nodes"] else f"{f['warm']} of its nodes"
        outcome.add(
            Result(
                f"cycles_{label(size)}",
                round(cycles, 1),
                "cycles",
                f"clock64() cycles per dependent load, {pretty(size)} footprint ({f['nodes']} nodes {NODE_BYTES} B "
                f"apart, {whole} walked before timing); median of {len(f['cycles'])} segments of {STEPS} loads",
                [round(c, 2) for c in f["cycles"]],
                method=IN_KERNEL,
            ),
            Result(
                f"ns_{label(size)}",
                to_ns(cycles, mhz),
                "ns",
                f"ns per dependent load, {pretty(size)} footprint: its cycles at the in-kernel SM clock",
                method=IN_KERNEL,
            ),
        )
    levels, loose = find_levels(curve)
    level_results(outcome, levels, loose, mhz, known_sizes(l2, attrs.get("cc", 0)))
    if per_sm:
        per_sm_results(outcome, per_sm, attrs.get("sm_count", 0), levels)
    outcome.add(*clock_result("chase", {"clock_mhz": clocks}, "the pointer chase (samples: one launch per footprint)"))
    outcome.add(
        Result("l2_size", l2 // 1024, "KiB", "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, in KiB like the level boundaries"),
        Result("sm_clock_max", round(max_mhz), "MHz", "CU_DEVICE_ATTRIBUTE_CLOCK_RATE (maximum SM clock)"),
    )
    return outcome


def cycle(nodes: int) -> Any:
    """A random order of the nodes: node order[i] links to order[i + 1], the last to the first."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    order = rng.permutation(nodes).astype(np.uint32)
    start = int(np.flatnonzero(order == 0)[0])
    return np.roll(order, -start)  # the walk starts at node 0


def measure(gpu: Any, size: int, fns: dict[str, Any]) -> dict[str, Any]:
    """One footprint: link a random cycle, walk it once, then time SEGMENTS segments of STEPS loads."""
    import numpy as np

    nodes = size // NODE_BYTES
    order = cycle(nodes)
    warm, words = min(nodes, WARM_CAP), 3 + SEGMENTS
    with gpu.buffer(size) as nxt, gpu.buffer(nodes * 4) as dorder, gpu.buffer(words * 8) as log:
        gpu.upload(dorder, order)
        gpu.launch(fns["link"], 1024, 256, [np.uint64(nxt), np.uint64(dorder), np.uint32(nodes)])
        args = [np.uint64(nxt), np.uint32(warm), np.uint32(STEPS), np.uint32(SEGMENTS), np.uint64(log)]
        gpu.launch(fns["chase"], 1, 1, args)
        gpu.sync()
        got = [int(w) for w in gpu.download(np.empty(words, dtype=np.uint64), log)]
    return {
        "bytes": size,
        "nodes": nodes,
        "warm": warm,
        "cycles": [c / STEPS for c in got[3:]],
        "clock_mhz": 1000 * got[1] / got[2] if got[2] else 0.0,
        "final": got[0],
        "expected": int(order[(warm + STEPS * SEGMENTS) % nodes]),
    }


def measure_per_sm(gpu: Any, sms: int, shared: int, fns: dict[str, Any]) -> dict[str, Any]:
    """Every SM's block chasing one PER_SM_BYTES cycle from its own start (spread evenly over the cycle)."""
    import numpy as np

    nodes = PER_SM_BYTES // NODE_BYTES
    order = cycle(nodes)
    positions = [b * nodes // sms for b in range(sms)]
    starts = order[positions].astype(np.uint32)
    buffers = gpu.buffer(PER_SM_BYTES), gpu.buffer(nodes * 4), gpu.buffer(sms * 4), gpu.buffer(sms * 5 * 8)
    with buffers[0] as nxt, buffers[1] as dorder, buffers[2] as dstarts, buffers[3] as out:
        gpu.upload(dorder, order)
        gpu.upload(dstarts, starts)
        gpu.launch(fns["link"], 1024, 256, [np.uint64(nxt), np.uint64(dorder), np.uint32(nodes)])
        args = [np.uint64(nxt), np.uint64(dstarts), np.uint32(nodes), np.uint32(PER_SM_STEPS), np.uint64(out)]
        gpu.launch(fns["chase_per_sm"], sms, 1, args, shared=shared)
        gpu.sync()
        words = gpu.download(np.empty(sms * 5, dtype=np.uint64), out).reshape(sms, 5)
    rows = [[int(w) for w in row] for row in words]
    ns = sum(r[3] for r in rows)
    return {
        "bytes": PER_SM_BYTES,
        "steps": PER_SM_STEPS,
        "clock_mhz": 1000 * sum(r[2] for r in rows) / ns if ns else 0.0,
        "blocks": [
            {
                "sm": r[0],
                "cycles": r[1] / PER_SM_STEPS,
                "final": r[4],
                "expected": int(order[(p + nodes + PER_SM_STEPS) % nodes]),
            }
            for r, p in zip(rows, positions, strict=True)
        ],
    }


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    from verifier.gpu import opened

    a = device.attribute
    attrs: dict[str, Any] = device.attributes(
        l2_bytes="CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE",
        clock_khz="CU_DEVICE_ATTRIBUTE_CLOCK_RATE",
        sm_count="CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
    )
    major, minor = device.capability()
    attrs["cc"] = 10 * major + minor
    # Over half the SM's shared memory per block: no SM can hold two of the per-SM blocks.
    per_sm_shared = a("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR")
    shared = min(a("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"), per_sm_shared // 2 + KIB)
    raw: dict[str, Any] = {"footprints": [], "skipped": []}
    with opened(device) as gpu:
        module, _ = device.load(compile_source(SOURCE, "memory_latency.cu", gpu.arch).image)
        fns = {name: device.function(module, name) for name in ("chase", "chase_per_sm", "link")}
        drv, attr = gpu.drv, gpu.drv.CUfunction_attribute
        carveout = attr.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
        check("cuFuncSetAttribute", drv.cuFuncSetAttribute(fns["chase"], carveout, 0))  # 0% shared: all L1
        opt_in = attr.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        check("cuFuncSetAttribute", drv.cuFuncSetAttribute(fns["chase_per_sm"], opt_in, shared))
        for size in footprints(attrs["l2_bytes"]):
            free, _ = check("cuMemGetInfo", drv.cuMemGetInfo())
            if size > int(free) // 2:
                raw["skipped"].append(pretty(size))
                continue
            raw["footprints"].append(measure(gpu, size, fns))
        raw["per_sm"] = measure_per_sm(gpu, attrs["sm_count"], shared, fns)
    return summarise(raw, attrs)
