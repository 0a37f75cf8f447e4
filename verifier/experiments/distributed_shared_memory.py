"""Distributed shared memory: in a thread block cluster, how long a load from another block's
shared memory takes, and how fast a block can stream it, against the block's own shared memory.

Clusters of 2, 4 and 8 blocks along x, launched with cuLaunchKernelEx and the cluster-dimension
launch attribute (verifier/launch_ex.py), as many clusters as cuOccupancyMaxActiveClusters says
fit at once (one wave; the counts are results). Each block asks for over half an SM's shared
memory, so each runs alone on its SM and block r's reads of block r + 1 (mod the cluster size)
cross to another SM; each reader checks that by reading the target's %smid. The kernels
(verifier/kernels/dsmem.py) write their shared memory, pass the cluster barrier
(barrier.cluster.arrive.release / wait.acquire), read, and pass it again before exiting.

Latency: lane 0 of each block chases STEPS dependent loads through a ring, clock64 around the
loop: in its own shared memory (ld.shared), in its own through the cluster window
(ld.shared::cluster: the instruction's cost apart from the distance), and in the next block's.
Cycles per load, median over every block of LAUNCHES launches (each block's value a sample).
Bandwidth: 1024 threads a block read 16-byte words of a 64 KiB buffer 512 times, 4 loads in
flight per thread, either their own (ld.shared.v4) or the next block's (ld.shared::cluster.v4);
clock64 around the loop gives bytes per SM clock per block (median over blocks), and the same
launch queued behind the wait kernel (gpu.py: no host time) gives GB/s over all the blocks.
Gates: the cluster shape each block saw is the one launched; every word read from another block
is what that block wrote (the whole ring and a tag region, and the chase's end, in the latency
kernel; in the bandwidth kernel a checksum the CPU recomputes for the block read); every remote
target ran on another SM; no host time in the samples; the own-memory rate is at most 128 bytes
per clock per SM (32 banks of 4 bytes: the CUDA C++ Programming Guide).

Predicted on an H200 (no figure for this in NVIDIA's documents; published Hopper microbenchmarks
lead): own shared memory about 30 cycles a dependent load (bank-conflicts measured 24 for a
warp's ld.shared with its address arithmetic folded in; this chase has none), through the
cluster window on its own block a little more, another block's about 180-220 cycles whatever the
cluster size (the SMs of a cluster sit in one GPC); streaming, own memory near 128 B/clock/SM
(memory-bandwidth's L1 read reached 103), another block's about a quarter of that, near 30
B/clock/SM, lower for larger clusters if anything. Max active clusters: 66, 33 and 16 of 2, 4
and 8 (132 SMs, one block each, clusters within a GPC), perhaps fewer where a GPC's SM count is
not a multiple of the cluster size.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import CudaError, Device, check
from verifier.experiment import Outcome, clock_result, failure, median_result, timed_result
from verifier.kernels import dsmem

ID = "distributed-shared-memory"
PURPOSE = (
    "Latency and bandwidth of reading another block's shared memory in a thread block cluster "
    "(clusters of 2, 4, 8) against the block's own"
)
USES = ("gpu.py", "timing.py", "launch_ex.py", "kernels/dsmem.py")

SIZES = (2, 4, 8)
LAUNCHES = 3
BANK_BYTES_PER_CLOCK = 128
"""Shared memory serves 32 banks × 4 bytes per clock per SM (CUDA C++ Programming Guide)."""
SLACK = 1.02


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier import launch_ex
    from verifier.gpu import opened

    sms = device.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
    raw: dict[str, Any] = {"sms": sms, "sizes": {}}
    shared = dsmem.SHARED_BYTES
    with opened(device) as gpu, gpu.probe() as probe:
        latency, read = gpu.kernel(dsmem.SOURCE, "dsmem_latency"), gpu.kernel(dsmem.SOURCE, "dsmem_read")
        launch_ex.allow_shared(gpu, latency, shared)
        launch_ex.allow_shared(gpu, read, shared)
        for n in SIZES:
            try:
                active = launch_ex.max_active_clusters(gpu, read, n, dsmem.BW_BLOCK, shared, n)
                active_latency = launch_ex.max_active_clusters(gpu, latency, n, 32, shared, n)
                blocks = min(active, active_latency) * n
                case: dict[str, Any] = {"active": active, "active_latency": active_latency, "blocks": blocks}
                raw["sizes"][n] = case
                if blocks == 0:
                    continue
                rows: list[list[int]] = []
                with gpu.buffer(blocks * dsmem.OUT_WORDS * 8) as out:
                    for _ in range(LAUNCHES):
                        poison = gpu.drv.cuMemsetD32Async(out, 0xFFFFFFFF, blocks * dsmem.OUT_WORDS * 2, gpu.stream)
                        check("cuMemsetD32Async", poison)
                        launch_ex.launch(gpu, latency, blocks, 32, [np.int32(dsmem.STEPS), np.uint64(out)], shared, n)
                        gpu.sync()
                        got = gpu.download(np.zeros(blocks * dsmem.OUT_WORDS, dtype=np.uint64), out)
                        rows += [[int(x) for x in r] for r in got.reshape(blocks, dsmem.OUT_WORDS)]
                case["latency"] = rows
                with gpu.buffer(blocks * 4) as sums, gpu.buffer(blocks * 8) as cycles:
                    for remote in (1, 0) if n == SIZES[0] else (1,):

                        def work(remote: int = remote, at: int = probe, blocks: int = blocks, n: int = n) -> None:
                            args = [np.int32(dsmem.PASSES), np.int32(remote), np.uint64(sums), np.uint64(cycles)]
                            launch_ex.launch(gpu, read, blocks, dsmem.BW_BLOCK, [*args, np.uint64(at)], shared, n)

                        seen: list[int] = []
                        block_cycles: list[int] = []
                        for _ in range(LAUNCHES):
                            check("cuMemsetD32Async", gpu.drv.cuMemsetD32Async(sums, 0, blocks, gpu.stream))
                            work(at=0)
                            gpu.sync()
                            seen += [int(x) for x in gpu.download(np.zeros(blocks, dtype=np.uint32), sums)]
                            block_cycles += [int(x) for x in gpu.download(np.zeros(blocks, dtype=np.uint64), cycles)]
                        timed = gpu.time(work, probe=probe)
                        case["remote" if remote else "local"] = timed.raw() | {"sums": seen, "cycles": block_cycles}
            except CudaError as exc:
                raw["sizes"][n] = {"error": failure(exc.as_result())}
    return summarise(raw)


def expected_sums(blocks: int, n: int, remote: bool) -> list[int]:
    """dsmem_read's checksum per block over LAUNCHES launches: the buffer of the block it read."""
    one = [dsmem.read_sum((b % n + 1) % n if remote else b % n) for b in range(blocks)]
    return one * LAUNCHES


def summarise(raw: dict[str, Any]) -> Outcome:
    """Gates and results from what run() measured (pure: the CPU test feeds it fixture data)."""
    cases = {int(n): c for n, c in raw["sizes"].items()}
    ran = {n: c for n, c in cases.items() if c.get("latency")}
    outcome = Outcome(repeats=LAUNCHES)
    for n, case in cases.items():
        if "error" in case:
            outcome.gate(f"clusters of {n} launched and ran", False, str(case["error"]))
        elif not case.get("blocks"):
            outcome.gate(f"clusters of {n} launched and ran", False, "cuOccupancyMaxActiveClusters gave 0")
    shape, wrong, same_sm = [], [], []
    for n, case in ran.items():
        for b, row in enumerate(case["latency"]):
            _, _, _, bad, size, rank, sm, their_sm, flags, cluster = row
            block = b % case["blocks"]
            if size != n or rank != block % n or cluster != block // n:
                shape.append(f"c{n} block {block}: size {size}, rank {rank}, cluster {cluster}")
            if bad or flags != 7:
                wrong.append(f"c{n} block {block}: {bad} words differ, chase ends {flags:03b}")
            if sm == their_sm:
                same_sm.append(f"c{n} block {block} on SM {sm}")
        for key in ("remote", "local"):
            if key in case and case[key]["sums"] != expected_sums(case["blocks"], n, key == "remote"):
                wrong.append(f"c{n} {key} read: checksums differ")
    outcome.gate(
        "each block saw the cluster size launched, its rank (block index mod size) and its cluster id",
        bool(ran) and not shape,
        "; ".join(shape[:5]) or f"cluster sizes {sorted(ran)}",
    )
    if not outcome.gate(
        "every word read from another block's shared memory is what that block wrote (ring, tags, checksums)",
        bool(ran) and not wrong,
        "; ".join(wrong[:5]) or "all blocks, all launches",
    ):
        return outcome
    outcome.gate(
        "every block's remote reads went to a block on another SM",
        not same_sm,
        "; ".join(same_sm[:5]) or "no reader shared an SM with its target",
    )
    rows = [row for case in ran.values() for row in case["latency"]]
    local = [row[0] / dsmem.STEPS for row in rows]
    through = [row[1] / dsmem.STEPS for row in rows]
    chase = f"{dsmem.STEPS} dependent loads, clock64 around the loop; median over every block of {LAUNCHES} launches"
    own = f"one load from the block's own shared memory (ld.shared), {chase} of every cluster size"
    window = (
        f"one load from the block's own shared memory through the cluster window (mapa to its own rank, "
        f"ld.shared::cluster), {chase} of every cluster size"
    )
    outcome.add(
        median_result("local_latency_cycles", local, "cycles", own, 1, 2, "in-kernel"),
        median_result("cluster_self_latency_cycles", through, "cycles", window, 1, 2, "in-kernel"),
    )
    for n, case in ran.items():
        remote = [row[2] / dsmem.STEPS for row in case["latency"]]
        next_block = (
            f"one load from the next block's shared memory in a cluster of {n} (mapa, ld.shared::cluster), {chase}"
        )
        outcome.add(
            median_result(f"remote_latency_cycles_c{n}", remote, "cycles", next_block, 1, 2, "in-kernel"),
            Result(
                f"remote_over_local_latency_c{n}",
                round(statistics.median(remote) / statistics.median(local), 2),
                "×",
                f"remote load latency in clusters of {n} over the own-memory (ld.shared) latency",
            ),
            Result(f"max_active_clusters_c{n}", case["active"], "clusters", _active(n)),
            Result(f"blocks_c{n}", case["blocks"], "blocks", f"blocks launched in clusters of {n} (one wave)"),
        )
    bandwidth(outcome, ran)
    return outcome


def _active(n: int) -> str:
    return (
        f"cuOccupancyMaxActiveClusters for the bandwidth kernel in clusters of {n} "
        f"({dsmem.BW_BLOCK} threads, {dsmem.SHARED_BYTES // 1024} KiB of shared memory a block)"
    )


def bandwidth(outcome: Outcome, ran: dict[int, dict[str, Any]]) -> None:
    """Bytes per clock per SM (in-kernel) and GB/s over all blocks (queued) of each read."""
    per_block = dsmem.PASSES * dsmem.BW_BYTES
    rates: dict[str, float] = {}
    for n, case in ran.items():
        for key in ("local", "remote"):
            if key not in case:
                continue
            data = case[key]
            name = "local" if key == "local" else f"remote_c{n}"
            what = (
                "the block's own shared memory (ld.shared.v4)"
                if key == "local"
                else f"the next block's shared memory in a cluster of {n} (ld.shared::cluster.v4)"
            )
            per_clock = [per_block / c for c in data["cycles"] if c > 0]
            gbs = [case["blocks"] * per_block / (ms * 1e-3) / 1e9 for ms in data["ms"]]
            rates[name] = statistics.median(per_clock)
            outcome.no_host_time(f"the {name.replace('_', ' ')} read", data)
            per_sm = (
                f"bytes one block (alone on its SM) read per SM clock from {what}: {dsmem.BW_BLOCK} threads, "
                f"{dsmem.PASSES} passes over {dsmem.BW_BYTES // 1024} KiB, clock64 around the loop (median over "
                f"blocks of {LAUNCHES} launches)"
            )
            launch = (
                f"bytes all {case['blocks']} blocks read per second from {what}, the whole launch (writing the "
                f"buffers and the cluster barriers included) queued behind a wait kernel (median)"
            )
            outcome.add(
                median_result(f"{name}_bytes_per_clock_per_sm", per_clock, "B/clock/SM", per_sm, 1, 2, "in-kernel"),
                timed_result(f"{name}_gbs", gbs, "GB/s", launch, data, 1, 2),
                *clock_result(f"{name}_read", data, f"the {name.replace('_', ' ')} read"),
            )
    if "local" in rates:
        outcome.gate(
            f"the own-memory read is at most {BANK_BYTES_PER_CLOCK} bytes per clock per SM (32 banks × 4 bytes)",
            rates["local"] <= BANK_BYTES_PER_CLOCK * SLACK,
            f"{rates['local']:.1f} B/clock/SM",
        )
        for name, rate in rates.items():
            if name != "local":
                outcome.add(
                    Result(
                        f"{name}_fraction_of_local",
                        round(100 * rate / rates["local"], 1),
                        "%",
                        f"the {name.replace('_', ' ')} read's bytes per clock as a share of the own-memory read's",
                    )
                )
