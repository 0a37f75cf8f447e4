"""The roofline experiment's kernel: a float4 stream with F fused multiply-adds per float4 loaded.

roof_f<F> reads each float4 of the buffer once (two independent 16-byte loads a loop turn per
thread, `ld.global.nc.v4.f32` in asm volatile so no component is dropped; four would not fit the
32 registers a thread may use at 2048 threads per SM without spilling) and feeds each into F
FMAs on CHAINS independent chains; where F < 4, the components no FMA uses are XORed into a word
the thread writes too. `expected` recomputes what a thread writes on the CPU (each fused step in
float64, rounded to float32), and `words` what `fill` put in the buffer.
"""

from __future__ import annotations

from typing import Any

from verifier.gpu import PROBE_SOURCE

FMAS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
"""FMAs per float4 loaded: 2F FLOP per 16 bytes, 1/8 to 64 FLOP per byte."""
CHAINS, LOADS, CHUNK = 8, 2, 128
"""Independent FMA chains per thread, float4 loads in flight per loop turn, and FMAs unrolled per
inner loop turn where F is larger (F = 256 and 512 loop over chunks of 128)."""
BLOCK, BLOCKS_PER_SM = 256, 8
A = 0.99999
"""acc -> acc·A + x: every step still shows after the thousands each chain takes."""
FILL_HASH = 2654435761

SOURCE = PROBE_SOURCE + (
    rf"""
__device__ __forceinline__ float4 load_nc(const float4* p) {{
    float4 v;
    asm volatile("ld.global.nc.v4.f32 {{%0,%1,%2,%3}}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}}

// Word w of the buffer: the top 12 bits of w × {FILL_HASH} mod 2^32, over 4096: exact floats in [0, 1).
extern "C" __global__ void fill(float* p, unsigned long long n) {{
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long w = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; w < n; w += step)
        p[w] = (float)(((unsigned int)w * {FILL_HASH}u) >> 20) * (1.0f / 4096.0f);
}}

// Thread t reads float4 (it·{LOADS} + u)·T + t for every turn it and slot u (T threads): coalesced, each
// float4 once. Each float4 feeds F FMAs: FMA j of slot u goes to chain (u·F + j) mod {CHAINS}, adding
// component j mod 4.
template <int F>
__device__ void roof(const float4* in, unsigned int iters, float a, float* out, unsigned long long* probe) {{
    ProbeMark mark = probe_begin(probe);
    const unsigned long long T = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    float acc[{CHAINS}];
    #pragma unroll
    for (int c = 0; c < {CHAINS}; ++c) acc[c] = (float)(t % 4096) * 1e-4f + (float)c * 0.125f;
    unsigned int touch = 0u;
    #pragma unroll 1
    for (unsigned int it = 0; it < iters; ++it) {{
        float4 v[{LOADS}];
        #pragma unroll
        for (int u = 0; u < {LOADS}; ++u) v[u] = load_nc(in + ((unsigned long long)it * {LOADS} + u) * T + t);
        #pragma unroll
        for (int u = 0; u < {LOADS}; ++u) {{
            const float x[4] = {{v[u].x, v[u].y, v[u].z, v[u].w}};
            if (F < 4) {{
                #pragma unroll
                for (int k = (F < 4 ? F : 4); k < 4; ++k) touch ^= __float_as_uint(x[k]);
            }}
            if (F <= {CHUNK}) {{
                #pragma unroll
                for (int j = 0; j < F; ++j) {{
                    const int c = (u * F + j) % {CHAINS};
                    acc[c] = fmaf(acc[c], a, x[j % 4]);
                }}
            }} else {{
                #pragma unroll 1
                for (int r = 0; r < F / {CHUNK}; ++r) {{
                    #pragma unroll
                    for (int j = 0; j < {CHUNK}; ++j) acc[j % {CHAINS}] = fmaf(acc[j % {CHAINS}], a, x[j % 4]);
                }}
            }}
        }}
    }}
    float s = 0.0f;
    #pragma unroll
    for (int c = 0; c < {CHAINS}; ++c) s += acc[c];
    out[t] = s;
    if (F < 4) out[T + t] = __uint_as_float(touch);
    probe_end(probe, mark);
}}
"""
    + "".join(
        f'extern "C" __global__ void __launch_bounds__({BLOCK}, {BLOCKS_PER_SM}) roof_f{f}(const float4* in, '
        f"unsigned int iters, float a, float* out, unsigned long long* probe) {{\n"
        f"    roof<{f}>(in, iters, a, out, probe);\n}}\n"
        for f in FMAS
    )
)


def words(index: Any) -> Any:
    """The buffer's floats at these word indices, as fill writes them."""
    import numpy as np

    hashed = (np.asarray(index, dtype=np.uint64) * FILL_HASH) % (1 << 32)
    return ((hashed >> 20).astype(np.float32) / np.float32(4096)).astype(np.float32)


def expected(threads: tuple[int, ...], fmas: int, iters: int, total: int) -> tuple[Any, Any]:
    """(sums, touch words) that roof<fmas> writes for these threads of a grid of `total` threads."""
    import numpy as np

    f32, f64 = np.float32, np.float64
    t = np.array(threads, dtype=np.int64)
    acc = ((t % 4096)[:, None].astype(f64) * float(f32(1e-4)) + np.arange(CHAINS)[None, :] * 0.125).astype(f32)
    a = float(f32(A))
    touch = np.zeros(len(threads), dtype=np.uint32)
    for it in range(iters):
        for u in range(LOADS):
            x = words(((it * LOADS + u) * total + t)[:, None] * 4 + np.arange(4)[None, :]).reshape(len(t), 4)
            for k in range(min(fmas, 4), 4):
                touch ^= x[:, k].view(np.uint32)
            if fmas >= CHAINS:  # chain c takes component c mod 4 at every step (CHAINS is a multiple of 4)
                comp = x[:, np.arange(CHAINS) % 4].astype(f64)
                for _ in range(fmas // CHAINS):
                    acc = (acc.astype(f64) * a + comp).astype(f32)
            else:  # one step each on chains (u·F + j) mod CHAINS, j < F
                chains = (u * fmas + np.arange(fmas)) % CHAINS
                acc[:, chains] = (acc[:, chains].astype(f64) * a + x[:, np.arange(fmas) % 4]).astype(f32)
    sums = np.zeros(len(threads), dtype=f32)
    for c in range(CHAINS):
        sums = (sums + acc[:, c]).astype(f32)
    return sums, touch
