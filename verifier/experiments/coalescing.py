"""Memory coalescing: read bandwidth against access stride, 4-byte and 16-byte loads, the same bytes at every stride.

A 1 GiB buffer (17 times an H200's 60 MiB L2) is read in full at each stride s, as float (4 bytes
a lane) and as float4 (16 bytes a lane): pass p of s reads elements i × s + r(p), so a warp's 32
lanes are s × w bytes apart, and over s passes every element is read exactly once. The useful
bytes are the whole buffer at every stride, and so is the checksum. Each thread keeps eight loads
in flight; each sample is queued behind the wait kernel and repeats the read to last ≥ 1 ms
(gpu.py: no host time in a sample), and the kernel's own span and SM clock come with it.

Why the rate falls: a warp's request touches min(32, s·w) 32-byte sectors for its 32·w useful
bytes, and DRAM is read two sectors (64 bytes) per miss, so DRAM moves min(s, 64 / w) bytes per
useful byte (sectors_per_request, dram_per_byte). The passes are ordered (r below) so that two
passes touching the same 64-byte piece are a whole buffer of DRAM traffic apart: nothing fetched
for one pass is still in L2 when another needs it. Where Nsight Compute runs, each case is
launched once under it (profile()) and dram__bytes_read.sum per useful byte is recorded beside
the expectation; elsewhere a text result says "not cross-checked".

Predicted on an H200 SXM (HBM3e, 4.8 TB/s theoretical from the attributes, 2 × 3201 MHz × 6016
bits; a float4 read of 4 GiB reached 4.47 TB/s on the memory-bandwidth page): stride 1 ≈ 4.3-4.5
TB/s at both widths (the first glossary's 2.6 TB/s held host time, over a 256 MiB read with
fewer loads in flight); then DRAM-bound at min(s, 64 / w) bytes per useful byte: float 2.2, 1.1,
0.55, 0.28 TB/s at strides 2, 4, 8, 16 (ratios 0.5, 0.25, 0.125, 0.0625) and no further fall from
the bytes alone past 16; float4 2.2 TB/s at stride 2 and 1.1 TB/s from stride 4 on. A fall past
those strides is DRAM delivering the same bytes more slowly (or more bytes: the counters say
which), not more sectors per request.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check
from verifier.experiment import Outcome, clock_note, clock_result, timed_result
from verifier.gpu import PROBE_SOURCE
from verifier.kernels.reduce import BLOCK_SUM_SOURCE
from verifier.profile import launches

ID = "coalescing"
PURPOSE = "Read bandwidth against access stride 1 to 128, 4- and 16-byte loads, the same useful bytes at every stride"
USES = ("gpu.py", "timing.py", "profile.py", "kernels/reduce.py")

BUFFER = 1 << 30
"""Bytes read per launch: a 1 GiB buffer, far beyond L2."""
WIDTHS = (4, 16)
"""Bytes a lane loads: a float, a float4."""
STRIDES = (1, 2, 4, 8, 16, 32, 64, 128)
CASES = [(w, s) for w in WIDTHS for s in STRIDES]
"""(width, stride) in run and launch order."""
BLOCK = 256
SECTOR, DRAM_FETCH = 32, 64
"""Bytes of an L2 sector, and of what DRAM reads per miss (two sectors)."""
KERNELS = {4: "strided_sum4", 16: "strided_sum16"}
METRICS = ("dram__bytes_read.sum",)
CHUNK = 1 << 24
"""Elements per numpy chunk when the CPU sums the fill (bounded host memory)."""

SOURCE = (
    PROBE_SOURCE
    + BLOCK_SUM_SOURCE
    + r"""
__device__ __forceinline__ float value(float v) { return v; }
__device__ __forceinline__ float value(float4 v) { return (v.x + v.y) + (v.z + v.w); }

template <typename T>
__device__ void strided_sum(const T* __restrict__ in, unsigned int log2n, unsigned int log2s, unsigned int log2m,
                            double* sums, unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    // Item k (of n) is pass p = k >> (log2n - log2s), position i within the pass; it reads
    // element i * s + r(p), with r(p) = (p mod m) * (s / m) + p / m: s / m elements share a
    // 64-byte piece (what DRAM reads per miss) and passes sharing one are m passes apart.
    const unsigned int n = 1u << log2n, shift = log2n - log2s, s = 1u << log2s, m = 1u << log2m;
    const unsigned int step = gridDim.x * blockDim.x;
    float acc = 0.0f;  // a thread sums at most a few thousand values below 1024: exact in float
    for (unsigned int k0 = blockIdx.x * blockDim.x + threadIdx.x; k0 < n; k0 += 8 * step) {
        T v[8];
        #pragma unroll
        for (int u = 0; u < 8; ++u) {  // eight independent loads issued before any is used
            unsigned int k = k0 + u * step;
            unsigned int p = k >> shift, i = k & ((1u << shift) - 1);
            unsigned int r = (p & (m - 1)) * (s >> log2m) + (p >> log2m);
            v[u] = k < n ? in[i * s + r] : T{};
        }
        #pragma unroll
        for (int u = 0; u < 8; ++u) acc += value(v[u]);
    }
    double total = block_sum(acc);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
    probe_end(probe, mark);
}

extern "C" __global__ void strided_sum4(const float* in, unsigned int log2n, unsigned int log2s, unsigned int log2m,
                                        double* sums, unsigned long long* probe) {
    strided_sum<float>(in, log2n, log2s, log2m, sums, probe);
}

// Bounds of 256 threads, 4 blocks per SM: room in registers for eight float4 loads in flight
// (without them ptxas keeps 32 registers and two or three loads in flight).
extern "C" __global__ void __launch_bounds__(256, 4)
strided_sum16(const float4* in, unsigned int log2n, unsigned int log2s, unsigned int log2m, double* sums,
              unsigned long long* probe) {
    strided_sum<float4>(in, log2n, log2s, log2m, sums, probe);
}

extern "C" __global__ void fill(float* out, unsigned int n) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = (float)((i * 2654435761u) >> 22);  // as fill_values(): 10 bits of a hash, exact
}
"""
)


def sectors_per_request(stride: int, width: int) -> int:
    """32-byte sectors one warp-wide load touches: its 32 lanes span 32·s·w bytes, every sector
    of it while lanes are at most a sector apart (s·w ≤ 32), else one sector per lane."""
    return min(32, stride * width)


def dram_per_byte(stride: int, width: int) -> float:
    """DRAM bytes per useful byte, DRAM reading 64 bytes per miss and nothing reused from L2:
    min(32, s·w / 2) pieces of 64 bytes per request, for 32·w useful bytes."""
    return min(32, stride * width / 2) * DRAM_FETCH / (32 * width)


def label(width: int, stride: int) -> str:
    """The result name: 'stride_8' (float), 'float4_stride_8'."""
    return f"stride_{stride}" if width == 4 else f"float4_stride_{stride}"


def log2(value: int) -> int:
    assert value > 0 and value & (value - 1) == 0, f"{value} is not a power of two"
    return value.bit_length() - 1


def passes_apart(stride: int, width: int) -> int:
    """m: passes sharing a 64-byte piece are m apart (s / m = min(s, 64 / w) elements share one)."""
    return stride // min(stride, DRAM_FETCH // width)


def pass_order(stride: int, width: int) -> list[int]:
    """r(p) for each pass p, as the kernel computes it."""
    m = passes_apart(stride, width)
    return [(p % m) * (stride // m) + p // m for p in range(stride)]


def fill_values(start: int, count: int) -> Any:
    """Elements start … start+count-1 as fill writes them: 10 bits of a multiplicative hash of the index."""
    import numpy as np

    index = np.arange(start, start + count, dtype=np.uint32)
    return ((index * np.uint32(2654435761)) >> np.uint32(22)).astype(np.float32)


def expected_sum(n: int) -> float:
    """The sum of the buffer's n floats, on the CPU in chunks (exact: integers in float64)."""
    import numpy as np

    return sum(float(fill_values(a, min(CHUNK, n - a)).sum(dtype=np.float64)) for a in range(0, n, CHUNK))


def summarise(raw: dict[str, Any]) -> Outcome:
    """Gates and results from each case's Timed.raw() with its checksum; raw['bytes'] useful
    bytes per run; raw['counters'] the profiled launches or why there are none."""
    cases: dict[str, dict[str, Any]] = raw["cases"]
    outcome = Outcome(repeats=min((len(c["ms"]) for c in cases.values()), default=0))
    wrong = [f"{name}: {c['sum']} != {raw['expected']}" for name, c in cases.items() if c["sum"] != raw["expected"]]
    outcome.gate(
        "every case's checksum equals the buffer's sum (each element read exactly once)",
        bool(cases) and not wrong,
        "; ".join(wrong),
    )
    medians: dict[str, float] = {}
    for name, c in cases.items():
        w, s = c["width"], c["stride"]
        what = f"{'float' if w == 4 else 'float4'} reads at stride {s}"
        outcome.no_host_time(what, c)
        gbs = [raw["bytes"] / (ms / 1000) / 1e9 for ms in c["ms"]]
        medians[name] = statistics.median(gbs)
        description = (
            f"useful bytes per second, {what} ({s * w} bytes between a warp's lanes): {raw['bytes'] >> 20} MiB / "
            f"GPU time queued behind a wait kernel; {sectors_per_request(s, w)} sectors per request, "
            f"{dram_per_byte(s, w):g} DRAM bytes per useful byte expected "
            f"(median; stopped on {c['stopped']}{clock_note(c)})"
        )
        outcome.add(timed_result(name, gbs, "GB/s", description, c, 1, 2))
    for name, c in cases.items():
        base = medians.get(label(c["width"], 1))
        if c["stride"] != 1 and base:
            expected = 1 / dram_per_byte(c["stride"], c["width"])
            outcome.add(
                Result(
                    f"{name.replace('stride_', 'ratio_stride_')}",
                    round(medians[name] / base, 3),
                    "×",
                    f"{name.replace('_', ' ')} over stride 1 at the same width ({expected:g} if DRAM-bound at "
                    "the expected bytes)",
                )
            )
    clocks = [mhz for c in cases.values() for mhz in c.get("clock_mhz") or []]
    outcome.add(*clock_result("read", {"clock_mhz": clocks}, "the strided reads (every case)"))
    crosscheck(outcome, raw.get("counters"), cases, raw["bytes"])
    return outcome


def crosscheck(outcome: Outcome, counters: Any, cases: dict[str, dict[str, Any]], useful: int) -> None:
    """DRAM bytes per useful byte per case from the profiled launches (the strided reads, in
    CASES order), or one text result saying why there are none."""
    strided = [c for c in counters if "strided_sum" in c[0]] if isinstance(counters, list) else counters
    what, gate = "DRAM bytes per useful byte", "ncu profiled one strided read per case"
    reads = launches(outcome, strided, len(cases), what, gate)
    if reads is None:
        return
    for (name, c), found in zip(cases.items(), reads, strict=True):
        measured = float(found.get(METRICS[0], -1.0)) / useful
        outcome.add(
            Result(
                f"{name}_dram_per_byte",
                round(measured, 3),
                "B/B",
                f"DRAM bytes read (dram__bytes_read.sum) per useful byte, {name.replace('_', ' ')}, one launch under "
                f"Nsight Compute (--clock-control none); expected {dram_per_byte(c['stride'], c['width']):g}",
            )
        )


def _prepare(gpu: Any, buf: int, sms: int) -> tuple[dict[int, Any], dict[int, int]]:
    """The read kernels and their grids (every SM full of resident blocks); the buffer filled."""
    import numpy as np

    fns = {w: gpu.kernel(SOURCE, KERNELS[w]) for w in WIDTHS}
    grids = {}
    for w, fn in fns.items():
        per_sm = check(
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            gpu.drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, BLOCK, 0),
        )
        grids[w] = max(1, int(per_sm)) * sms
    gpu.launch(gpu.kernel(SOURCE, "fill"), 4 * sms, BLOCK, [np.uint64(buf), np.uint32(BUFFER // 4)])
    return fns, grids


def _args(buf: int, width: int, stride: int, sums: int, probe: int) -> list[Any]:
    import numpy as np

    logs = (log2(BUFFER // width), log2(stride), log2(passes_apart(stride, width)))
    return [np.uint64(buf), *(np.uint32(x) for x in logs), np.uint64(sums), np.uint64(probe)]


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened
    from verifier.profile import counters

    sms = device.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
    raw: dict[str, Any] = {"bytes": BUFFER, "expected": expected_sum(BUFFER // 4), "cases": {}}
    with opened(device) as gpu, gpu.buffer(BUFFER) as buf, gpu.probe() as probe:
        fns, grids = _prepare(gpu, buf, sms)
        grid_max = max(grids.values())
        with gpu.buffer(grid_max * 8) as sums:
            for w, s in CASES:
                args, fn, grid = _args(buf, w, s, sums, probe), fns[w], grids[w]
                check("cuMemsetD32Async", gpu.drv.cuMemsetD32Async(sums, 0, grid_max * 2, gpu.stream))

                def work(fn: Any = fn, grid: int = grid, args: list[Any] = args) -> None:
                    gpu.launch(fn, grid, BLOCK, args)

                timed = gpu.time(work, calls=1, probe=probe)
                gpu.sync()
                total = float(gpu.download(np.empty(grid, dtype=np.float64), sums).sum())
                raw["cases"][label(w, s)] = timed.raw() | {"sum": total, "width": w, "stride": s}
    raw["counters"] = counters(ID, METRICS)
    return summarise(raw)


def profile(device: Device) -> None:
    """Each case's read launched once, untimed and unprobed, in CASES order, for Nsight Compute
    (verifier/profile.py); the fill kernel comes first and is told apart by its name."""
    from verifier.gpu import opened

    sms = device.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
    with opened(device) as gpu, gpu.buffer(BUFFER) as buf:
        fns, grids = _prepare(gpu, buf, sms)
        with gpu.buffer(max(grids.values()) * 8) as sums:
            for w, s in CASES:
                gpu.launch(fns[w], grids[w], BLOCK, _args(buf, w, s, sums, 0))
            gpu.sync()
