"""Shared-memory load bandwidth per SM and in all, at 4-, 8- and 16-byte loads, and the L1 hit
bandwidth of global loads beside it.

Every SM is full of warps: 2 blocks of 1024 threads per SM (64 warps, the most an SM holds). Each
block copies a 16 KiB pattern into its shared memory, then each thread reads UNROLL values per
loop turn, lane l at element base + l + 32·u: a warp's 32 lanes read consecutive elements, so no
two lanes of a 128-byte wavefront share a bank (conflict-free at every width). The base moves
each turn, and an empty asm with a memory clobber ends each turn, so no load is hoisted or
reused; every value read is added into the thread's sum, so none is dropped. Every thread's
sum is checked against the CPU's (it depends only on the lane). The L1 kernel does the same with
plain global loads (ld.global, LDG, cached in L1 by default, as memory-latency's chase loads are)
of one 16 KiB buffer all blocks share: after the first touch every load hits L1. 16 KiB is under
the smallest L1 a Hopper SM keeps beside its largest shared-memory carveout (256 - 228 KiB) and
inside the footprints memory-latency's chase found served at L1 latency (its level 1).

Every launch is timed queued behind the wait kernel (gpu.py: no host time in a sample) with the
probe, which checks each sample against the kernel's own span and reads the SM clock it ran at:
bytes per clock per SM = bytes ÷ time ÷ (SMs × that clock), the launch's start and its 16 KiB fill
included (about 0.2% of it).

Prediction, datasheet-derived: shared memory has 32 banks of 4 bytes, each delivering one word a
clock (CUDA C++ Programming Guide), so at most 128 B per clock per SM: on an H200 SXM, 132 × 128 B
× 1.98 GHz = 33.5 TB/s at the maximum clock. 4-byte loads need one warp instruction a clock per SM
(1 of 4 issue slots, the adds and loop beside it), so all three widths should reach 120-128 B per
clock per SM (≈ 31-33 TB/s); the L1 hit path, with its tag checks, 100-128 (memory-bandwidth's
read_l1, with bounds checks and float adds between its loads, reached 103).

Seen compiling for sm_90 without a GPU (NVRTC 13.0, cuobjdump 13): the loop bodies hold 32 LDS and
32 LDS.64 (the 4- and 8-byte loops unrolled twice more), 16 LDS.128 and 16 LDG.E.128, with one
IADD3 per two words loaded; at most 32 registers (2 blocks of 1024 fit an SM), no spills.
"""

from __future__ import annotations

import statistics
from functools import partial
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check, compile_source
from verifier.experiment import Outcome, clock_result, median_result, timed_result
from verifier.gpu import PROBE_SOURCE
from verifier.sass import disassemble
from verifier.sass_loop import loop_results

ID = "shared-memory-bandwidth"
PURPOSE = "Shared-memory load bandwidth per SM clock at 4, 8 and 16 bytes per load, and L1 hit bandwidth beside it"
USES = ("gpu.py", "timing.py", "sass.py", "sass_loop.py")

BLOCK, BLOCKS_PER_SM = 1024, 2
BYTES = 16 * 1024
"""The pattern each block reads (shared memory per block; the L1 kernel's global buffer)."""
UNROLL = 16
BYTES_PER_THREAD = 256 * 1024
"""Per thread per launch, at every width: about 2 ms of loads at 128 B per clock per SM."""
WIDTHS = (4, 8, 16)
TYPES = {4: ("unsigned", "v"), 8: ("uint2", "v.x + v.y"), 16: ("uint4", "v.x + v.y + v.z + v.w")}
PEAK = 128
"""Bytes per clock per SM: 32 banks × 4 bytes (CUDA C++ Programming Guide; a datasheet figure)."""
SLACK = 1.01
"""A rate per clock may exceed the peak by at most 1%: the clock is an average over blocks."""
SAMPLE_MS = 10.0
POISON = 0xDEADBEEF
PATTERN = 2654435761
"""Word i of the pattern is (i × PATTERN + 12345) mod 2^32."""


def iters(width: int) -> int:
    return BYTES_PER_THREAD // (UNROLL * width)


def _kernel(name: str, width: int, space: str) -> str:
    kind, fold = TYPES[width]
    n = BYTES // width
    fill = (
        f"    __shared__ {kind} buf[{n}];\n"
        f"    for (int i = threadIdx.x; i < {n}; i += blockDim.x) buf[i] = in[i];\n"
        "    __syncthreads();\n"
        if space == "shared"
        else f"    const {kind}* buf = in;\n"
    )
    return (
        f'extern "C" __global__ void __launch_bounds__({BLOCK}, {BLOCKS_PER_SM}) '
        f"{name}(const {kind}* in, unsigned* out, int iters, unsigned long long* probe) {{\n"
        "    ProbeMark mark = probe_begin(probe);\n" + fill + "    const unsigned lane = threadIdx.x & 31;\n"
        "    unsigned acc = 0u;\n"
        "    for (int i = 0; i < iters; ++i) {\n"
        f"        const {kind}* p = buf + (((unsigned)i * {32 * UNROLL}u) & {n - 1}u) + lane;\n"
        "        #pragma unroll\n"
        f"        for (int u = 0; u < {UNROLL}; ++u) {{ {kind} v = p[u * 32]; acc += {fold}; }}\n"
        '        asm volatile("" ::: "memory");  // the next turn loads again: nothing is kept across it\n'
        "    }\n"
        "    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;\n"
        "    probe_end(probe, mark);\n"
        "}\n"
    )


KERNELS = {f"smem_{w}b": ("shared", w, f"smem_read_{w}") for w in WIDTHS} | {"l1_16b": ("global", 16, "l1_read_16")}
"""Result prefix: (where the pattern is read from, bytes per load, kernel)."""
SOURCE = PROBE_SOURCE + "".join(_kernel(kernel, w, space) for space, w, kernel in KERNELS.values())


def pattern() -> Any:
    import numpy as np

    return ((np.arange(BYTES // 4, dtype=np.uint64) * PATTERN + 12345) & 0xFFFFFFFF).astype(np.uint32)


def expected(width: int, turns: int) -> list[int]:
    """The sum a thread of lane l (index l) ends with: every element it read, its words added."""
    import numpy as np

    words = pattern().astype(np.uint64).reshape(-1, width // 4)
    elements = words.sum(axis=1)
    n = len(elements)
    bases, counts = np.unique((np.arange(turns, dtype=np.uint64) * (32 * UNROLL)) % n, return_counts=True)
    out = []
    for lane in range(32):
        total = sum(
            int(c) * int(elements[int(b) + lane + 32 * np.arange(UNROLL)].sum())
            for b, c in zip(bases, counts, strict=True)
        )
        out.append(total % 2**32)
    return out


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    attrs = device.attributes(
        sm_count="CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT", clock_khz="CU_DEVICE_ATTRIBUTE_CLOCK_RATE"
    )
    sms = attrs["sm_count"]
    grid = sms * BLOCKS_PER_SM
    threads = grid * BLOCK
    raw: dict[str, Any] = {"threads": threads}
    with opened(device) as gpu, gpu.buffer(BYTES) as src, gpu.buffer(threads * 4) as out, gpu.probe() as probe:
        gpu.upload(src, pattern())
        image = compile_source(SOURCE, "shared_memory_bandwidth.cu", gpu.arch).image
        module, _ = device.load(image)
        for key, (_, width, kernel) in KERNELS.items():
            fn = device.function(module, kernel)
            args = (np.uint64(src), np.uint64(out), np.int32(iters(width)))
            check("cuMemsetD32", gpu.drv.cuMemsetD32(out, POISON, threads))  # every thread must write
            gpu.launch(fn, grid, BLOCK, (*args, np.uint64(0)))
            gpu.sync()
            got = gpu.download(np.zeros(threads, dtype=np.uint32), out)
            want = np.array(expected(width, iters(width)), dtype=np.uint32)
            timed = gpu.time(
                partial(gpu.launch, fn, grid, BLOCK, (*args, np.uint64(probe))), probe=probe, min_ms=SAMPLE_MS
            )
            raw[key] = timed.raw() | {
                "wrong": int(np.count_nonzero(got.reshape(-1, 32) != want)),
                "sass": disassemble(image, kernel),
            }
    return summarise(raw, attrs)


def summarise(raw: dict[str, Any], attrs: dict[str, Any]) -> Outcome:
    """Gates and results from the raw numbers run() collected (pure: the CPU test feeds it fixtures)."""
    sms, threads = attrs["sm_count"], raw["threads"]
    outcome = Outcome(repeats=min(len(raw[key]["ms"]) for key in KERNELS))
    wrong = {key: raw[key]["wrong"] for key in KERNELS if raw[key]["wrong"]}
    outcome.gate(
        "every thread's sum of what it read equals the CPU's (shared memory at 4, 8 and 16 bytes, and L1)",
        not wrong,
        f"{threads} threads each launch" if not wrong else f"threads wrong: {wrong}",
    )
    if wrong:
        return outcome
    outcome.add(
        Result(
            "warps_per_sm",
            BLOCKS_PER_SM * BLOCK // 32,
            "warps/SM",
            f"resident warps per SM ({BLOCKS_PER_SM} blocks of {BLOCK})",
        ),
        Result(
            "pattern_bytes",
            BYTES // 1024,
            "KiB",
            "bytes each block's loads cycle through (shared memory per block; the L1 kernel's buffer)",
        ),
        Result("peak_bytes_per_clock_per_sm", PEAK, "B/clock/SM", "32 banks × 4 bytes a clock (a datasheet figure)"),
    )
    if attrs["clock_khz"]:
        at_max = sms * PEAK * attrs["clock_khz"] * 1e3 / 1e12
        what = f"{sms} SMs × {PEAK} B × the maximum SM clock (device attribute): the datasheet-derived ceiling"
        outcome.add(Result("peak_tbps_at_max_clock", round(at_max, 2), "TB/s", what))
    for key, (space, width, kernel) in KERNELS.items():
        data = raw[key]
        where = "shared memory" if space == "shared" else "a 16 KiB global buffer (L1 hits)"
        outcome.no_host_time(f"the {width}-byte reads of {where}", data)
        total = threads * BYTES_PER_THREAD
        tbps = [total / (ms * 1e-3) / 1e12 for ms in data["ms"]]
        description = (
            f"{width}-byte loads from {where} by {threads} threads, {BYTES_PER_THREAD // 1024} KiB each, GPU "
            f"time queued behind a wait kernel (median; {data.get('reps', 1)} launches a sample, stopped on "
            f"{data['stopped']})"
        )
        outcome.add(
            timed_result(f"{key}_tbps", tbps, "TB/s", description, data, 2, 3),
            *clock_result(key, data, f"the {width}-byte reads of {where}"),
        )
        clocks = [float(c) for c in data.get("clock_mhz") or []]
        if len(clocks) != len(data["ms"]) or not sms:
            outcome.gate(f"the {key} rate per clock is at most {PEAK} B per clock per SM", False, "no in-kernel clock")
            continue
        per = [t * 1e12 / (mhz * 1e6) / sms for t, mhz in zip(tbps, clocks, strict=True)]
        median = statistics.median(per)
        description = (
            f"{width}-byte loads from {where}: each sample's bytes per second ÷ ({sms} SMs × the SM clock it "
            "ran at, read inside the kernel) (median)"
        )
        outcome.add(
            median_result(f"{key}_bytes_per_clock_per_sm", per, "B/clock/SM", description, 1, 2),
            Result(f"{key}_fraction_of_peak", round(100 * median / PEAK, 1), "%", f"median per clock ÷ {PEAK}"),
            *loop_results(key, kernel, ("LDS", "LDS.64", "LDS.128", "LDG.E", "LDG.E.64", "LDG.E.128"), data["sass"],
                          f"{UNROLL} loads a turn in the source"),
        )  # fmt: skip
        outcome.gate(
            f"the {key} rate per clock is at most {PEAK} B per clock per SM (within 1%: the clock is an average)",
            max(per) <= PEAK * SLACK,
            f"best {max(per):.1f}, median {median:.1f} B/clock/SM at {statistics.median(clocks):.0f} MHz",
        )
    return outcome
