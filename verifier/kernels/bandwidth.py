"""The memory-bandwidth experiment's kernels: reads that each level serves by construction.

read_hbm loads through the read-only path (ld.global.nc) over buffers far beyond L2; read_l2 loads
with ld.global.cg (cached in L2, never in L1); read_l1 has each block re-read its own slice with
ld.global.ca. Each sums what it reads (the buffers hold 1.0f), so no load can be dropped, and
times itself with the probe (verifier/gpu.py PROBE_SOURCE).
"""

from verifier.gpu import PROBE_SOURCE
from verifier.kernels.reduce import BLOCK_SUM_SOURCE

SOURCE = (
    PROBE_SOURCE
    + BLOCK_SUM_SOURCE
    + r"""
__device__ __forceinline__ float4 load_nc(const float4* p) { return __ldg(p); }
__device__ __forceinline__ float4 load_cg(const float4* p) {
    float4 v;
    asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ float4 load_ca(const float4* p) {
    float4 v;
    asm volatile("ld.global.ca.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}

// The whole buffer, grid-stride, passes times; four independent loads in flight per thread.
template <float4 (*LOAD)(const float4*)>
__device__ void read_all(const float4* in, unsigned long long n4, unsigned int passes, double* sums,
                         unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;  // per-thread sums of 1.0f stay far below 2^24, so they are exact
    for (unsigned int pass = 0; pass < passes; ++pass) {
        for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += 4 * step) {
            #pragma unroll
            for (int u = 0; u < 4; ++u) {
                unsigned long long k = i + u * step;
                if (k < n4) { float4 v = LOAD(in + k); acc += (v.x + v.y) + (v.z + v.w); }
            }
        }
        asm volatile("" ::: "memory");  // each pass loads again: no value is reused across passes
    }
    double total = block_sum(acc);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
    probe_end(probe, mark);
}
extern "C" __global__ void read_hbm(const float4* in, unsigned long long n4, unsigned int passes, double* sums,
                                    unsigned long long* probe) { read_all<load_nc>(in, n4, passes, sums, probe); }
extern "C" __global__ void read_l2(const float4* in, unsigned long long n4, unsigned int passes, double* sums,
                                   unsigned long long* probe) { read_all<load_cg>(in, n4, passes, sums, probe); }

// Each block re-reads its own slice (slice4 float4s) passes times: L1 serves every pass but the first.
extern "C" __global__ void read_l1(const float4* in, unsigned int slice4, unsigned int passes, double* sums,
                                   unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    const float4* mine = in + (unsigned long long)blockIdx.x * slice4;
    float acc = 0.0f;
    for (unsigned int pass = 0; pass < passes; ++pass) {
        for (unsigned int i = threadIdx.x; i < slice4; i += 4 * blockDim.x) {
            #pragma unroll
            for (int u = 0; u < 4; ++u) {
                unsigned int k = i + u * blockDim.x;
                if (k < slice4) { float4 v = load_ca(mine + k); acc += (v.x + v.y) + (v.z + v.w); }
            }
        }
        asm volatile("" ::: "memory");
    }
    double total = block_sum(acc);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
    probe_end(probe, mark);
}

extern "C" __global__ void fill_pattern(unsigned int* p, unsigned long long n) {
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        p[i] = (unsigned int)i * 2654435761u;
}
"""
)
