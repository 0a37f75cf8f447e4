"""The latency-hiding experiment's kernel: DRAM reads with exactly U loads in flight per thread.

stream_u<U> reads U independent float4s per round (`ld.global.cg`, cached in L2 only, in asm
volatile so none is dropped or moved), sums them, and takes the next round's addresses from that
sum (its bits AND a zero the host passes): no load of a round can issue before every load of the
round before has returned, so each thread has U loads in flight, never more. Every thread of the
grid reads a coalesced slab of T float4s per load (T threads), from `base` on. Thread 0 of each
block records the SM it ran on (%smid) and when the block started and ended (%globaltimer), so
the host can check how many blocks each SM held and that all were resident at once. The buffer
holds 1.0f, so the block sums count the floats read.
"""

from verifier.gpu import PROBE_SOURCE
from verifier.kernels.reduce import BLOCK_SUM_SOURCE

ILP = (1, 2, 4, 8)
"""Independent 16-byte loads in flight per thread."""

SOURCE = (
    PROBE_SOURCE
    + BLOCK_SUM_SOURCE
    + r"""
__device__ __forceinline__ float4 load_cg(const float4* p) {
    float4 v;
    asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}

template <int U>
__device__ void stream(const float4* in, unsigned long long base, unsigned int rounds, unsigned int zero,
                       double* sums, unsigned long long* where, unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    const unsigned long long began = probe_ns();
    const unsigned long long T = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = base + (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;  // a thread's count of 1.0f stays below 2^24: exact
    #pragma unroll 1
    for (unsigned int r = 0; r < rounds; ++r) {
        float4 v[U];
        #pragma unroll
        for (int u = 0; u < U; ++u) v[u] = load_cg(in + i + u * T);
        float got = 0.0f;
        #pragma unroll
        for (int u = 0; u < U; ++u) got += (v[u].x + v[u].y) + (v[u].z + v[u].w);
        acc += got;
        i += U * T + (__float_as_uint(acc) & zero);  // zero is 0: the next addresses wait for every load
    }
    double total = block_sum(acc);
    if (threadIdx.x == 0) {
        unsigned int sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        sums[blockIdx.x] = total;
        where[3 * blockIdx.x] = sm;
        where[3 * blockIdx.x + 1] = began;
        where[3 * blockIdx.x + 2] = probe_ns();
    }
    probe_end(probe, mark);
}

#define STREAM(U, MIN_BLOCKS)                                                                              \
    extern "C" __global__ void __launch_bounds__(1024, MIN_BLOCKS)                                        \
    stream_u##U(const float4* in, unsigned long long base, unsigned int rounds, unsigned int zero,       \
                double* sums, unsigned long long* where, unsigned long long* probe) {                    \
        stream<U>(in, base, rounds, zero, sums, where, probe);                                            \
    }
// Two blocks of 1024 threads (64 warps) per SM need at most 32 registers a thread; eight float4s in
// flight alone take 32, so stream_u8 is built for one such block per SM.
STREAM(1, 2)
STREAM(2, 2)
STREAM(4, 2)
STREAM(8, 1)
"""
)
