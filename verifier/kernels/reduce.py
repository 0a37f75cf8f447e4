"""A block's sum in CUDA C++, for kernels that check what they read by its total.

Every warp folds its lanes with shuffles, the warps' totals meet in shared memory, and warp 0
folds those: thread 0 of the block holds the block's sum (in double, exact for the counts the
experiments add). Every thread of the block must call it (it has a barrier).
"""

BLOCK_SUM_SOURCE = r"""
__device__ double block_sum(double acc) {
    __shared__ double part[32];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = acc;
    __syncthreads();
    acc = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.0;
    if (threadIdx.x < 32)
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    return acc;
}
"""
