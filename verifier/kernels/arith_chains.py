"""Independent multiply-add chains in four number formats, and the CPU's exact copy of each.

Four kernels of one shape (fp32_throughput's): every thread keeps CHAINS independent chains
x -> x·a + b, UNROLL steps of each per loop turn, and writes one value that folds its chains
together. FP64 is `fma()` on doubles (DFMA); FP16 and BF16 are the packed two-lane forms
`fma.rn.f16x2` and `fma.rn.bf16x2` (HFMA2, what `__hfma2` on `__half2` and `__nv_bfloat162`
compiles to), written as inline PTX because NVRTC has no <cuda_fp16.h> without the toolkit's
include directory; INT32 is `x * a + b` on unsigned ints (IMAD). a and b are kernel arguments,
so the compiler can neither fold nor strength-reduce a step.

Chain c of thread t starts at (t mod 4096) / 8192 + c / 8, exact in every format that holds
it (16-bit formats round it once, as the kernel's conversion does; the second lane of a packed
pair starts 1/16 higher); the integer chains start at 8·(t mod 4096) + c. So every thread
with the same t mod 4096 must write the same value: the experiment checks every thread against
its twin among the first 4096, and the first threads against this module's CPU copy, which
rounds each fused step once, exactly as the hardware does (fma64, round_bf16, numpy's float16).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verifier.gpu import PROBE_SOURCE

CHAINS, UNROLL, ITERS = 8, 16, 512
"""8 independent chains, 16 steps each per loop turn: 128 multiply-adds between loop branches."""
BLOCK, WAVES = 256, 32
"""fp32_throughput's grid: 32 blocks of 256 threads per SM, several full waves."""
STARTS = 4096
"""Threads t and t + 4096·k start every chain at the same value."""


@dataclass(frozen=True)
class Kind:
    name: str
    kernel: str
    mnemonics: tuple[str, ...]
    """The SASS instructions of one step (cuobjdump's mnemonics on sm_90: ptxas issues half the
    packed 16-bit steps as the .MMA form, on a second pipe)."""
    lanes: int
    """Results per thread per instruction: 2 for a packed pair."""
    a: float | int
    b: float | int
    what: str


KINDS = (
    Kind("fp64", "dfma_chains", ("DFMA",), 1, 0.99999, 1e-5, "FP64 fused multiply-add (fma on double: DFMA)"),
    Kind(
        "fp16",
        "hfma2_chains",
        ("HFMA2", "HFMA2.MMA"),
        2,
        1 - 2**-10,
        2**-10,
        "FP16 packed multiply-add (fma.rn.f16x2: HFMA2)",
    ),
    Kind(
        "bf16",
        "bf16_chains",
        ("HFMA2.BF16_V2", "HFMA2.MMA.BF16_V2"),
        2,
        1 - 2**-7,
        2**-7,
        "BF16 packed multiply-add (fma.rn.bf16x2: HFMA2.BF16)",
    ),
    Kind("int32", "imad_chains", ("IMAD",), 1, 1664525, 1013904223, "INT32 multiply-add (x * a + b on unsigned: IMAD)"),
)
"""a and b: FP64 heads for 1 slowly enough that every step shows; the 16-bit chains head for 1
too and stop where rounding holds them (within a few hundred steps); INT32 is a full-period
linear congruential generator (every step shows)."""

_LOOP = r"""
    for (int i = 0; i < iters; ++i) {
        #pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            #pragma unroll
            for (int c = 0; c < CHAINS; ++c) STEP;
        }
    }"""

SOURCE = (
    PROBE_SOURCE
    + f"#define CHAINS {CHAINS}\n#define UNROLL {UNROLL}\n"
    + r"""
__device__ __forceinline__ float start(int t, int c) {
    return (float)(t & 4095) * (1.0f / 8192.0f) + (float)c * 0.125f;
}
// Two floats to a packed pair, rounded to nearest even: lo in the low half (PTX puts the first source high).
__device__ __forceinline__ unsigned pack_f16(float lo, float hi) {
    unsigned r; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
    unsigned r; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}
__device__ __forceinline__ float2 unpack_f16(unsigned r) {
    float lo, hi;
    asm("{.reg .b16 l, h; mov.b32 {l, h}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, h;}" : "=f"(lo), "=f"(hi) : "r"(r));
    return make_float2(lo, hi);
}
__device__ __forceinline__ float2 unpack_bf16(unsigned r) {
    return make_float2(__uint_as_float(r << 16), __uint_as_float(r & 0xffff0000u));
}

extern "C" __global__ void dfma_chains(double* out, int iters, double a, double b, unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    double x[CHAINS];
    #pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = (double)start(t, c);"""
    + _LOOP.replace("STEP", "x[c] = fma(x[c], a, b)")
    + r"""
    double sum = 0.0;
    #pragma unroll
    for (int c = 0; c < CHAINS; ++c) sum += x[c];
    out[t] = sum;
    probe_end(probe, mark);
}
"""
    + "".join(
        f"""
extern "C" __global__ void {kernel}(float* out, int iters, unsigned a, unsigned b, unsigned long long* probe) {{
    ProbeMark mark = probe_begin(probe);
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x[CHAINS];
    #pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = pack_{fmt}(start(t, c), start(t, c) + 0.0625f);"""
        + _LOOP.replace("STEP", f'asm("fma.rn.{fmt}x2 %0, %0, %1, %2;" : "+r"(x[c]) : "r"(a), "r"(b))')
        + f"""
    float sum = 0.0f;
    #pragma unroll
    for (int c = 0; c < CHAINS; ++c) {{ float2 p = unpack_{fmt}(x[c]); sum += p.x; sum += p.y; }}
    out[t] = sum;
    probe_end(probe, mark);
}}
"""
        for kernel, fmt in (("hfma2_chains", "f16"), ("bf16_chains", "bf16"))
    )
    + r"""
extern "C" __global__ void imad_chains(unsigned* out, int iters, unsigned a, unsigned b, unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x[CHAINS];
    #pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = (unsigned)(t & 4095) * 8u + (unsigned)c;"""
    + _LOOP.replace("STEP", "x[c] = x[c] * a + b")
    + r"""
    unsigned sum = 0u;
    #pragma unroll
    for (int c = 0; c < CHAINS; ++c) sum += x[c];
    out[t] = sum;
    probe_end(probe, mark);
}
"""
)


def fma64(x: float, a: float, b: float) -> float:
    """x·a + b rounded once to the nearest double (ties to even), as DFMA does: the exact value
    as a ratio of integers (every double is one, over a power of two), then Python's int
    division, which rounds correctly. Python before 3.13 has no math.fma."""
    xn, xd = x.as_integer_ratio()
    an, ad = a.as_integer_ratio()
    bn, bd = b.as_integer_ratio()
    return (xn * an * bd + bn * xd * ad) / (xd * ad * bd)


def round_bf16(v: Any) -> Any:
    """float64 values rounded to the nearest bfloat16 (8 significant bits, ties to even), as
    float64: what rounding a float32 to bfloat16 does, from the exact value (normal numbers)."""
    import numpy as np

    m, e = np.frexp(np.asarray(v, dtype=np.float64))
    return np.ldexp(np.rint(m * 256.0) / 256.0, e)


def packed(kind: Kind) -> tuple[int, int]:
    """a and b of a 16-bit kind as the kernel takes them: the value in both halves of a word."""
    import numpy as np

    def bits(value: float) -> int:
        if kind.name == "fp16":
            half = int(np.array([value], dtype=np.float16).view(np.uint16)[0])
        else:
            half = int(np.array([round_bf16(value)], dtype=np.float32).view(np.uint32)[0]) >> 16
        return half | half << 16

    return bits(float(kind.a)), bits(float(kind.b))


def expected(kind: Kind, threads: tuple[int, ...], iters: int = ITERS) -> list[float] | list[int]:
    """What kind's kernel writes for these threads, on the CPU, each fused step rounded once."""
    import numpy as np

    steps = iters * UNROLL
    t = np.array(threads, dtype=np.int64)[:, None] % STARTS
    c = np.arange(CHAINS)[None, :]
    if kind.name == "int32":
        n: Any = (t * 8 + c).astype(np.uint64)
        for _ in range(steps):
            n = (n * int(kind.a) + int(kind.b)) & 0xFFFFFFFF
        return [int(v) for v in n.sum(axis=1) & 0xFFFFFFFF]
    start = t / 8192 + c * 0.125  # exact in float64 and float32
    if kind.name == "fp64":
        out = []
        for row in start.tolist():
            total = 0.0
            for v in row:
                for _ in range(steps):
                    v = fma64(v, float(kind.a), float(kind.b))
                total += v
            out.append(total)
        return out
    x = np.stack([start, start + 0.0625], axis=2)  # the pair's low and high lanes
    if kind.name == "fp16":
        a, b = float(np.float16(kind.a)), float(np.float16(kind.b))
        x = x.astype(np.float16).astype(np.float64)
        for _ in range(steps):
            x = (x * a + b).astype(np.float16).astype(np.float64)  # the exact value, rounded once
    else:
        a, b = float(round_bf16(kind.a)), float(round_bf16(kind.b))
        x = round_bf16(x)
        for _ in range(steps):
            x = round_bf16(x * a + b)
    sums = np.zeros(len(threads), dtype=np.float32)
    for chain in range(CHAINS):
        for lane in range(2):
            sums = (sums + x[:, chain, lane].astype(np.float32)).astype(np.float32)
    return [float(s) for s in sums]
