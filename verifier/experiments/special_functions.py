"""Special functions: results per SM clock per SM of the MUFU approximations ex2, rsqrt and sin, and
of FFMA beside them, each SM timing its own block.

Each kernel applies one function over and over: every thread runs CHAINS independent chains x -> f(x),
BODY steps per loop turn, through inline PTX so the compiler keeps each step as written:
ex2.approx.ftz.f32 of -x (MUFU.EX2 with a negated operand), rsqrt.approx.ftz.f32 of x (MUFU.RSQ),
sin.approx.ftz.f32 of x + 1 (FADD, FMUL.RZ by 1/2π, MUFU.SIN), and fma.rn.f32 x·0.5 + 0.5 (FFMA). The
.ftz forms are what -use_fast_math makes of exp2f, rsqrtf and __sinf; without .ftz ptxas adds
instructions around the MUFU for denormals. Each map draws x to a fixed point from any start the
kernel uses (2^-x to 0.6412, x^-1/2 to 1, sin(x + 1) to 0.9350, x/2 + 1/2 to 1), so the CPU checks
every function: numpy's exact function iterated in float64 from the same starts must land where the
GPU's chains did, within the approximation's error (the CUDA C++ Programming Guide: 2 ulp for
exp2f and rsqrtf, 2^-21.41 absolute for __sinf on [-π, π]) times 1 / (1 - |f'|) at the fixed point
(at most 2), with room: TOLERANCE. A kernel computing another function, or none, fails.

One block of WARPS warps per SM (verifier/sm_rate.py: it takes over half the SM's shared memory, so
the SM holds no other), each block counting the clock64 cycles of its loop between two barriers:
results per clock per SM = threads × CHAINS × steps ÷ cycles, the median over SMs, per launch; no host
time and no launch start or drain is in it, and the clock frequency does not enter it. Where the node
has cuobjdump (verifier/sass.py), each kernel's SASS is kept and a gate checks that its loop holds
the MUFU or FFMA instructions it times.

Predicted on an H200 SXM (132 SMs, 1980 MHz maximum): the CUDA C++ Programming Guide's throughput
table gives compute capability 9.0 16 results per clock per SM for exp2, rsqrt and sin and 128 for
FP32 FMA (datasheet figures), so a warp's MUFU instruction holds its scheduler's share of the unit
for 8 clocks: ex2, rsqrt and sin ≈ 16 each (the loop's other instructions issue in the gaps, sin's
FADD and FMUL too), FFMA ≈ 128 × 256/259 ≈ 126.5 (3 loop instructions per 256 FMAs take issue
slots), so FFMA ≈ 7.9 times each MUFU function. The hard bound, gated: no function beyond one warp-
instruction per scheduler per clock, 4 × 32 = 128 results per clock per SM (within 1%).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device
from verifier.experiment import Outcome, clock_result
from verifier.gpu import PROBE_SOURCE
from verifier.sm_rate import BLOCK_TIMER_SOURCE

ID = "special-functions"
PURPOSE = "Results per clock per SM of the MUFU approximations ex2, rsqrt and sin against FFMA, each SM timing itself"
USES = ("gpu.py", "timing.py", "sm_rate.py", "sass.py")

WARPS, CHAINS, BODY, ITERS = 32, 4, 256, 32
"""32 warps per SM (one 1024-thread block), 4 chains per thread, 256 steps per thread per loop turn."""
STEPS = ITERS * BODY // CHAINS
"""Steps of each chain."""
TOLERANCE = {"ffma": 1e-7, "ex2": 4e-6, "rsqrt": 4e-6, "sin": 4e-6}
"""Relative error allowed at the fixed point: FFMA is exact (x/2 + 1/2 rounds once, as the CPU's does);
the approximations' documented error times at most 2, about 8 ulp, with 4 times that as room."""
ISSUE_BOUND = 128
"""Results per clock per SM if every scheduler (4) issued one warp-instruction (32 results) every clock."""
PER_CLOCK_SLACK = 1.01
GUIDE = {
    cc: {"mufu": 16, "ffma": 128 if cc in ("8.6", "8.7", "8.9", "9.0") else 64}
    for cc in ("7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0")
}
"""Results per clock per SM, CUDA C++ Programming Guide, arithmetic instruction throughput table:
reciprocal square root, base-2 exponential and sine (16), FP32 multiply-add (64 or 128)."""


@dataclass(frozen=True)
class Function:
    name: str
    step: str
    """The inline PTX of one step of chain c (x[c] is read and written)."""
    opcode: str
    """The SASS instruction it times."""


FUNCTIONS = (
    Function("ffma", 'asm volatile("fma.rn.f32 %0, %0, 0f3F000000, 0f3F000000;" : "+f"(x[c]));', "FFMA"),
    Function(
        "ex2", 'asm volatile("{ .reg .f32 t; neg.f32 t, %0; ex2.approx.ftz.f32 %0, t; }" : "+f"(x[c]));', "MUFU.EX2"
    ),
    Function("rsqrt", 'asm volatile("rsqrt.approx.ftz.f32 %0, %0;" : "+f"(x[c]));', "MUFU.RSQ"),
    Function(
        "sin",
        'asm volatile("{ .reg .f32 t; add.f32 t, %0, 0f3F800000; sin.approx.ftz.f32 %0, t; }" : "+f"(x[c]));',
        "MUFU.SIN",
    ),
)


def _kernel(f: Function) -> str:
    return rf"""
extern "C" __global__ void __launch_bounds__(1024, 1) {f.name}_rate(float* out, unsigned long long* blocks, int iters,
        unsigned long long* probe) {{
    ProbeMark mark = probe_begin(probe);
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float x[{CHAINS}];
    #pragma unroll
    for (int c = 0; c < {CHAINS}; ++c) x[c] = 0.5f + (float)(t % 64) * 0.0625f + (float)c;
    long long start = block_start();
    #pragma unroll 1
    for (int i = 0; i < iters; ++i) {{
        #pragma unroll
        for (int u = 0; u < {BODY // CHAINS}; ++u) {{
            #pragma unroll
            for (int c = 0; c < {CHAINS}; ++c) {f.step}
        }}
    }}
    block_stop(blocks, start);
    #pragma unroll
    for (int c = 0; c < {CHAINS}; ++c) out[t * {CHAINS} + c] = x[c];
    probe_end(probe, mark);
}}
"""


SOURCE = PROBE_SOURCE + BLOCK_TIMER_SOURCE + "".join(_kernel(f) for f in FUNCTIONS)


def exact(name: str, x: Any) -> Any:
    """One step of the function, exactly (numpy, float64)."""
    import numpy as np

    return {"ffma": lambda: x * 0.5 + 0.5, "ex2": lambda: np.exp2(-x), "rsqrt": lambda: 1 / np.sqrt(x)}.get(
        name, lambda: np.sin(x + 1)
    )()


def checked(sms: int) -> list[int]:
    """Threads whose chains the CPU recomputes: lanes and warps of the first block, and the last block's."""
    block = 32 * WARPS
    return sorted({0, 1, 31, 63, block - 1, (sms - 1) * block, sms * block - 1})


def expected(name: str, threads: list[int], steps: int = STEPS) -> Any:
    """Where the chains of these threads end: numpy's exact function, steps times, from the kernel's starts."""
    import numpy as np

    x = 0.5 + (np.array(threads)[:, None] % 64) * 0.0625 + np.arange(CHAINS)[None, :]
    for _ in range(steps):
        x = exact(name, x)
    return x


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.cuda import compile_source
    from verifier.gpu import opened
    from verifier.sass import disassemble
    from verifier.sm_rate import allow_shared, measure, one_block_shared

    attrs = device.sm_facts()
    sms = attrs["sm_count"]
    shared, threads = one_block_shared(device), sms * 32 * WARPS
    raw: dict[str, Any] = {}
    with opened(device) as gpu:
        image = compile_source(SOURCE, "special_functions.cu", gpu.arch).image
        module, _ = device.load(image)
        with gpu.buffer(threads * CHAINS * 4) as out, gpu.buffer(sms * 16) as blocks, gpu.probe() as probe:
            for f in FUNCTIONS:
                fn = device.function(module, f"{f.name}_rate")
                allow_shared(gpu, fn, shared)
                args = (np.uint64(out), np.uint64(blocks), np.int32(ITERS), np.uint64(probe))
                raw[f.name] = measure(gpu, fn, sms, 32 * WARPS, args, shared, blocks, probe)
                got = gpu.download(np.zeros(threads * CHAINS, dtype=np.float32), out).reshape(-1, CHAINS)
                want = expected(f.name, checked(sms))
                have = got[checked(sms)].astype(np.float64)
                raw[f.name]["max_rel_error"] = float(np.max(np.abs(have - want) / np.abs(want)))
                raw[f.name]["sass"] = disassemble(image, f"{f.name}_rate")
    return summarise(raw, attrs)


def summarise(raw: dict[str, Any], attrs: dict[str, Any]) -> Outcome:
    """Gates and results from the raw numbers (pure: the CPU test feeds it fixture data): raw[name] is
    sm_rate.measure's output for each function with its max_rel_error and, where read, its SASS."""
    from verifier.sass import results
    from verifier.sm_rate import one_per_sm, rates

    outcome = Outcome(repeats=min(len(raw[f.name]["cycles"]) for f in FUNCTIONS))
    errors = {f.name: float(raw[f.name]["max_rel_error"]) for f in FUNCTIONS}
    detail = ", ".join(f"{n} {e:.1e} (tolerance {TOLERANCE[n]:.0e})" for n, e in errors.items())
    ok = all(e <= TOLERANCE[n] for n, e in errors.items())  # a NaN compares False: it fails
    if not outcome.gate("every function's chains end where numpy's exact function ends, within its error", ok, detail):
        return outcome
    checks = [one_per_sm(raw[f.name], attrs["sm_count"]) for f in FUNCTIONS]
    outcome.gate("one block ran on each SM in every launch", all(c for c, _ in checks), checks[0][1])
    work = 32 * WARPS * CHAINS * STEPS
    median: dict[str, float] = {}
    best = 0.0
    for f in FUNCTIONS:
        samples = rates(raw[f.name], work)
        median[f.name], best = statistics.median(samples), max(best, *samples)
        outcome.add(
            Result(
                f"{f.name}_results_per_clock",
                round(median[f.name], 2),
                "results/clock/SM",
                f"{f.opcode} results per SM clock per SM: {32 * WARPS} threads per SM × {CHAINS} chains × {STEPS} "
                f"steps ÷ the clock64 cycles of each SM's block, median over SMs, median of {len(samples)} launches",
                [round(s, 3) for s in samples],
                method="in-kernel",
            )
        )
    for f in FUNCTIONS[1:]:
        what = f"FFMA results per clock ÷ {f.opcode} results per clock (medians)"
        outcome.add(Result(f"ffma_over_{f.name}", round(median["ffma"] / median[f.name], 2), "×", what))
    clocks = [m for f in FUNCTIONS for m in raw[f.name].get("clock_mhz", [])]
    outcome.add(
        Result("steps_per_chain", STEPS, "", f"steps of each of the {CHAINS} chains of every thread"),
        *clock_result("functions", {"clock_mhz": clocks}, "the four kernels (one sample per launch)"),
    )
    guide = GUIDE.get(attrs["cc"])
    if guide is not None:
        source = "CUDA C++ Programming Guide, arithmetic instruction throughput table (a datasheet figure)"
        outcome.add(
            Result("guide_mufu_per_clock", guide["mufu"], "results/clock/SM", f"exp2, rsqrt, sin: {source}"),
            Result("guide_ffma_per_clock", guide["ffma"], "results/clock/SM", f"FP32 multiply-add: {source}"),
        )
        for f in FUNCTIONS:
            ratio = median[f.name] / guide["mufu" if f.name != "ffma" else "ffma"]
            outcome.add(
                Result(
                    f"{f.name}_over_guide",
                    round(ratio, 3),
                    "×",
                    "median ÷ the guide's figure (a measured rate may pass a datasheet figure: a ratio, not a share)",
                )
            )
    outcome.gate(
        "no function exceeds one warp-instruction per scheduler per clock, 128 results per clock per SM (within 1%)",
        best <= ISSUE_BOUND * PER_CLOCK_SLACK,
        f"best sample {best:.2f} results per clock per SM",
    )
    counts: dict[str, int] = {}
    for f in FUNCTIONS:
        if "sass" in raw[f.name]:
            found = results(f.name, f"{f.name}_rate", f.opcode, raw[f.name]["sass"])
            outcome.add(*found)
            counts.update((f.opcode, int(str(r.value))) for r in found if r.name.endswith("_sass_count"))
    if len(counts) == len(FUNCTIONS):
        outcome.gate(
            "each kernel's SASS holds the instruction it times, once per unrolled step",
            all(n >= BODY for n in counts.values()),
            ", ".join(f"{op} {n}" for op, n in counts.items()) + f"; {BODY} steps unrolled",
        )
    return outcome
