"""Memory coalescing: read bandwidth against access stride, every stride reading the same bytes.

A 256 MiB float32 buffer is read in full at each stride s: pass p of s reads elements
i × s + r(p) for all i, so a warp's 32 threads touch addresses s × 4 bytes apart, and over s
passes every element is read exactly once. Useful bytes (those summed) are thus the whole
buffer at every stride, and the checksum is the same. The passes are ordered (r below) so
that two passes touching the same 32-byte sector are a full buffer (256 MiB, five times an
H200's L2) apart in time: a sector fetched for one pass has left L2 before another pass needs
it, and what is measured is the cost of sectors fetched for few useful bytes.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check
from verifier.experiment import Outcome

ID = "coalescing"
PURPOSE = "Read bandwidth against access stride 1 to 128 floats, the same useful bytes at every stride"
USES = ("gpu.py",)

LOG2_N = 26
"""2^26 float32 elements: a 256 MiB buffer."""
STRIDES = (1, 2, 4, 8, 16, 32, 64, 128)
BLOCK = 256
SECTOR_FLOATS = 8
"""A 32-byte sector holds 8 floats."""

SOURCE = r"""
extern "C" __global__ void strided_sum(const float* __restrict__ in, unsigned int log2n, unsigned int log2s,
                                       unsigned int log2m, double* sums) {
    // Item k (of n) is pass p = k >> (log2n - log2s), position i within the pass; it reads
    // element i * s + r(p), with r(p) = (p mod m) * (s / m) + p / m: s / m = min(s, 8) floats
    // share a sector and passes sharing a sector are m passes (one full buffer) apart.
    const unsigned int n = 1u << log2n, shift = log2n - log2s, s = 1u << log2s, m = 1u << log2m;
    const unsigned int step = gridDim.x * blockDim.x;
    float acc = 0.0f;  // a thread sums at most a few thousand values below 1024: exact in float
    for (unsigned int k0 = blockIdx.x * blockDim.x + threadIdx.x; k0 < n; k0 += 8 * step) {
        #pragma unroll
        for (int u = 0; u < 8; ++u) {  // eight independent loads in flight per thread
            unsigned int k = k0 + u * step;
            if (k < n) {
                unsigned int p = k >> shift, i = k & ((1u << shift) - 1);
                unsigned int r = (p & (m - 1)) * (s >> log2m) + (p >> log2m);
                acc += in[i * s + r];
            }
        }
    }
    __shared__ double part[32];
    double total = acc;
    for (int o = 16; o > 0; o >>= 1) total += __shfl_down_sync(0xffffffffu, total, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = total;
    __syncthreads();
    total = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.0;
    if (threadIdx.x < 32)
        for (int o = 16; o > 0; o >>= 1) total += __shfl_down_sync(0xffffffffu, total, o);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}
"""


def pass_order(stride: int) -> list[int]:
    """r(p) for each pass p, as the kernel computes it (log2 of m = stride / min(stride, 8))."""
    m = stride // min(stride, SECTOR_FLOATS)
    return [(p % m) * (stride // m) + p // m for p in range(stride)]


def log2(value: int) -> int:
    assert value > 0 and value & (value - 1) == 0, f"{value} is not a power of two"
    return value.bit_length() - 1


def fill(n: int) -> Any:
    """The buffer's values: 10 bits of a multiplicative hash of the index, as float32 (exact)."""
    import numpy as np

    index = np.arange(n, dtype=np.uint32)
    return ((index * np.uint32(2654435761)) >> np.uint32(22)).astype(np.float32)


def summarise(raw: dict[str, Any]) -> Outcome:
    """Gates and results from ms samples per stride; raw['bytes'] useful bytes per sample."""
    strides: dict[str, dict[str, Any]] = raw["strides"]
    outcome = Outcome(repeats=min((len(s["ms"]) for s in strides.values()), default=0))
    wrong = [f"stride {k}: {s['sum']} != {raw['expected']}" for k, s in strides.items() if s["sum"] != raw["expected"]]
    outcome.gate(
        "every stride's checksum equals the buffer's sum (each element read exactly once)",
        bool(strides) and not wrong,
        "; ".join(wrong),
    )
    medians: dict[str, float] = {}
    for key, s in strides.items():
        gbs = [raw["bytes"] / (ms / 1000) / 1e9 for ms in s["ms"]]
        medians[key] = statistics.median(gbs)
        outcome.add(
            Result(
                f"stride_{key}",
                round(medians[key], 1),
                "GB/s",
                f"effective read bandwidth at stride {key} float32 ({int(key) * 4} bytes between a warp's threads): "
                f"useful bytes ({raw['bytes'] >> 20} MiB) / CUDA-event time; samples in GB/s, median "
                f"(stopped on {s['stopped']})",
                [round(g, 2) for g in gbs],
            )
        )
    base = medians.get("1")
    if base:
        for key, value in medians.items():
            if key != "1":
                outcome.add(
                    Result(
                        f"ratio_stride_{key}",
                        round(value / base, 3),
                        "×",
                        f"effective bandwidth at stride {key} over stride 1",
                    )
                )
    return outcome


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    n = 1 << LOG2_N
    host = fill(n)
    expected = float(host.sum(dtype=np.float64))
    raw: dict[str, Any] = {"bytes": n * 4, "expected": expected, "strides": {}}
    with opened(device) as gpu:
        fn = gpu.kernel(SOURCE, "strided_sum")
        per_sm = check(
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            gpu.drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, BLOCK, 0),
        )
        grid = max(1, int(per_sm)) * device.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
        with gpu.buffer(n * 4) as buf, gpu.buffer(grid * 8) as sums:
            gpu.upload(buf, host)
            for stride in STRIDES:
                log2m = log2(stride // min(stride, SECTOR_FLOATS))
                args = [np.uint64(buf), np.uint32(LOG2_N), np.uint32(log2(stride)), np.uint32(log2m), np.uint64(sums)]
                check("cuMemsetD32Async", gpu.drv.cuMemsetD32Async(sums, 0, grid * 2, gpu.stream))

                def work(args: list[Any] = args) -> None:
                    gpu.launch(fn, grid, BLOCK, args)

                timed = gpu.time(work)
                gpu.sync()
                total = float(gpu.download(np.empty(grid, dtype=np.float64), sums).sum())
                raw["strides"][str(stride)] = {"ms": timed.samples, "stopped": timed.stopped, "sum": total}
    return summarise(raw)
