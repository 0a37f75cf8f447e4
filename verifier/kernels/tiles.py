"""The async-copy experiment's kernels: a 2-D array of 32-bit words brought tile by tile into
shared memory three ways, and read straight into registers as the reference.

Every kernel walks the same tiles (TILE_ROWS × TILE_COLS words, row-major in the array, stored
densely row-major in shared memory: the layout a no-swizzle tensor map gives), block b taking
tiles b, b + gridDim.x, ...; after a tile lands, each thread sums VEC_PER_THREAD 16-byte words
of it that another warp's threads copied (so no thread can keep what it loaded in registers and
skip shared memory), and the block adds its sum to one 64-bit total (exact: the words are small
integers, so the CPU's sum is the gate).

- tiles_plain: each thread loads its part of STAGES tiles with ordinary loads (ld.global, into
  registers: STAGES × VEC_PER_THREAD 16-byte values each), stores them to shared memory (st.shared),
  a barrier, then the sums: the registers hold the data on its way.
- tiles_cp_async: cp.async.cg.shared.global, 16 bytes per instruction, global to shared memory
  without registers; one commit group per tile, STAGES - 1 tiles in flight while one is summed
  (cp.async.wait_group), one barrier per tile.
- tiles_tma: one thread issues one cp.async.bulk.tensor.2d per tile (the Tensor Memory
  Accelerator copies the whole box named by the tensor map and coordinates), completion counted
  in bytes on the tile's mbarrier (mbarrier.arrive.expect_tx, then try_wait.parity); STAGES
  tiles in flight, each buffer refilled once every thread has summed it (the barrier).
- tiles_direct: the reference, no shared memory: the same tiles read into registers and summed,
  STAGES tiles of loads in flight per thread.
"""

from verifier.gpu import PROBE_SOURCE
from verifier.targets import Needs

TILE_ROWS, TILE_COLS = 32, 128
"""A tile: 32 rows of 128 words (512 bytes of each row), 16 KiB."""
TILE_BYTES = TILE_ROWS * TILE_COLS * 4
BLOCK = 256
VEC_PER_THREAD = TILE_BYTES // 16 // BLOCK
"""16-byte words of a tile per thread (4)."""
STAGES = 4
"""Tiles in shared memory per block (64 KiB), and tiles of loads in flight in the plain and direct kernels."""
SHARED_BYTES = STAGES * TILE_BYTES + 8 * STAGES
"""Dynamic shared memory per block: the tile buffers, then one 8-byte mbarrier per buffer (TMA)."""

NEEDS = Needs("cp.async and TMA bulk copies, in one source", least=90)
"""Checked by make kernels against NVRTC (verifier/targets.py)."""


SOURCE = (
    PROBE_SOURCE
    + f"""
#define TILE_ROWS {TILE_ROWS}
#define TILE_COLS {TILE_COLS}
#define TILE_BYTES {TILE_BYTES}
#define TILE_VEC {TILE_BYTES // 16}
#define BLOCK {BLOCK}
#define VPT {VEC_PER_THREAD}
#define STAGES {STAGES}
"""
    + r"""
// CUtensorMap as the kernel receives it: 128 opaque bytes, 64-byte aligned (no cuda.h in NVRTC).
struct __align__(64) TensorMap { unsigned long long opaque[16]; };

__device__ __forceinline__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
// Tile t's first word: tile row t / tiles_per_row, tile column t % tiles_per_row.
__device__ __forceinline__ unsigned long long tile_origin(int t, int tiles_per_row, int cols) {
    return (unsigned long long)(t / tiles_per_row) * TILE_ROWS * cols
           + (unsigned long long)(t % tiles_per_row) * TILE_COLS;
}
// The first 16-byte word of tile number i of this block (its tiles: blockIdx.x + i × gridDim.x).
__device__ __forceinline__ const uint4* tile_start(const uint4* a, int i, int per_row, int cols) {
    return a + tile_origin(blockIdx.x + i * gridDim.x, per_row, cols) / 4;
}
// 16-byte word q of a tile (0 .. TILE_VEC-1): row q / 32, words 4·(q % 32) .. +3 of that row.
__device__ __forceinline__ unsigned long long vec_offset(int q, int cols) {
    return (unsigned long long)(q / (TILE_COLS / 4)) * cols + (q % (TILE_COLS / 4)) * 4;
}
// The consumer: each thread sums VPT 16-byte words of the tile that the next warp copied.
__device__ __forceinline__ unsigned long long sum_tile(const uint4* tile) {
    unsigned long long acc = 0;
    #pragma unroll
    for (int k = 0; k < VPT; ++k) {
        uint4 v = tile[k * BLOCK + ((threadIdx.x + 32) & (BLOCK - 1))];
        acc += (unsigned long long)v.x + v.y + v.z + v.w;
    }
    return acc;
}
__device__ __forceinline__ void add_total(unsigned long long acc, unsigned long long* total) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(total, acc);
}
__device__ __forceinline__ int my_tiles(int tiles) {
    return tiles > (int)blockIdx.x ? (tiles - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x : 0;
}

extern "C" __global__ void __launch_bounds__(BLOCK) tiles_plain(const uint4* a, int cols, int tiles,
        unsigned long long* total, unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    extern __shared__ __align__(1024) unsigned char smem[];
    uint4* buf = reinterpret_cast<uint4*>(smem);
    const int count = my_tiles(tiles), per_row = cols / TILE_COLS;
    unsigned long long acc = 0;
    for (int i = 0; i < count; i += STAGES) {
        uint4 r[STAGES][VPT];
        #pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            if (i + s < count) {
                const uint4* src = tile_start(a, i + s, per_row, cols);
                #pragma unroll
                for (int k = 0; k < VPT; ++k) r[s][k] = src[vec_offset(k * BLOCK + threadIdx.x, cols) / 4];
            } else {
                #pragma unroll
                for (int k = 0; k < VPT; ++k) r[s][k] = make_uint4(0u, 0u, 0u, 0u);
            }
        }
        #pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            #pragma unroll
            for (int k = 0; k < VPT; ++k) buf[s * TILE_VEC + k * BLOCK + threadIdx.x] = r[s][k];
        }
        __syncthreads();
        #pragma unroll
        for (int s = 0; s < STAGES; ++s) if (i + s < count) acc += sum_tile(buf + s * TILE_VEC);
        __syncthreads();
    }
    add_total(acc, total);
    probe_end(probe, mark);
}

__device__ __forceinline__ void cp_async_tile(uint4* dst, const uint4* src, int cols) {
    #pragma unroll
    for (int k = 0; k < VPT; ++k) {
        int q = k * BLOCK + threadIdx.x;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"
                     :: "r"(smem_u32(dst + q)), "l"(src + vec_offset(q, cols) / 4) : "memory");
    }
}
extern "C" __global__ void __launch_bounds__(BLOCK) tiles_cp_async(const uint4* a, int cols, int tiles,
        unsigned long long* total, unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    extern __shared__ __align__(1024) unsigned char smem[];
    uint4* buf = reinterpret_cast<uint4*>(smem);
    const int count = my_tiles(tiles), per_row = cols / TILE_COLS;
    #pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < count) cp_async_tile(buf + s * TILE_VEC, tile_start(a, s, per_row, cols), cols);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    unsigned long long acc = 0;
    for (int i = 0; i < count; ++i) {
        asm volatile("cp.async.wait_group %0;\n" :: "n"(STAGES - 2) : "memory");  // tile i has landed
        __syncthreads();  // ...for every thread's part, and every thread has summed tile i - 1
        int next = i + STAGES - 1;
        if (next < count)
            cp_async_tile(buf + (next % STAGES) * TILE_VEC, tile_start(a, next, per_row, cols), cols);
        asm volatile("cp.async.commit_group;\n" ::: "memory");  // empty groups keep the count
        acc += sum_tile(buf + (i % STAGES) * TILE_VEC);
    }
    add_total(acc, total);
    probe_end(probe, mark);
}

__device__ __forceinline__ void tma_tile(unsigned dst, const TensorMap* map, unsigned bar, int c0, int c1) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "n"(TILE_BYTES) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n"
                 :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    unsigned done = 0;
    while (!done) {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    }
}
extern "C" __global__ void __launch_bounds__(BLOCK) tiles_tma(const __grid_constant__ TensorMap map, int cols,
        int tiles, unsigned long long* total, unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    extern __shared__ __align__(1024) unsigned char smem[];
    const uint4* buf = reinterpret_cast<const uint4*>(smem);
    const unsigned base = smem_u32(smem), bars = base + STAGES * TILE_BYTES;
    const int count = my_tiles(tiles), per_row = cols / TILE_COLS;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" :: "r"(bars + 8 * s) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // the copy engine sees them initialised
        for (int s = 0; s < STAGES && s < count; ++s) {
            int t = blockIdx.x + s * gridDim.x;
            tma_tile(base + s * TILE_BYTES, &map, bars + 8 * s, (t % per_row) * TILE_COLS, (t / per_row) * TILE_ROWS);
        }
    }
    __syncthreads();
    unsigned long long acc = 0;
    for (int i = 0; i < count; ++i) {
        int s = i % STAGES;
        mbar_wait(bars + 8 * s, (i / STAGES) & 1);  // the s-th buffer's (i / STAGES)-th fill has landed
        acc += sum_tile(buf + s * TILE_VEC);
        __syncthreads();  // every thread has summed buffer s: it may be refilled
        if (threadIdx.x == 0 && i + STAGES < count) {
            int t = blockIdx.x + (i + STAGES) * gridDim.x;
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            tma_tile(base + s * TILE_BYTES, &map, bars + 8 * s, (t % per_row) * TILE_COLS, (t / per_row) * TILE_ROWS);
        }
    }
    add_total(acc, total);
    probe_end(probe, mark);
}

extern "C" __global__ void __launch_bounds__(BLOCK) tiles_direct(const uint4* a, int cols, int tiles,
        unsigned long long* total, unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    const int count = my_tiles(tiles), per_row = cols / TILE_COLS;
    unsigned long long acc = 0;
    for (int i = 0; i < count; i += STAGES) {
        uint4 r[STAGES][VPT];
        #pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            if (i + s < count) {
                const uint4* src = tile_start(a, i + s, per_row, cols);
                #pragma unroll
                for (int k = 0; k < VPT; ++k) r[s][k] = src[vec_offset(k * BLOCK + threadIdx.x, cols) / 4];
            } else {
                #pragma unroll
                for (int k = 0; k < VPT; ++k) r[s][k] = make_uint4(0u, 0u, 0u, 0u);
            }
        }
        #pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            #pragma unroll
            for (int k = 0; k < VPT; ++k) acc += (unsigned long long)r[s][k].x + r[s][k].y + r[s][k].z + r[s][k].w;
        }
    }
    add_total(acc, total);
    probe_end(probe, mark);
}

// Word i of the array: the top byte of i × 2654435761 mod 2^32 (Knuth's multiplicative hash).
extern "C" __global__ void tiles_fill(unsigned* a, unsigned long long n) {
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        a[i] = ((unsigned)i * 2654435761u) >> 24;
}
"""
)
