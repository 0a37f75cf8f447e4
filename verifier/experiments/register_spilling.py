"""Register spilling: one register-hungry kernel built with --maxrregcount 255, 64 and 32.

Each thread keeps VALUES floats live in an array that every loop turn updates in place with
constant indices (the inner loop is unrolled), so the whole array wants registers. NVRTC builds
the same source three times with `--maxrregcount=N` and `--ptxas-options=-v`; each variant's
registers per thread and local memory per thread are read back from the loaded function
(cuFuncGetAttribute NUM_REGS and LOCAL_SIZE_BYTES), and the lines ptxas printed into the NVRTC
log (stack frame, spill stores, spill loads) are kept. The same source without the option is
built too, for its registers only (ptxas's own default is not the 255 cap: see below).

Correctness first: the outputs of CHECKED threads, spread over the grid, are recomputed on the
CPU (each fmaf emulated in float64 and rounded to float32) for every variant, and every
variant's whole output must equal the uncapped variant's bit for bit: spilling moves values
between registers and memory and must change no arithmetic. Inputs are random, never zeros.
The map v[k] <- a·v[k] + b·v[k+1] + x has a + b just under 1, so it drifts slowly to its fixed
point: a kernel that skipped rounds would be visibly off.

Timing: each variant runs a grid of BLOCKS_PER_SM blocks per SM, queued behind the wait kernel
(gpu.time: no host time in a sample), carrying the probe, which reads the SM clock inside the
kernel. The slowdown is each capped variant's median over the uncapped one's. Compile time is
a host cost and is not reported.

Prediction (NVRTC 13.0 for sm_90, the version the H200 nodes run; the figures ptxas gives are
checked on the CPU here, the rest is arithmetic): the uncapped variant gets 79 registers and no
local memory (80 with no option at all: an explicit 255 is not quite ptxas's default); the 64
cap, 64 registers, a 64-byte stack frame (LOCAL_SIZE_BYTES 64), 108 bytes of spill stores and
92 of spill loads; the 32 cap, 32 registers, a 280-byte frame, 484 and 468 bytes of spill code.
Occupancy (256-thread blocks; 65536 registers per SM, which the driver reports; registers given
per warp in units of 256 from 4 sub-partitions): 3 blocks per SM uncapped, 4 at 64, 8 at 32.
Time: the uncapped kernel is FP32-bound, ROUNDS × 2·VALUES fmaf per thread, 24 × 132 × 256
threads: 2.66e10 FMA ÷ (132 SMs × 128 FP32 lanes, the Hopper whitepaper's figure, × 1.98 GHz)
≈ 0.8 ms (fp32-throughput held 1980 MHz at 97.6% of the peak per clock: ≈ 0.82 ms). At 64
registers the spilled words (64 bytes per thread, 64 KiB per SM at 1024 threads) stay in L1, and
each loop turn adds a dozen or two local accesses per warp (one L1 wavefront each) to its 128
FMA instructions, which take 32 SM clocks per warp at 4 warps issuing at once: the FMA pipes stay
the limit, 1.0-1.5× slower. At 32 registers, ~240 local accesses per warp per turn (≈ 7× the
FMA time even if L1 served all), and 2048 threads × 280 bytes = 560 KiB per SM, more than L1
holds, so part goes to L2: 8-40× slower (a guess near 15×), twice the occupancy hiding little.
"""

from __future__ import annotations

import re
import statistics
from functools import partial
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check, compile_source
from verifier.experiment import Outcome, clock_result, timed_method, timing
from verifier.gpu import PROBE_SOURCE

ID = "register-spilling"
PURPOSE = (
    "One register-hungry kernel built with --maxrregcount 255, 64 and 32: registers, local memory, "
    "ptxas's spill lines and GPU time of each"
)
USES = ("gpu.py", "timing.py")

VALUES, ROUNDS = 64, 256
CAPS = (255, 64, 32)
BASE = 255
"""The uncapped variant every slowdown is against."""
BLOCK, BLOCKS_PER_SM = 256, 24
"""24 blocks per SM: whole waves at 3, 4 and 8 resident blocks per SM."""
A, B = 0.9, 0.0999
LOW, HIGH = 1e-5, 1e-4
"""The per-thread input x, drawn uniformly from [LOW, HIGH)."""
CHECKED = 128
"""Threads whose outputs the CPU recomputes, evenly spread over the grid."""
TOLERANCE = 1e-5
NAN_BITS = 0x7FC00000
"""The output is poisoned with NaN before each check: a thread that wrote nothing fails."""
FUNCTION = {
    "registers": ("NUM_REGS", "registers/thread", "registers per thread"),
    "local_memory": ("LOCAL_SIZE_BYTES", "bytes/thread", "local memory per thread"),
    "max_threads_per_block": ("MAX_THREADS_PER_BLOCK", "threads/block", "largest block it can be launched with"),
}
"""cuFuncGetAttribute values of each variant: key -> (CU_FUNC_ATTRIBUTE_ suffix, unit, what)."""
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")

SOURCE = PROBE_SOURCE + (
    rf"""
#define VALUES {VALUES}
extern "C" __global__ void spill(float* out, const float* in, int rounds, float a, float b,
                                 unsigned long long* probe) {{
    ProbeMark mark = probe_begin(probe);
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[t];
    float v[VALUES];  // constant indices only: registers if they fit, spilled to local memory if not
#pragma unroll
    for (int k = 0; k < VALUES; ++k) v[k] = x * (float)(k + 1);
    for (int r = 0; r < rounds; ++r) {{
#pragma unroll
        for (int k = 0; k < VALUES; ++k) v[k] = fmaf(v[k], a, fmaf(v[(k + 1) % VALUES], b, x));
    }}
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < VALUES; ++k) sum += v[k];
    out[t] = sum;
    probe_end(probe, mark);
}}
"""
)


def options(cap: int | None) -> tuple[str, ...]:
    """NVRTC options of a variant: ptxas's report always, the register cap where there is one."""
    return ("--ptxas-options=-v", *((f"--maxrregcount={cap}",) if cap is not None else ()))


def checked_threads(threads: int) -> list[int]:
    return sorted({round(i * (threads - 1) / (CHECKED - 1)) for i in range(CHECKED)})


def _fma(x: Any, y: Any, z: Any) -> Any:
    """fmaf on the CPU: the product of two float32 is exact in float64; one rounding to float32
    (after float64's, which differs from a single rounding only in rare halfway cases)."""
    import numpy as np

    return (x.astype(np.float64) * y + z.astype(np.float64)).astype(np.float32)


def expected(x: Any, rounds: int) -> Any:
    """What spill writes for threads with inputs x (float32), on the CPU."""
    import numpy as np

    f32 = np.float32
    x = np.asarray(x, dtype=f32)
    v = [x * f32(k + 1) for k in range(VALUES)]
    a, b = float(f32(A)), float(f32(B))
    for _ in range(rounds):
        for k in range(VALUES):
            v[k] = _fma(v[k], a, _fma(v[(k + 1) % VALUES], b, x))
    total = np.zeros_like(x)
    for k in range(VALUES):
        total = (total + v[k]).astype(f32)
    return total


def ptxas_report(log: str) -> dict[str, Any]:
    """The figures ptxas printed for the kernel (-v): registers used, stack frame, spill bytes."""
    frame, used = _FRAME.search(log), _USED.search(log)
    line = next((" ".join(ln.split()) for ln in log.splitlines() if "spill stores" in ln), "")
    return {
        "line": line,
        "used": int(used[1]) if used else None,
        "stack_frame": int(frame[1]) if frame else None,
        "spill_stores": int(frame[2]) if frame else None,
        "spill_loads": int(frame[3]) if frame else None,
    }


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    drv = device.driver
    attrs = device.attributes(
        sm_count="CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
        max_threads_per_sm="CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR",
    )
    sms = attrs["sm_count"]
    grid = sms * BLOCKS_PER_SM
    threads = grid * BLOCK
    x = np.random.default_rng().uniform(LOW, HIGH, threads).astype(np.float32)
    picked = checked_threads(threads)
    raw: dict[str, Any] = {"threads": threads, "variants": {}}
    base: Any = None
    with opened(device) as gpu, gpu.buffer(threads * 4) as inp, gpu.buffer(threads * 4) as out, gpu.probe() as probe:
        gpu.upload(inp, x)
        for cap in (None, *CAPS):
            compiled = compile_source(SOURCE, "spill.cu", gpu.arch, options(cap))
            module, _ = device.load(compiled.image)
            fn = device.function(module, "spill")
            variant: dict[str, Any] = {"log": compiled.log}
            for key, (suffix, _, _) in FUNCTION.items():
                attr = getattr(drv.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{suffix}")
                variant[key] = int(check("cuFuncGetAttribute", drv.cuFuncGetAttribute(attr, fn)))
            call = drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, BLOCK, 0)
            variant["blocks_per_sm"] = int(check("cuOccupancyMaxActiveBlocksPerMultiprocessor", call))
            raw["variants"]["nocap" if cap is None else cap] = variant
            if cap is None:
                continue
            args = [np.uint64(out), np.uint64(inp), np.int32(ROUNDS), np.float32(A), np.float32(B)]
            check("cuMemsetD32", drv.cuMemsetD32(out, NAN_BITS, threads))
            gpu.launch(fn, grid, BLOCK, [*args, np.uint64(0)])
            gpu.sync()
            got = gpu.download(np.empty(threads, dtype=np.float32), out)
            base = got if base is None else base
            variant |= {
                "finite": bool(np.isfinite(got).all()),
                "checked": [float(v) for v in got[picked]],
                "differ_from_base": int(np.count_nonzero(got.view(np.uint32) != base.view(np.uint32))),
            }
            probed = [*args, np.uint64(probe)]
            variant["timed"] = gpu.time(partial(gpu.launch, fn, grid, BLOCK, probed), probe=probe).raw()
    raw["expected"] = [float(v) for v in expected(x[picked], ROUNDS)]
    return summarise(raw, attrs)


def summarise(raw: dict[str, Any], attrs: dict[str, Any]) -> Outcome:
    """Gates and results from the raw numbers (pure: the CPU test feeds it fixture data): raw
    holds each variant's function attributes, NVRTC log, checked outputs and Timed.raw()."""
    variants: dict[Any, dict[str, Any]] = raw["variants"]
    timed = {cap: variants[cap] for cap in CAPS}
    outcome = Outcome(repeats=min(len(v["timed"]["ms"]) for v in timed.values()))
    want = raw["expected"]
    errors = {
        cap: max(abs(g - w) / abs(w) for g, w in zip(v["checked"], want, strict=True)) if v["finite"] else float("inf")
        for cap, v in timed.items()
    }
    detail = ", ".join(f"cap {cap}: {e:.2e}" for cap, e in errors.items())
    if not outcome.gate(
        "every variant's outputs equal the CPU's float32 computation",
        all(e <= TOLERANCE for e in errors.values()),
        f"{len(want)} threads, max relative error {detail} (tolerance {TOLERANCE:.0e}); all outputs finite",
    ):
        return outcome
    differ = {cap: v["differ_from_base"] for cap, v in timed.items()}
    outcome.gate(
        "spilling changed no output: each variant's outputs equal the uncapped one's bit for bit",
        not any(differ.values()),
        ", ".join(f"cap {cap}: {n} of {raw['threads']} differ" for cap, n in differ.items()),
    )
    over = [f"cap {cap}: {v['registers']} registers" for cap, v in timed.items() if v["registers"] > cap]
    outcome.gate(
        "each capped variant uses at most its cap of registers", not over, "; ".join(over) or "every variant within"
    )
    outcome.add(
        Result("values_per_thread", VALUES, "floats", "floats each thread keeps live in its array"),
        Result("rounds", ROUNDS, "", "loop turns, each updating every value with two fmaf"),
        Result("threads_launched", raw["threads"], "threads", f"threads in the grid ({BLOCK} per block)"),
        Result("block_size", BLOCK, "threads/block", "threads per block of every launch and occupancy query"),
    )
    nocap = variants.get("nocap")
    if nocap is not None:
        outcome.add(*attributes("nocap", nocap, "built without --maxrregcount", attrs))
    base_ms = statistics.median(timed[BASE]["timed"]["ms"])
    for cap, v in timed.items():
        label = f"built with --maxrregcount={cap}"
        outcome.add(*attributes(f"cap{cap}", v, label, attrs))
        t = v["timed"]
        outcome.no_host_time(f"the kernel {label}", t)
        text = f"GPU time of one launch of the kernel {label}, queued behind a wait kernel; stopped on {t['stopped']}"
        outcome.add(*[_queued(r, t) for r in timing(f"cap{cap}_time", [ms / 1000 for ms in t["ms"]], text)])
        outcome.add(*clock_result(f"cap{cap}", t, f"the kernel {label}"))
        if cap != BASE:
            ratio = statistics.median(t["ms"]) / base_ms
            what = f"the kernel {label} against --maxrregcount={BASE} (ratio of the median GPU times)"
            outcome.add(Result(f"cap{cap}_slowdown", round(ratio, 2), "×", what))
    return outcome


def _queued(result: Result, t: dict[str, Any]) -> Result:
    """A timing() result marked with the method its samples came from."""
    from dataclasses import replace

    return replace(result, method=timed_method(t))


def attributes(prefix: str, v: dict[str, Any], label: str, attrs: dict[str, Any]) -> list[Result]:
    """A variant's function attributes, occupancy and what ptxas printed about it."""
    out = [
        Result(f"{prefix}_{key}", v[key], unit, f"{what} of the kernel {label} (CU_FUNC_ATTRIBUTE_{suffix})")
        for key, (suffix, unit, what) in FUNCTION.items()
    ]
    blocks = v["blocks_per_sm"]
    percent = round(100 * blocks * BLOCK / attrs["max_threads_per_sm"], 1)
    out += [
        Result(
            f"{prefix}_blocks_per_sm",
            blocks,
            "blocks/SM",
            f"{BLOCK}-thread blocks of the kernel {label} one SM holds (cuOccupancyMaxActiveBlocksPerMultiprocessor)",
        ),
        Result(f"{prefix}_occupancy", percent, "%", f"those blocks' threads ÷ the most an SM holds, {label}"),
    ]
    report = ptxas_report(v["log"])
    said = "printed by ptxas into the NVRTC log (--ptxas-options=-v)"
    out += [
        Result(
            f"{prefix}_ptxas_line", report["line"] or None, "", f"ptxas's spill line for the kernel {label}, {said}"
        ),
        Result(f"{prefix}_stack_frame", report["stack_frame"], "bytes/thread", f"stack frame {label}, {said}"),
        Result(f"{prefix}_spill_stores", report["spill_stores"], "bytes", f"bytes of spill stores {label}, {said}"),
        Result(f"{prefix}_spill_loads", report["spill_loads"], "bytes", f"bytes of spill loads {label}, {said}"),
    ]
    return out
