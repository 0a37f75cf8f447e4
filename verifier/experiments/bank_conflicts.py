"""Shared-memory bank conflicts: what one warp's access costs at word stride 1, 2, ... 32.

Shared memory has 32 banks of 4-byte words; a warp whose 32 lanes hit s different words of
one bank is served in s passes. Each lane chases a chain through shared memory (every word
holds its own byte offset, so the address never changes but the hardware cannot know it),
lane l at word l × stride (stride 0: every lane the same word, a broadcast). Two launches per
stride: one warp alone gives the latency of a dependent access (clock64 around the loop);
a full block of 32 warps on every SM keeps the banks busy, so the cycles between the block's
first start and last end, over its warp-accesses, are the SM's cost per access (throughput).
Those clock64 stamps are the primary method ("in-kernel"). The same launch is also timed queued
behind the wait kernel (gpu.py: no host time in a sample), with the probe, which checks each
sample against the kernel's own span and says the SM clock it ran at: the ns per access.

Predicted on an H200 SXM (32 banks of 4 bytes, up to 1980 MHz): at word stride s a warp puts
gcd(s, 32) lanes on each bank it uses, so about 1, 2, 4, 8, 16, 32 cycles per warp-access at
strides 1 … 32 and about 1 for a broadcast; one warp alone about 24 cycles at stride 1 and two more per extra pass (the
first glossary read 24.4, and 86.4 at stride 32). In ns at the clock it ran at: cycles / GHz,
about 0.51 ns at stride 1 and 16.2 ns at stride 32 at 1980 MHz (0.55 ns before, with host time).
"""

from __future__ import annotations

import statistics
from functools import partial
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device
from verifier.experiment import Outcome, clock_note, clock_result, median_result, timed_result
from verifier.gpu import PROBE_SOURCE

ID = "bank-conflicts"
PURPOSE = "cycles per shared-memory access by one warp at word stride 1, 2, 4, 8, 16, 32 and a broadcast"
USES = ("gpu.py", "timing.py")

STRIDES = (0, 1, 2, 4, 8, 16, 32)
"""Word strides between lanes; 0 is the broadcast (all lanes read one word)."""
WORDS = 1024
"""Shared words (4 KiB): lane 31 at stride 32 reads word 992."""
ITERS = 16384
"""Dependent accesses per thread (the loop is unrolled by 8)."""
WARPS = 32
"""Warps in a throughput block (1024 threads): enough to hide an access's latency."""
MIN_SLOWDOWN_32 = 8.0
"""A 32-way conflict serialises into 32 passes; under 8× the loop did not measure the banks."""

SOURCE = (
    PROBE_SOURCE
    + r"""
extern "C" __global__ void chase(const unsigned* in, unsigned* sums, unsigned long long* cycles,
                                 unsigned stride, int iters, unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    __shared__ unsigned words[1024];
    for (unsigned i = threadIdx.x; i < 1024; i += blockDim.x) words[i] = in[i];
    __syncthreads();
    const char* base = reinterpret_cast<const char*>(words);
    unsigned lane = threadIdx.x & 31;
    unsigned at = (lane * stride & 1023) * 4;  // a byte offset; every word holds its own
    unsigned sum = 0;
    unsigned long long start = clock64();
    #pragma unroll 8
    for (int i = 0; i < iters; ++i) {
        at = *reinterpret_cast<const volatile unsigned*>(base + at);
        sum += at;
    }
    unsigned long long end = clock64();
    sums[blockIdx.x * blockDim.x + threadIdx.x] = sum;
    if (lane == 0) {
        unsigned warp = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
        cycles[2 * warp] = start;
        cycles[2 * warp + 1] = end;
    }
    probe_end(probe, mark);
}
"""
)


def label(stride: int) -> str:
    return "broadcast" if stride == 0 else f"stride_{stride}"


def expected_sums(stride: int, threads: int, iters: int = ITERS) -> list[int]:
    """What each thread's sum must be: iters × its lane's byte offset, modulo 2^32."""
    return [(iters * ((t % 32) * stride % WORDS) * 4) % 2**32 for t in range(threads)]


def block_cycles(stamps: list[int], warps: int) -> list[float]:
    """Per block: cycles from its first warp's start to its last warp's end, per warp-access."""
    out = []
    for b in range(len(stamps) // (2 * warps)):
        block = stamps[2 * warps * b : 2 * warps * (b + 1)]
        out.append((max(block[1::2]) - min(block[0::2])) / (ITERS * warps))
    return out


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    sms = device.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
    raw: dict[str, Any] = {"sms": sms, "latency": {}, "throughput": {}, "timed": {}, "sums_ok": {}}
    with opened(device) as gpu, gpu.probe() as probe:
        fn = gpu.kernel(SOURCE, "chase")
        threads = sms * WARPS * 32
        with gpu.buffer(WORDS * 4) as words, gpu.buffer(threads * 4) as sums, gpu.buffer(sms * WARPS * 16) as stamps:
            gpu.upload(words, np.arange(WORDS, dtype=np.uint32) * 4)

            def launch(stride: int, grid: int, block: int, probed: int = 0) -> None:
                args = (np.uint64(words), np.uint64(sums), np.uint64(stamps), np.uint32(stride), np.int32(ITERS))
                gpu.launch(fn, grid, block, (*args, np.uint64(probed)))

            for stride in STRIDES:
                key = label(stride)
                lat: list[float] = []
                ok = True
                for _ in range(repeats):
                    launch(stride, 1, 32)
                    gpu.sync()
                    t = gpu.download(np.zeros(2, dtype=np.uint64), stamps)
                    lat.append((int(t[1]) - int(t[0])) / ITERS)
                    got = gpu.download(np.zeros(32, dtype=np.uint32), sums)
                    ok &= got.tolist() == expected_sums(stride, 32)
                launch(stride, sms, WARPS * 32)
                gpu.sync()
                t = gpu.download(np.zeros(sms * WARPS * 2, dtype=np.uint64), stamps)
                got = gpu.download(np.zeros(threads, dtype=np.uint32), sums)
                ok &= got.tolist() == expected_sums(stride, threads)
                raw["latency"][key] = lat
                raw["throughput"][key] = block_cycles([int(x) for x in t], WARPS)
                timed = gpu.time(partial(launch, stride, sms, WARPS * 32, probe), calls=1, probe=probe)
                raw["timed"][key] = timed.raw()
                raw["sums_ok"][key] = ok
    return summarise(raw, repeats)


def summarise(raw: dict[str, Any], repeats: int) -> Outcome:
    """Gates and results from the raw numbers run() collected (pure: the CPU test feeds it fixtures)."""
    outcome = Outcome(repeats=repeats)
    keys = [label(s) for s in STRIDES]
    bad = [k for k in keys if not raw["sums_ok"].get(k)]
    outcome.gate(
        "every lane's checksum of what it read matches the CPU's",
        not bad,
        "all strides" if not bad else f"wrong at {', '.join(bad)}",
    )
    tput = {k: statistics.median(raw["throughput"][k]) for k in keys}
    base = tput["stride_1"]
    slow32 = tput["stride_32"] / base if base > 0 else 0.0
    outcome.gate(
        f"a 32-way conflict is at least {MIN_SLOWDOWN_32:g}× slower than stride 1 (the loop reached the banks)",
        slow32 >= MIN_SLOWDOWN_32,
        f"{slow32:.1f}×",
    )
    outcome.gate(
        "a broadcast costs no more than 1.5× stride 1 (one word serves every lane)",
        0 < tput["broadcast"] <= 1.5 * base,
        f"{tput['broadcast'] / base:.2f}×" if base > 0 else "stride 1 took no time",
    )
    per_sm = ITERS * WARPS
    for stride, key in zip(STRIDES, keys, strict=True):
        what = "all 32 lanes reading one word" if stride == 0 else f"lanes {stride} words apart"
        cycles = (
            f"SM cycles per warp-wide shared load, {what}: 32 warps per SM, clock64 from the block's first "
            f"start to its last end over its {per_sm} warp-accesses (median over blocks; samples per block)"
        )
        latency = f"cycles per dependent shared load of one warp alone, {what} (clock64 over {ITERS}; median)"
        outcome.add(
            median_result(f"cycles_per_access_{key}", raw["throughput"][key], "cycles", cycles, 3, 3, "in-kernel"),
            median_result(f"latency_cycles_{key}", raw["latency"][key], "cycles", latency, 2, 2, "in-kernel"),
        )
        timed = raw["timed"][key]
        outcome.no_host_time(f"the 32-warp launch at {key.replace('_', ' ')}", timed)
        ns = [ms * 1e6 / per_sm for ms in timed["ms"]]
        description = (
            f"GPU time of the whole 32-warp-per-SM launch queued behind a wait kernel (filling shared "
            f"memory included, no host time), {what}, over the {per_sm} warp-accesses each SM made "
            f"(median; stopped on {timed['stopped']}{clock_note(timed)})"
        )
        outcome.add(timed_result(f"ns_per_access_{key}", ns, "ns", description, timed, 4, 4))
        if stride > 1 or stride == 0:
            outcome.add(
                Result(
                    f"slowdown_{key}",
                    round(tput[key] / base, 2) if base > 0 else 0.0,
                    "×",
                    f"cycles per access at {key.replace('_', ' ')} over stride 1 (throughput)",
                )
            )
    clocks = [mhz for key in keys for mhz in raw["timed"][key].get("clock_mhz") or []]
    outcome.add(*clock_result("chase", {"clock_mhz": clocks}, "the 32-warp launches (every stride)"))
    return outcome
