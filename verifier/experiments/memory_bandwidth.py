"""Memory bandwidth: a device-to-device copy and a read-only kernel over sizes from inside L2 to GiB.

Each size is timed with CUDA events by gpu.time(); a sample moves at least MIN_BYTES: a small
buffer is copied by back-to-back calls (their per-call overhead counts) and read by several
passes of one launch, so launch overhead does not dominate. The
read kernel sums what it reads into one value per block, checked against the known fill, so
the compiler cannot drop the loads; the copy's destination is compared with the source's
pattern at sampled positions. Achieved GB/s (10^9 bytes/s; a copy counts read + write bytes) is
set beside the theoretical peak from the attributes: 2 × memory clock × bus width / 8.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check
from verifier.experiment import Outcome

ID = "memory-bandwidth"
PURPOSE = "Device-to-device copy and read-only kernel bandwidth over sizes, against the theoretical peak"
USES = ("gpu.py",)

MIB = 1 << 20
SIZES = (4 * MIB, 32 * MIB, 256 * MIB, 1024 * MIB, 4096 * MIB)
"""Bytes per buffer: 4 MiB sits in an H200's 50 MiB L2, 256 MiB and up are far beyond it."""
MIN_BYTES = 256 * MIB
"""Each sample copies or reads at least this many bytes of buffer (repeating small sizes)."""
BLOCK = 256
SANITY = 1.05
"""Achieved may exceed the theoretical peak by at most 5% (clock rounding), where it applies."""
BEYOND_L2 = 4
"""The sanity gate applies where the bytes touched are at least this many times the L2 size."""
ONE = 0x3F800000
"""The bit pattern of 1.0f: the read buffer is filled with it, so its sum is its element count."""
PATTERN = 2654435761
"""Word i of the copy's source is i × PATTERN mod 2^32 (Knuth's multiplicative hash)."""

SOURCE = r"""
__device__ double block_sum(double acc) {
    __shared__ double part[32];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = acc;
    __syncthreads();
    acc = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.0;
    if (threadIdx.x < 32)
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    return acc;
}

extern "C" __global__ void read_sum(const float4* __restrict__ in, unsigned long long n4, unsigned int passes,
                                    double* sums) {
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;  // per-thread sums of 1.0f stay far below 2^24, so they are exact
    for (unsigned int pass = 0; pass < passes; ++pass) {  // small buffers are read several times a launch
        for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += 4 * step) {
            #pragma unroll
            for (int u = 0; u < 4; ++u) {  // four independent loads in flight per thread
                unsigned long long k = i + u * step;
                if (k < n4) { float4 v = in[k]; acc += (v.x + v.y) + (v.z + v.w); }
            }
        }
        asm volatile("" ::: "memory");  // each pass loads again: no value is reused across passes
    }
    double total = block_sum(acc);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

extern "C" __global__ void fill_pattern(unsigned int* p, unsigned long long n) {
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        p[i] = (unsigned int)i * 2654435761u;
}
"""


def label(size: int) -> str:
    """'4mib', '1gib': the size as it appears in result names."""
    return f"{size >> 30}gib" if size >= 1 << 30 and size % (1 << 30) == 0 else f"{size >> 20}mib"


def pretty(size: int) -> str:
    return label(size).replace("gib", " GiB").replace("mib", " MiB")


def theoretical_gbs(attrs: dict[str, int]) -> float | None:
    """2 (double data rate) × memory clock (kHz × 1000) × bus width (bits) / 8, in GB/s."""
    khz, bits = attrs.get("memory_clock_khz", 0), attrs.get("bus_width_bits", 0)
    return 2 * khz * 1000 * bits / 8 / 1e9 if khz > 0 and bits > 0 else None


def expected_pattern(index: Any) -> Any:
    """Words of the copy's source at the given indices (numpy), as fill_pattern writes them."""
    import numpy as np

    return (np.asarray(index, dtype=np.uint64) * PATTERN % (1 << 32)).astype(np.uint32)


def summarise(raw: dict[str, Any], attrs: dict[str, int]) -> Outcome:
    """Gates and results from the measured samples (ms per sample, bytes per sample) per size."""
    sizes: list[dict[str, Any]] = raw["sizes"]
    counts = [len(s[k]["ms"]) for s in sizes for k in ("copy", "read")]
    outcome = Outcome(repeats=min(counts) if counts else 0)
    peak = theoretical_gbs(attrs)
    l2 = attrs.get("l2_bytes", 0)
    outcome.gate("at least one size fitted in free memory", bool(sizes), f"skipped: {raw.get('skipped', [])}")
    wrong_sum = [f"{pretty(s['bytes'])}: {s['read']['sum']} != {s['read']['expected']}" for s in sizes]
    wrong_sum = [w for w, s in zip(wrong_sum, sizes, strict=True) if s["read"]["sum"] != s["read"]["expected"]]
    outcome.gate("the read kernel's block sums add up to elements × passes", not wrong_sum, "; ".join(wrong_sum))
    bad_copy = [f"{pretty(s['bytes'])}: {s['copy']['mismatches']} of {s['copy']['checked']}" for s in sizes]
    bad_copy = [b for b, s in zip(bad_copy, sizes, strict=True) if s["copy"]["mismatches"] or not s["copy"]["checked"]]
    outcome.gate("the copy's destination equals the source at sampled positions", not bad_copy, "; ".join(bad_copy))
    over: list[str] = []
    achieved: dict[tuple[int, str], float] = {}
    for s in sizes:
        for kind, traffic in (("copy", 2), ("read", 1)):
            gbs = [s[kind]["bytes_per_sample"] / (ms / 1000) / 1e9 for ms in s[kind]["ms"]]
            value = achieved[s["bytes"], kind] = statistics.median(gbs)
            what = "cuMemcpyDtoDAsync, read + write bytes" if kind == "copy" else "read-only float4 kernel, bytes read"
            runs = (
                f"{s[kind]['reps']} back-to-back copies"
                if kind == "copy"
                else f"one launch of {s[kind]['reps']} passes"
            )
            outcome.add(
                Result(
                    f"{kind}_{label(s['bytes'])}",
                    round(value, 1),
                    "GB/s",
                    f"{what}, {pretty(s['bytes'])} buffer ({traffic * s['bytes'] >> 20} MiB touched, "
                    f"{'within' if traffic * s['bytes'] <= l2 else 'beyond'} the {l2 >> 20} MiB L2); samples in GB/s, "
                    "one per CUDA-event sample "
                    f"of {runs}, median (stopped on {s[kind]['stopped']})",
                    [round(g, 2) for g in gbs],
                )
            )
            if peak and l2 and traffic * s["bytes"] >= BEYOND_L2 * l2 and value > SANITY * peak:
                over.append(f"{kind} {pretty(s['bytes'])}: {value:.0f} GB/s")
    if peak is not None:
        outcome.add(
            Result(
                "theoretical_gbs",
                round(peak, 1),
                "GB/s",
                "2 × memory clock (kHz attribute × 1000) × bus width (bits attribute) / 8, in 10^9 bytes/s",
            )
        )
        outcome.gate(
            f"achieved is at most {SANITY} × theoretical where the bytes touched exceed {BEYOND_L2} × L2",
            not over,
            "; ".join(over) or f"theoretical {peak:.0f} GB/s",
        )
        if sizes:
            largest = sizes[-1]
            for kind in ("copy", "read"):
                outcome.add(
                    Result(
                        f"{kind}_efficiency",
                        round(100 * achieved[largest["bytes"], kind] / peak, 1),
                        "%",
                        f"{kind} at the largest size ({pretty(largest['bytes'])}) over the theoretical peak",
                    )
                )
    return outcome


def attributes(device: Device) -> dict[str, int]:
    names = {
        "memory_clock_khz": "CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE",
        "bus_width_bits": "CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH",
        "l2_bytes": "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE",
        "sm_count": "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
    }
    return {key: device.attribute(name) for key, name in names.items()}


def measure(gpu: Any, size: int, read_fn: Any, fill_fn: Any, grid: int) -> dict[str, Any]:
    """Copy and read one size; the copy's destination sampled, the read's sums downloaded."""
    import numpy as np

    drv, words = gpu.drv, size // 4
    reps = max(1, MIN_BYTES // size)
    out: dict[str, Any] = {"bytes": size}
    with gpu.buffer(size) as src, gpu.buffer(size) as dst, gpu.buffer(grid * 8) as sums:
        gpu.launch(fill_fn, grid, BLOCK, [np.uint64(src), np.uint64(words)])
        check("cuMemsetD32Async", drv.cuMemsetD32Async(dst, 0, words, gpu.stream))

        def copy() -> None:
            for _ in range(reps):
                check("cuMemcpyDtoDAsync", drv.cuMemcpyDtoDAsync(dst, src, size, gpu.stream))

        timed = gpu.time(copy)
        gpu.sync()
        starts = np.linspace(0, words - 1024, 8, dtype=np.int64)
        mismatches = 0
        for start in starts:
            got = gpu.download(np.empty(1024, dtype=np.uint32), dst + int(start) * 4)
            mismatches += int(np.count_nonzero(got != expected_pattern(np.arange(start, start + 1024))))
        out["copy"] = {"ms": timed.samples, "stopped": timed.stopped, "reps": reps, "bytes_per_sample": 2 * size * reps}
        out["copy"] |= {"mismatches": mismatches, "checked": 1024 * len(starts)}

        check("cuMemsetD32Async", drv.cuMemsetD32Async(src, ONE, words, gpu.stream))
        args = [np.uint64(src), np.uint64(size // 16), np.uint32(reps), np.uint64(sums)]

        def read() -> None:
            gpu.launch(read_fn, grid, BLOCK, args)

        timed = gpu.time(read)
        gpu.sync()
        total = float(gpu.download(np.empty(grid, dtype=np.float64), sums).sum())
        out["read"] = {"ms": timed.samples, "stopped": timed.stopped, "reps": reps, "bytes_per_sample": size * reps}
        out["read"] |= {"sum": total, "expected": float(words * reps)}
    return out


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    from verifier.gpu import opened

    attrs = attributes(device)
    raw: dict[str, Any] = {"sizes": [], "skipped": []}
    with opened(device) as gpu:
        read_fn = gpu.kernel(SOURCE, "read_sum")
        fill_fn = gpu.kernel(SOURCE, "fill_pattern")
        per_sm = check(
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            gpu.drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(read_fn, BLOCK, 0),
        )
        grid = max(1, int(per_sm)) * attrs["sm_count"]
        for size in SIZES:
            free, _ = check("cuMemGetInfo", gpu.drv.cuMemGetInfo())
            if 2 * size > int(free) // 2:  # source and destination together
                raw["skipped"].append(pretty(size))
                continue
            raw["sizes"].append(measure(gpu, size, read_fn, fill_fn, grid))
    return summarise(raw, attrs)
