"""Global memory latency: one thread chasing pointers through a random cycle, footprints KiB to GiB.

Nodes are 128 bytes apart (one L1/L2 line each), linked in one random cycle; each node holds
the next one's address: each load's address is the previous load's value, so loads cannot
overlap and the time per load is the latency. Plain loads (no volatile, no .cg), so L1 may
serve them; the kernel prefers the largest L1 carveout. Before timing, a parallel kernel writes
every node (warming L2 and the TLB with what fits), and each launch first walks
min(nodes, WARM) untimed steps (warming L1 for the small footprints). Successive launches
continue the chase where the last stopped, so a footprint beyond L2 is never re-walked from a
cached start. Cycles per load come from clock64() around the timed steps inside the kernel,
and ns per load from those cycles at the SM clock (the maximum the attribute gives; the
provenance has NVML's SM clock at the start and end of the run). The difference of two
event-timed launches was tried for ns and dropped: launch jitter made it negative at 8 MiB on
the H200. The final node is checked against the CPU's walk of the same cycle.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check
from verifier.experiment import Outcome

ID = "memory-latency"
PURPOSE = "Pointer-chasing latency per footprint: L1, L2 and HBM levels in cycles and ns, and the L2 knee"
USES = ("gpu.py",)

KIB, MIB = 1 << 10, 1 << 20
FOOTPRINTS = (8 * KIB, 32 * KIB, 128 * KIB, MIB, 8 * MIB, 32 * MIB, 64 * MIB, 256 * MIB, 1024 * MIB)
NODE_BYTES = 128
STEPS = 2048
WARM = 1024
LOG_PAIRS = 1024
"""The kernel logs (cycles, steps) of up to this many launches per footprint and variant."""
SEED = 15

SOURCE = r"""
// Each node holds the address of the next: a load's value is the next load's address, with no
// arithmetic between them.
extern "C" __global__ void chase(const unsigned long long* base, unsigned int start, unsigned int warm,
                                 unsigned int steps, unsigned long long* log) {
    const unsigned long long* p = base + (unsigned long long)start * NODE_WORDS;
    for (unsigned int i = 0; i < warm; ++i) p = (const unsigned long long*)*p;
    long long t0 = clock64();
    for (unsigned int i = 0; i < steps; ++i) p = (const unsigned long long*)*p;
    long long t1 = clock64();
    unsigned long long n = log[0];
    if (n < LOG_PAIRS) { log[2 + 2 * n] = (unsigned long long)(t1 - t0); log[3 + 2 * n] = steps; }
    log[0] = n + 1;
    log[1] = (unsigned long long)(p - base) / NODE_WORDS;  // the node the chase ended on
}

extern "C" __global__ void link(unsigned long long* base, const unsigned int* order, unsigned int nodes) {
    // Node order[i] holds the address of node order[i + 1]: one cycle through every node.
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < nodes; i += gridDim.x * blockDim.x)
        base[(unsigned long long)order[i] * NODE_WORDS] =
            (unsigned long long)(base + (unsigned long long)order[i + 1 == nodes ? 0 : i + 1] * NODE_WORDS);
}
""".replace("LOG_PAIRS", str(LOG_PAIRS)).replace("NODE_WORDS", str(NODE_BYTES // 8))


def label(size: int) -> str:
    if size >= 1 << 30:
        return f"{size >> 30}gib"
    return f"{size >> 20}mib" if size >= MIB else f"{size >> 10}kib"


def pretty(size: int) -> str:
    return label(size).replace("gib", " GiB").replace("mib", " MiB").replace("kib", " KiB")


def level(size: int, l2: int) -> str:
    """The level a footprint is expected to hit: L1 (≤ 32 KiB), L2 (1 MiB to L2/4), HBM (≥ 4 × L2),
    or 'between' (128 KiB: L1 with the full carveout, 32-64 MiB: L2's edge)."""
    if size <= 32 * KIB:
        return "L1"
    if MIB <= size <= l2 // 4:
        return "L2"
    return "HBM" if size >= 4 * l2 else "between"


def summarise(raw: dict[str, Any], attrs: dict[str, int]) -> Outcome:
    """Gates and results from per-footprint cycle and event samples."""
    fps: list[dict[str, Any]] = raw["footprints"]
    l2, clock_khz = attrs["l2_bytes"], attrs.get("clock_khz", 0)
    outcome = Outcome(repeats=min((len(f["cycles"]) for f in fps), default=0))
    wrong = [f"{pretty(f['bytes'])}: {f['final']} != {f['expected']}" for f in fps if f["final"] != f["expected"]]
    outcome.gate(
        "the chase ends where the CPU's walk of the same cycle ends (every footprint)",
        bool(fps) and not wrong,
        "; ".join(wrong) or f"skipped: {raw.get('skipped', [])}",
    )
    by_level: dict[str, list[tuple[int, float, float]]] = {"L1": [], "L2": [], "HBM": [], "between": []}
    for f in fps:
        name, where = label(f["bytes"]), level(f["bytes"], l2)
        cycles = statistics.median(f["cycles"])
        ns = cycles * 1e6 / clock_khz if clock_khz else 0.0
        by_level[where].append((f["bytes"], cycles, ns))
        whole = "the whole cycle" if f["nodes"] <= WARM + STEPS else f"{WARM + STEPS} of its nodes per launch"
        outcome.add(
            Result(
                f"cycles_{name}",
                round(cycles, 1),
                "cycles",
                f"clock64() cycles per dependent load, {pretty(f['bytes'])} footprint ({f['nodes']} nodes "
                f"{NODE_BYTES} B apart, chase covers {whole}; expected level: {where}); samples per launch, median",
                [round(c, 2) for c in f["cycles"]],
            ),
        )
        if clock_khz:
            outcome.add(
                Result(
                    f"ns_{name}",
                    round(ns, 2),
                    "ns",
                    f"ns per dependent load, {pretty(f['bytes'])} footprint: the median cycles at the maximum SM clock",
                )
            )
    medians: dict[str, tuple[float, float]] = {}
    for where in ("L1", "L2", "HBM"):
        points = by_level[where]
        if points:
            medians[where] = (statistics.median(p[1] for p in points), statistics.median(p[2] for p in points))
            sizes = ", ".join(pretty(p[0]) for p in points)
            key = where.lower()
            outcome.add(
                Result(f"{key}_cycles", round(medians[where][0], 1), "cycles", f"{where} latency: median of {sizes}"),
            )
            if clock_khz:
                outcome.add(
                    Result(f"{key}_ns", round(medians[where][1], 2), "ns", f"{where} latency at the SM clock: {sizes}")
                )
    if len(medians) == 3:
        c1, c2, c3 = (medians[w][0] for w in ("L1", "L2", "HBM"))
        outcome.gate("latency rises from L1 to L2 to HBM (cycles)", c1 < c2 < c3, f"{c1:.0f} < {c2:.0f} < {c3:.0f}")
        middle = (c2 + c3) / 2
        knee = next((f["bytes"] for f in fps if f["bytes"] > MIB and statistics.median(f["cycles"]) > middle), None)
        if knee is not None:
            outcome.add(
                Result(
                    "knee_footprint",
                    knee // MIB,
                    "MiB",
                    "smallest footprint above 1 MiB whose cycles per load exceed the midpoint of the L2 and HBM levels",
                )
            )
    outcome.add(Result("l2_size", round(l2 / MIB, 2), "MiB", "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE"))
    if clock_khz:
        outcome.add(Result("sm_clock", clock_khz // 1000, "MHz", "CU_DEVICE_ATTRIBUTE_CLOCK_RATE (maximum SM clock)"))
    return outcome


def cycle(nodes: int) -> Any:
    """A random order of the nodes: node order[i] links to order[i + 1], the last to the first."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    order = rng.permutation(nodes).astype(np.uint32)
    start = int(np.flatnonzero(order == 0)[0])
    return np.roll(order, -start)  # the walk starts at node 0


def measure(gpu: Any, size: int, chase: Any, link: Any) -> dict[str, Any]:
    import numpy as np

    nodes = size // NODE_BYTES
    order = cycle(nodes)
    warm = min(nodes, WARM)
    pos = 0  # where in order the next launch starts
    out: dict[str, Any] = {"bytes": size, "nodes": nodes}
    log_bytes = (2 + 2 * LOG_PAIRS) * 8
    with gpu.buffer(size) as nxt, gpu.buffer(nodes * 4) as dorder, gpu.buffer(log_bytes) as log:
        gpu.upload(dorder, order)
        gpu.launch(link, 1024, 256, [np.uint64(nxt), np.uint64(dorder), np.uint32(nodes)])
        for variant, steps in (("ms_steps", STEPS), ("ms_double", 2 * STEPS)):
            check("cuMemsetD32Async", gpu.drv.cuMemsetD32Async(log, 0, log_bytes // 4, gpu.stream))

            def once(steps: int = steps) -> None:
                nonlocal pos
                start = int(order[pos % nodes])
                gpu.launch(
                    chase, 1, 1, [np.uint64(nxt), np.uint32(start), np.uint32(warm), np.uint32(steps), np.uint64(log)]
                )
                pos += warm + steps

            timed = gpu.time(once)
            gpu.sync()
            got = gpu.download(np.empty(2 + 2 * LOG_PAIRS, dtype=np.uint64), log)
            out[variant] = timed.samples
            if variant == "ms_steps":  # the warm-up launches' cycles are dropped, as gpu.time drops their times
                from verifier.gpu import WARMUP

                pairs = got[2 : 2 + 2 * min(int(got[0]), LOG_PAIRS)].reshape(-1, 2)[WARMUP:]
                out["cycles"] = [float(c) / float(s) for c, s in pairs]
        out["final"] = int(got[1])
        out["expected"] = int(order[pos % nodes])
    return out


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    from verifier.gpu import opened

    attrs = {
        "l2_bytes": device.attribute("CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE"),
        "clock_khz": device.attribute("CU_DEVICE_ATTRIBUTE_CLOCK_RATE"),
    }
    raw: dict[str, Any] = {"footprints": [], "skipped": []}
    with opened(device) as gpu:
        chase = gpu.kernel(SOURCE, "chase")
        link = gpu.kernel(SOURCE, "link")
        carveout = gpu.drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
        check("cuFuncSetAttribute", gpu.drv.cuFuncSetAttribute(chase, carveout, 0))  # 0% shared: all L1
        for size in FOOTPRINTS:
            free, _ = check("cuMemGetInfo", gpu.drv.cuMemGetInfo())
            if size > int(free) // 2:
                raw["skipped"].append(pretty(size))
                continue
            raw["footprints"].append(measure(gpu, size, chase, link))
    return summarise(raw, attrs)
