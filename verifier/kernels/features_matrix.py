"""The matrix features of the instruction-availability table: ldmatrix and stmatrix, mma.sync of
each input type, wgmma and tcgen05 (the memory and synchronisation features are in features.py)."""

from __future__ import annotations

from verifier.kernels.feature import Feature


def _mma(ptx: str, a: int, b: int, acc: int, acc_type: str = "float", acc_reg: str = "f", in_reg: str = "r") -> str:
    """A warp's one mma.sync: a, b, acc registers per lane for A, B and C/D (PTX ISA fragments)."""
    d = ", ".join(f"%{i}" for i in range(acc))
    regs_a = ", ".join(f"%{acc + i}" for i in range(a))
    regs_b = ", ".join(f"%{acc + a + i}" for i in range(b))
    regs_c = ", ".join(f"%{acc + a + b + i}" for i in range(acc))
    outs = ", ".join(f'"={acc_reg}"(d[{i}])' for i in range(acc))
    ins = ", ".join(
        [f'"{in_reg}"(x[{i}])' for i in range(a)]
        + [f'"{in_reg}"(x[{i}])' for i in range(b)]
        + [f'"{acc_reg}"(c[{i}])' for i in range(acc)]
    )
    operand = "double" if in_reg == "d" else "unsigned int"
    return f"""
extern "C" __global__ void k({acc_type}* out, const {operand}* in) {{
    {operand} x[4]; {acc_type} c[4], d[4];
    for (int i = 0; i < 4; ++i) {{ x[i] = in[threadIdx.x * 4 + i]; c[i] = ({acc_type})i; }}
    asm volatile("{ptx} {{{d}}}, {{{regs_a}}}, {{{regs_b}}}, {{{regs_c}}};" : {outs} : {ins});
    for (int i = 0; i < {acc}; ++i) out[threadIdx.x * 4 + i] = d[i];
}}"""


MATRIX: tuple[Feature, ...] = (
    Feature(
        "ldmatrix",
        "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
        "a warp loads an 8×8 matrix of 16-bit values from shared memory into registers",
        "tensor-core",
        r"""
extern "C" __global__ void k(unsigned int* out) {
    __shared__ __align__(16) unsigned short tile[64];
    tile[threadIdx.x % 64] = threadIdx.x;
    __syncwarp();
    unsigned int r;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];"
                 : "=r"(r) : "r"(SMEM(&tile[(threadIdx.x % 8) * 8])));
    out[threadIdx.x] = r;
}""",
    ),
    Feature(
        "stmatrix",
        "stmatrix.sync.aligned.m8n8.x1.shared.b16",
        "a warp stores an 8×8 matrix of 16-bit values from registers to shared memory",
        "tensor-core",
        r"""
extern "C" __global__ void k(unsigned int* out) {
    __shared__ __align__(16) unsigned short tile[64];
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};"
                 :: "r"(SMEM(&tile[(threadIdx.x % 8) * 8])), "r"(threadIdx.x) : "memory");
    __syncwarp();
    out[threadIdx.x] = tile[threadIdx.x % 64];
}""",
    ),
    Feature(
        "mma-f16",
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",
        "warp matrix multiply-accumulate, FP16 inputs, FP32 accumulator",
        "tensor-core",
        _mma("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 2, 1, 4),
    ),
    Feature(
        "mma-bf16",
        "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32",
        "warp matrix multiply-accumulate, BF16 inputs, FP32 accumulator",
        "tensor-core",
        _mma("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", 2, 1, 4),
    ),
    Feature(
        "mma-tf32",
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        "warp matrix multiply-accumulate, TF32 inputs, FP32 accumulator",
        "tensor-core",
        _mma("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 4, 2, 4),
    ),
    Feature(
        "mma-e4m3",
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
        "warp matrix multiply-accumulate, FP8 E4M3 inputs, FP32 accumulator",
        "tensor-core",
        _mma("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", 4, 2, 4),
    ),
    Feature(
        "mma-e5m2",
        "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32",
        "warp matrix multiply-accumulate, FP8 E5M2 inputs, FP32 accumulator",
        "tensor-core",
        _mma("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", 4, 2, 4),
    ),
    Feature(
        "mma-e3m2",
        "mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f32.e3m2.e3m2.f32",
        "warp matrix multiply-accumulate, FP6 E3M2 inputs, FP32 accumulator",
        "tensor-core",
        _mma("mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f32.e3m2.e3m2.f32", 4, 2, 4),
    ),
    Feature(
        "mma-e2m1",
        "mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f32.e2m1.e2m1.f32",
        "warp matrix multiply-accumulate, FP4 E2M1 inputs, FP32 accumulator",
        "tensor-core",
        _mma("mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f32.e2m1.e2m1.f32", 4, 2, 4),
    ),
    Feature(
        "mma-s8",
        "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32",
        "warp matrix multiply-accumulate, INT8 inputs, INT32 accumulator",
        "tensor-core",
        _mma("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32", 1, 1, 2, acc_type="int", acc_reg="r"),
    ),
    Feature(
        "mma-f64",
        "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",
        "warp matrix multiply-accumulate, FP64 inputs and accumulator",
        "tensor-core",
        _mma("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", 1, 1, 2, acc_type="double", acc_reg="d", in_reg="d"),
    ),
    Feature(
        "wgmma",
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16",
        "warpgroup matrix multiply-accumulate, operands in shared memory by descriptor",
        "warpgroup",
        r"""
extern "C" __global__ void k(float* out, unsigned long long a, unsigned long long b) {
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "l"(a), "l"(b));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = d[i];
}""",
    ),
    Feature(
        "tcgen05-alloc",
        "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
        "a warp allocates tensor memory (and frees it)",
        "tensor-memory",
        r"""
extern "C" __global__ void k(unsigned int* out) {
    __shared__ unsigned int taddr;
    if (threadIdx.x < 32) {
        asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;"
                     :: "r"(SMEM(&taddr)) : "memory");
        asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
    }
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    __syncthreads();
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    unsigned int address = taddr;
    if (threadIdx.x == 0) out[0] = address;
    if (threadIdx.x < 32) asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;"
                                       :: "r"(address) : "memory");
}""",
    ),
    Feature(
        "tcgen05-mma",
        "tcgen05.mma.cta_group::1.kind::f16",
        "one thread issues a matrix multiply-accumulate into tensor memory",
        "tensor-memory",
        r"""
extern "C" __global__ void k(unsigned int* out, unsigned long long a, unsigned long long b,
                             unsigned int idesc, unsigned int taddr) {
    if (threadIdx.x == 0) {
        asm volatile("{ .reg .pred p; setp.ne.u32 p, %4, 0; tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p; }"
                     :: "r"(taddr), "l"(a), "l"(b), "r"(idesc), "r"(out[1]) : "memory");
        asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"
                     :: "l"(out) : "memory");
    }
    out[threadIdx.x + 2] = threadIdx.x;
}""",
    ),
)
