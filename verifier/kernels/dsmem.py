"""The distributed-shared-memory experiment's kernels: blocks of a thread block cluster reading
one another's shared memory (mapa + ld.shared::cluster) against their own (ld.shared).

Each block is given more than half an SM's shared memory (SHARED_BYTES), so no two blocks share
an SM and a read of the next block's memory always leaves the SM; each block records its %smid
and the reader reads the target's back, to show it. Every kernel writes its shared memory, then
`barrier.cluster.arrive.release` + `barrier.cluster.wait.acquire` (every block of the cluster has
written before any block reads), reads, and passes the same cluster barrier again before it
exits: a block's shared memory ends with the block, so none may exit while another still reads
it.

- dsmem_latency (one warp a block): lane 0 chases a ring of RING words with stride STRIDE,
  STEPS dependent loads, timed with clock64, three times: in its own shared memory with
  ld.shared (ring of shared::cta addresses), in its own through the cluster window
  (ld.shared::cluster on its own rank's addresses), and in the next block's (rank + 1 mod the
  cluster size), whose ring holds shared::cluster addresses: each chase is one load per step,
  no arithmetic between. Then the warp checks every word of the target's ring and of its tag
  region against what the target must have written.
- dsmem_read (BW_BLOCK threads): every thread reads 16-byte words of one BW_BYTES buffer,
  PASSES times, UNROLL loads in flight, either its own block's (ld.shared.v4) or the next
  block's (ld.shared::cluster.v4); clock64 around the loop (after a block barrier) and a
  checksum the CPU recomputes for the block it read.
"""

from verifier.gpu import PROBE_SOURCE
from verifier.targets import Needs

SHARED_BYTES = 120 * 1024
"""Dynamic shared memory per block: over half of an SM's 228 KiB, so one block per SM."""
RING, STRIDE, STEPS = 1024, 97, 4096
"""Chase ring of 1024 words, stepping 97 words (coprime: one cycle through all), 4096 loads."""
TAGS = 2048
"""Tag words each block writes (word(rank, j)), checked by its reader."""
OUT_WORDS = 10
"""Per block of dsmem_latency: local, self and remote cycles, mismatches, cluster size, rank,
smid, target's smid, chase-end flags (bit 0 local, 1 self, 2 remote), cluster id."""
BW_BLOCK, BW_BYTES, PASSES, UNROLL = 1024, 64 * 1024, 512, 4
"""dsmem_read: 1024 threads read a 64 KiB buffer 512 times, 4 loads in flight per thread."""
MULT = 2654435761
"""word(rank, j) = ((j ^ (rank << 20)) × MULT) mod 2^32."""

NEEDS = Needs("thread block clusters (%cluster_ctarank)", least=90)
"""Checked by make kernels against NVRTC (verifier/targets.py)."""


SOURCE = (
    PROBE_SOURCE
    + f"""
#define RING {RING}
#define STRIDE {STRIDE}
#define TAGS {TAGS}
#define OUT_WORDS {OUT_WORDS}
#define BW_BLOCK {BW_BLOCK}
#define BW_VEC {BW_BYTES // 16}
#define UNROLL {UNROLL}
#define MULT {MULT}u
"""
    + r"""
__device__ __forceinline__ unsigned word(unsigned rank, unsigned j) { return (j ^ (rank << 20)) * MULT; }
__device__ __forceinline__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
#define SPECIAL(name, reg) \
    __device__ __forceinline__ unsigned name() { unsigned r; asm volatile("mov.u32 %0, " reg ";" : "=r"(r)); return r; }
SPECIAL(cluster_rank, "%%cluster_ctarank")
SPECIAL(cluster_size, "%%cluster_nctarank")
SPECIAL(cluster_id, "%%clusterid.x")
SPECIAL(sm_id, "%%smid")
// The address in the cluster's shared window of what sits at shared::cta address a in block `rank`.
__device__ __forceinline__ unsigned map_to(unsigned a, unsigned rank) {
    unsigned r; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank)); return r;
}
__device__ __forceinline__ unsigned ld_cluster(unsigned a) {
    unsigned v; asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory"); return v;
}
// Every thread of every block of the cluster: writes before it are seen by reads after it.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ unsigned long long chase_cta(unsigned& a, int steps) {
    long long t0 = clock64();
    #pragma unroll 16
    for (int s = 0; s < steps; ++s) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a) :: "memory");
    return (unsigned long long)(clock64() - t0);
}
__device__ __forceinline__ unsigned long long chase_cluster(unsigned& a, int steps) {
    long long t0 = clock64();
    #pragma unroll 16
    for (int s = 0; s < steps; ++s) asm volatile("ld.shared::cluster.u32 %0, [%0];" : "+r"(a) :: "memory");
    return (unsigned long long)(clock64() - t0);
}

extern "C" __global__ void __launch_bounds__(32) dsmem_latency(int steps, unsigned long long* out) {
    extern __shared__ __align__(16) unsigned sm[];
    unsigned* ring_cta = sm;          // shared::cta addresses of the next word
    unsigned* ring_cl = sm + RING;    // shared::cluster addresses of the next word
    unsigned* tag = sm + 2 * RING;    // word(rank, j); tag[TAGS] is this block's %smid
    const unsigned rank = cluster_rank(), n = cluster_size(), lane = threadIdx.x;
    for (unsigned i = lane; i < RING; i += 32) {
        ring_cta[i] = smem_u32(ring_cta + (i + STRIDE) % RING);
        ring_cl[i] = map_to(smem_u32(ring_cl + (i + STRIDE) % RING), rank);
    }
    for (unsigned j = lane; j < TAGS; j += 32) tag[j] = word(rank, j);
    if (lane == 0) tag[TAGS] = sm_id();
    cluster_sync();  // before any remote read: every block's memory is written
    const unsigned target = (rank + 1) % n;
    unsigned long long* o = out + (unsigned long long)blockIdx.x * OUT_WORDS;
    if (lane == 0) {
        const unsigned end = (unsigned)(((unsigned long long)steps * STRIDE) % RING);
        unsigned a = smem_u32(ring_cta), flags = 0;
        o[0] = chase_cta(a, steps);
        flags |= (a == smem_u32(ring_cta + end)) ? 1u : 0u;
        a = map_to(smem_u32(ring_cl), rank);
        o[1] = chase_cluster(a, steps);
        flags |= (a == map_to(smem_u32(ring_cl + end), rank)) ? 2u : 0u;
        a = map_to(smem_u32(ring_cl), target);
        o[2] = chase_cluster(a, steps);
        flags |= (a == map_to(smem_u32(ring_cl + end), target)) ? 4u : 0u;
        o[8] = flags;
    }
    __syncwarp();  // the other lanes wait here: nothing of theirs runs beside lane 0's timed chases
    unsigned bad = 0;
    for (unsigned j = lane; j < TAGS; j += 32) bad += ld_cluster(map_to(smem_u32(tag + j), target)) != word(target, j);
    for (unsigned i = lane; i < RING; i += 32) {
        unsigned want = map_to(smem_u32(ring_cl + (i + STRIDE) % RING), target);
        bad += ld_cluster(map_to(smem_u32(ring_cl + i), target)) != want;
    }
    unsigned their_sm = ld_cluster(map_to(smem_u32(tag + TAGS), target));
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) bad += __shfl_xor_sync(0xffffffffu, bad, off);
    cluster_sync();  // after the remote reads: no block exits while another reads its memory
    if (lane == 0) {
        o[3] = bad; o[4] = n; o[5] = rank; o[6] = sm_id(); o[7] = their_sm; o[9] = cluster_id();
    }
}

extern "C" __global__ void __launch_bounds__(BW_BLOCK) dsmem_read(int passes, int remote, unsigned* sums,
        unsigned long long* cycles, unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    extern __shared__ __align__(16) uint4 buf[];
    __shared__ unsigned partial[BW_BLOCK / 32];
    const unsigned rank = cluster_rank(), n = cluster_size();
    for (unsigned q = threadIdx.x; q < BW_VEC; q += BW_BLOCK)
        buf[q] = make_uint4(word(rank, 4 * q), word(rank, 4 * q + 1), word(rank, 4 * q + 2), word(rank, 4 * q + 3));
    cluster_sync();  // before any remote read: every block's buffer is written
    const unsigned target = remote ? (rank + 1) % n : rank;
    const unsigned base = remote ? map_to(smem_u32(buf), target) : smem_u32(buf);
    __syncthreads();
    long long t0 = clock64();
    unsigned acc = 0;
    for (int p = 0; p < passes; ++p) {
        for (unsigned q = threadIdx.x; q < BW_VEC; q += BW_BLOCK * UNROLL) {
            uint4 v[UNROLL];
            #pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                unsigned a = base + 16 * (q + u * BW_BLOCK);
                if (remote)
                    asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];"
                                 : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "r"(a) : "memory");
                else
                    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                                 : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "r"(a) : "memory");
            }
            #pragma unroll
            for (int u = 0; u < UNROLL; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
        }
    }
    __syncthreads();
    long long t1 = clock64();
    cluster_sync();  // after the remote reads: no block exits while another reads its memory
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned total = 0;
        for (int w = 0; w < BW_BLOCK / 32; ++w) total += partial[w];
        sums[blockIdx.x] = total;
        cycles[blockIdx.x] = (unsigned long long)(t1 - t0);
    }
    probe_end(probe, mark);
}
"""
)


def word(rank: int, j: int) -> int:
    """What block `rank` writes at word j (the kernels' word())."""
    return ((j ^ (rank << 20)) * MULT) % 2**32


def read_sum(rank: int, passes: int = PASSES) -> int:
    """dsmem_read's checksum of block rank's buffer: passes × the sum of its words, mod 2^32."""
    return passes * sum(word(rank, j) for j in range(BW_BYTES // 4)) % 2**32
