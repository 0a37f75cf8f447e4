"""Global to shared memory three ways on Hopper: ordinary loads and stores, cp.async, and the
Tensor Memory Accelerator (TMA), each moving a 1 GiB array tile by tile into shared memory and
summing it; a direct read into registers is the ceiling they are set against.

The kernels (verifier/kernels/tiles.py) walk the same 16 KiB tiles (32 rows × 512 bytes) of a
row-major array of 32-bit words, 17 times the L2 of an H200 (so HBM serves every tile), with the
same grid of 2 blocks of 256 threads per SM and 4 tiles of shared memory per block. The plain
kernel stages 4 tiles through each thread's registers (ld.global, then st.shared); cp.async
copies 16 bytes per instruction from global to shared memory without registers, 3 tiles in
flight; the TMA kernel has one thread issue one cp.async.bulk.tensor.2d per tile (its tensor
map made on the host by cuTensorMapEncodeTiled: verifier/launch_ex.py), 4 tiles in flight,
each completing on an mbarrier. Every kernel sums what landed (each thread reading words another
warp copied), so a copy that did not happen shows: the gate compares each kernel's 64-bit total
with the CPU's sum of the same words. The registers each kernel needs per thread
(cuFuncGetAttribute NUM_REGS) are part of the answer: the plain copy holds its data in
registers on the way, cp.async and TMA do not, and TMA needs no per-thread addresses either.

What ran: each kernel's cubin is disassembled with cuobjdump where the node has it
(verifier/sass.py), and the file keeps how many of the instructions its copy shows as it holds
(OPCODE: STS, LDGSTS, UTMALDG, LDG) and the lines around the first.

Timing: each kernel queued behind the wait kernel (gpu.py: no host time in a sample), samples
of HBM_SAMPLE_MS or more (the H200's reads were seen to dip for tens of ms: memory-bandwidth),
the kernels timing themselves with the probe and reading their SM clock. GB/s are 10^9 bytes
read from HBM per second; each method is also put as a share of the direct read's rate.

Predicted on an H200 (memory-bandwidth read a 4 GiB buffer at 4636 GB/s, 96% of the 4814 GB/s
the memory clock and bus width give): the direct read about 4.5 TB/s; TMA and cp.async within a
few percent of it (with 4 and 3 tiles in flight per block, 8 and 6 per SM, ~100 KiB per SM,
far beyond what hides HBM's latency); the plain copy lower, about 80-90% (its loads for the next
tiles wait until the current ones are stored and summed: only the other block of the SM keeps
HBM busy meanwhile). Registers per thread, as NVRTC 13.0 compiled them for sm_90 on a machine
without a GPU: plain 90, direct 83 (4 tiles × 4 16-byte values held in registers), cp.async 40,
TMA 31 (the sum, the loop, the probe: no data and no addresses per thread).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import CudaError, Device, check, compile_source
from verifier.experiment import Outcome, clock_result, failure, timed_result
from verifier.kernels import tiles
from verifier.sass import disassemble, results

ID = "async-copy"
PURPOSE = (
    "Global to shared memory by plain loads, cp.async and the Tensor Memory Accelerator: GB/s from HBM "
    "against a direct read, and registers per thread"
)
USES = ("gpu.py", "timing.py", "launch_ex.py", "sass.py", "kernels/tiles.py")

METHODS = ("plain", "cp_async", "tma", "direct")
WHAT = {
    "plain": "ordinary loads into registers (ld.global), then stores to shared memory (st.shared), "
    f"{tiles.STAGES} tiles at a time",
    "cp_async": f"cp.async.cg 16-byte copies, one commit group per tile, {tiles.STAGES - 1} tiles in flight",
    "tma": "one cp.async.bulk.tensor.2d per tile (Tensor Memory Accelerator, tensor map from "
    f"cuTensorMapEncodeTiled), completion on an mbarrier, {tiles.STAGES} tiles in flight",
    "direct": f"the reference: the same tiles read straight into registers, {tiles.STAGES} tiles of loads in flight",
}
OPCODE = {"plain": "STS", "cp_async": "LDGSTS", "tma": "UTMALDG", "direct": "LDG"}
"""The SASS instruction each kernel's copy shows as (the store to shared memory of the plain copy;
cp.async's load-global-store-shared; the TMA's tensor load), whose lines around the first the file keeps."""
ROWS, COLS = 65536, 4096
"""The array: 65536 rows of 4096 words, 1 GiB."""
WORDS = ROWS * COLS
TILES = (ROWS // tiles.TILE_ROWS) * (COLS // tiles.TILE_COLS)
BLOCKS_PER_SM = 2
HBM_SAMPLE_MS = 20.0
SANITY = 1.05
"""No rate from HBM may exceed the theoretical peak by more than clock rounding."""
MULT = 2654435761


def expected_total(words: int = WORDS, chunk: int = 1 << 24) -> int:
    """The sum of the array as tiles_fill writes it (word i: the top byte of i × MULT mod 2^32)."""
    import numpy as np

    total = 0
    for start in range(0, words, chunk):
        i = np.arange(start, min(words, start + chunk), dtype=np.uint64)
        total += int((((i * np.uint64(MULT)) & np.uint64(0xFFFFFFFF)) >> np.uint64(24)).sum())
    return total


def theoretical_gbs(attrs: dict[str, int]) -> float | None:
    khz, bits = attrs.get("memory_clock_khz", 0), attrs.get("bus_width_bits", 0)
    return 2 * khz * 1000 * bits / 8 / 1e9 if khz > 0 and bits > 0 else None


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier import launch_ex
    from verifier.gpu import opened

    attrs = device.attributes(sm_count="CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT") | device.memory_facts()
    grid = attrs["sm_count"] * BLOCKS_PER_SM
    raw: dict[str, Any] = {"expected": expected_total(), "grid": grid}
    with opened(device) as gpu, gpu.buffer(WORDS * 4) as array, gpu.buffer(8) as total, gpu.probe() as probe:
        fill = gpu.kernel(tiles.SOURCE, "tiles_fill")
        gpu.launch(fill, attrs["sm_count"] * 8, 256, [np.uint64(array), np.uint64(WORDS)])
        for method in METHODS:
            try:
                fn = gpu.kernel(tiles.SOURCE, f"tiles_{method}")
                shared = 0 if method == "direct" else tiles.SHARED_BYTES
                if shared:
                    launch_ex.allow_shared(gpu, fn, shared)
                first: Any = np.uint64(array)
                made = ""
                if method == "tma":
                    first, made = launch_ex.tensor_map_2d(
                        gpu, array, ROWS, COLS, COLS * 4, tiles.TILE_ROWS, tiles.TILE_COLS
                    )
                resident = check(
                    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                    gpu.drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, tiles.BLOCK, shared),
                )

                def work(fn: Any = fn, first: Any = first, shared: int = shared, at: int = probe) -> None:
                    args = [first, np.int32(COLS), np.int32(TILES), np.uint64(total), np.uint64(at)]
                    launch_ex.launch(gpu, fn, grid, tiles.BLOCK, args, shared)

                check("cuMemsetD32Async", gpu.drv.cuMemsetD32Async(total, 0, 2, gpu.stream))
                work(at=0)
                gpu.sync()
                got = int(gpu.download(np.zeros(1, dtype=np.uint64), total)[0])
                timed = gpu.time(work, probe=probe, min_ms=HBM_SAMPLE_MS)
                raw[method] = timed.raw() | {
                    "total": got,
                    "registers": launch_ex.registers(gpu, fn),
                    "resident": int(resident),
                    "tensor_map": made,
                    # what ran: the same source, name and target through the same NVRTC, disassembled
                    "sass": disassemble(
                        compile_source(tiles.SOURCE, f"tiles_{method}.cu", gpu.arch).image, f"tiles_{method}"
                    ),
                }
            except CudaError as exc:  # one path failing (say, the tensor map) leaves the others measured
                raw[method] = {"error": failure(exc.as_result())}
    return summarise(raw, attrs)


def summarise(raw: dict[str, Any], attrs: dict[str, int]) -> Outcome:
    """Gates and results from what run() measured (pure: the CPU test feeds it fixture data)."""
    measured = [m for m in METHODS if "ms" in raw.get(m, {})]
    outcome = Outcome(repeats=min((len(raw[m]["ms"]) for m in measured), default=0))
    for method in METHODS:
        if "error" in raw.get(method, {}):
            outcome.gate(f"the {method} kernel compiled, loaded and ran", False, str(raw[method]["error"]))
    wrong = [f"{m}: {raw[m]['total']} != {raw['expected']}" for m in measured if raw[m]["total"] != raw["expected"]]
    if not outcome.gate(
        "each kernel's sum of what it copied into shared memory (or read) equals the CPU's sum of the array",
        bool(measured) and not wrong,
        "; ".join(wrong) or f"{len(measured)} kernels, each {raw['expected']}",
    ):
        return outcome
    short = [f"{m}: {raw[m]['resident']}" for m in measured if raw[m]["resident"] < BLOCKS_PER_SM]
    outcome.gate(
        f"every kernel fits {BLOCKS_PER_SM} blocks on each SM (the grid runs in one wave)",
        not short,
        "; ".join(short) or f"grid of {raw['grid']} blocks",
    )
    peak = theoretical_gbs(attrs)
    gbs = {m: [WORDS * 4 / (ms * 1e-3) / 1e9 for ms in raw[m]["ms"]] for m in measured}
    median = {m: statistics.median(v) for m, v in gbs.items()}
    tile = f"{tiles.TILE_ROWS}×{tiles.TILE_COLS}-word tiles ({tiles.TILE_BYTES // 1024} KiB)"
    for method in measured:
        data = raw[method]
        outcome.no_host_time(f"the {method} kernel", data)
        made = f"; tensor map by {data['tensor_map']}" if data.get("tensor_map") else ""
        description = (
            f"{WHAT[method]}: a {WORDS * 4 >> 30} GiB array in {tile}, {raw['grid']} blocks of {tiles.BLOCK} "
            f"threads, bytes read from HBM per second, queued behind a wait kernel (median; stopped on "
            f"{data['stopped']}){made}"
        )
        outcome.add(
            timed_result(f"{method}_gbs", gbs[method], "GB/s", description, data, 1, 2),
            Result(
                f"{method}_registers",
                data["registers"],
                "registers/thread",
                f"registers per thread of the {method} kernel (cuFuncGetAttribute NUM_REGS)",
            ),
            *clock_result(method, data, f"the {method} kernel's samples"),
        )
        if "sass" in data:
            outcome.add(*results(method, f"tiles_{method}", OPCODE[method], data["sass"]))
        if method != "direct" and "direct" in median:
            outcome.add(
                Result(
                    f"{method}_over_direct",
                    round(median[method] / median["direct"], 3),
                    "×",
                    f"the {method} kernel's rate over the direct read's (the same tiles into registers); "
                    "above 1 where staging in shared memory kept more bytes in flight",
                )
            )
    outcome.add(
        Result("array_bytes", WORDS * 4, "bytes", f"the array each kernel reads ({ROWS} rows × {COLS} words)"),
        Result("tile_bytes", tiles.TILE_BYTES, "bytes", f"one tile: {tiles.TILE_ROWS} rows × {tiles.TILE_COLS} words"),
    )
    if attrs.get("l2_bytes"):
        outcome.add(
            Result("array_over_l2", round(WORDS * 4 / attrs["l2_bytes"], 1), "×", "the array's size over the L2's")
        )
    if peak is not None:
        outcome.add(Result("theoretical_gbs", round(peak, 1), "GB/s", "2 × memory clock × bus width / 8 (attributes)"))
        over = [f"{m}: {max(v):.0f}" for m, v in gbs.items() if max(v) > SANITY * peak]
        outcome.gate(
            f"no rate is above {SANITY} × the theoretical HBM bandwidth",
            not over,
            "; ".join(over) or f"theoretical {peak:.0f} GB/s",
        )
    return outcome
