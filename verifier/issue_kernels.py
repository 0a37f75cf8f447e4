"""The kernels of instruction-latency and what they compute, on the CPU: one warp's dependent
FFMA and IMAD chains timed with clock64, and the issue-rate kernels (one block per SM, C independent
FMA chains per thread) that verifier/sm_rate.py times. instruction-latency names this module in
USES, so a change here makes its measurements stale. numpy is imported by the functions that use it.
"""

from __future__ import annotations

from typing import Any

from verifier.gpu import PROBE_SOURCE
from verifier.sm_rate import BLOCK_TIMER_SOURCE

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

LAT_UNROLL, LAT_ITERS, SEGMENTS = 256, 32, 8
A, B = 0.99999, 1e-5
"""x -> x·A + B shrinks x - 1 by A per step: every step still shows at the end of the chain."""
C_IMAD = 0x9E3779B9
CHAINS = (1, 2, 4)
BODY, ITERS = 256, 128


def _issue_kernel(chains: int) -> str:
    return rf"""
extern "C" __global__ void __launch_bounds__(1024, 1) fma_issue_{chains}(float* out, unsigned long long* blocks,
        int iters, float a, float b, unsigned long long* probe) {{
    ProbeMark mark = probe_begin(probe);
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float x[{chains}];
    #pragma unroll
    for (int c = 0; c < {chains}; ++c) x[c] = __fmaf_rn((float)(t % 4096), 1e-4f, (float)c * 0.125f);
    long long start = block_start();
    #pragma unroll 1
    for (int i = 0; i < iters; ++i) {{
        #pragma unroll
        for (int u = 0; u < {BODY // chains}; ++u) {{
            #pragma unroll
            for (int c = 0; c < {chains}; ++c) x[c] = fmaf(x[c], a, b);
        }}
    }}
    block_stop(blocks, start);
    #pragma unroll
    for (int c = 0; c < {chains}; ++c) out[t * {chains} + c] = x[c];
    probe_end(probe, mark);
}}
"""


def _chain_kernel(name: str, kind: str, start: str, step: str, params: str) -> str:
    return rf"""
extern "C" __global__ void {name}({kind}* out, unsigned long long* log, int iters, int segments, {params}) {{
    // One warp. log[0]: clock64 cycles of the launch, log[1]: its %globaltimer ns, log[2 + s]: the
    // cycles of segment s (segment 0 warms the instruction caches).
    {kind} x = {start};
    long long c0 = sm_clock();
    unsigned long long n0 = probe_ns();
    for (int s = 0; s < segments; ++s) {{
        long long t0 = sm_clock();
        #pragma unroll 1
        for (int i = 0; i < iters; ++i) {{
            #pragma unroll
            for (int u = 0; u < {LAT_UNROLL}; ++u) {step}
        }}
        long long t1 = sm_clock();
        if (threadIdx.x == 0) log[2 + s] = (unsigned long long)(t1 - t0);
    }}
    long long c1 = sm_clock();
    unsigned long long n1 = probe_ns();
    if (threadIdx.x == 0) {{ log[0] = (unsigned long long)(c1 - c0); log[1] = n1 - n0; }}
    out[threadIdx.x] = x;
}}
"""


SOURCE = (
    PROBE_SOURCE
    + BLOCK_TIMER_SOURCE
    + _chain_kernel(
        "fma_chain",
        "float",
        "1.0f + (float)threadIdx.x * 0.03125f",
        'asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));',
        "float a, float b",
    )
    + _chain_kernel(
        "imad_chain",
        "unsigned int",
        "threadIdx.x * 2654435761u + 12345u",
        'asm volatile("mad.lo.u32 %0, %0, %0, %1;" : "+r"(x) : "r"(c));',
        "unsigned int c",
    )
    + "".join(_issue_kernel(c) for c in CHAINS)
)


def lat_steps() -> int:
    """Steps each lane's chain runs in one launch (the warm segment too)."""
    return (SEGMENTS + 1) * LAT_ITERS * LAT_UNROLL


def fma_steps(starts: Any, steps: int) -> Any:
    """x -> fma(x, A, B) steps times from float32 starts, on the CPU (each step in float64, rounded)."""
    import numpy as np

    a, b = float(np.float32(A)), float(np.float32(B))
    x = np.asarray(starts, dtype=np.float32)
    for _ in range(steps):
        x = (x.astype(np.float64) * a + b).astype(np.float32)
    return x


def expected_fma_chain(steps: int | None = None) -> Any:
    """What fma_chain leaves in each of its 32 lanes (starting at 1 + lane/32) after steps (a launch's)."""
    import numpy as np

    return fma_steps(1.0 + np.arange(32) * 0.03125, lat_steps() if steps is None else steps)


def expected_imad_chain(steps: int | None = None) -> Any:
    """What imad_chain leaves in each lane: x -> x·x + C_IMAD modulo 2³², exactly, steps times."""
    import numpy as np

    mask = np.uint64(0xFFFFFFFF)
    x = (np.arange(32, dtype=np.uint64) * np.uint64(2654435761) + np.uint64(12345)) & mask
    for _ in range(lat_steps() if steps is None else steps):
        x = (x * x + np.uint64(C_IMAD)) & mask
    return x


def issue_starts(threads: list[int], chains: int) -> Any:
    """The float32 starts of fma_issue_<chains> for these threads: (t mod 4096)·1e-4f + c/8, one rounding."""
    import numpy as np

    t = np.array(threads, dtype=np.int64) % 4096
    exact = t[:, None].astype(np.float64) * float(np.float32(1e-4)) + np.arange(chains)[None, :] * 0.125
    return exact.astype(np.float32)


def checked_threads(warps: int, sms: int) -> list[int]:
    """Threads of an issue launch the CPU recomputes: lanes and warps of the first block, and the last."""
    block = 32 * warps
    return sorted({0, 1, 31, block - 1, (sms - 1) * block, sms * block - 1})
