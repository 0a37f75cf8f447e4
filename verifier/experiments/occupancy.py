"""Occupancy: the CUDA occupancy API beside the count a reader would work out by hand.

For a light kernel and a register-heavy one, over block sizes × dynamic shared memory, the
driver's cuOccupancyMaxActiveBlocksPerMultiprocessor is recorded beside the NAIVE count: the
SM's limits (threads, blocks, registers, shared memory) each divided by what one block uses.
The naive count leaves out what the hardware really allocates: the shared memory the system
reserves per block, and registers given to warps in units of 256 within the SM's four
sub-partitions (cuda_occupancy.h's model). Each combination where the two differ is explained
by adding those back one at a time. The kernels are loaded, never launched: nothing is timed.
"""

from __future__ import annotations

from pathlib import Path

from cudagloss.model.measurement import Result
from verifier.cuda import CudaError, Device, check
from verifier.experiment import Outcome
from verifier.gpu import opened

ID = "occupancy"
PURPOSE = "The occupancy API over block sizes × dynamic shared memory × two kernels, beside the naive count"
USES = ("gpu.py",)

BLOCKS = (32, 64, 128, 256, 512, 1024)
SHARED_KIB = (0, 4, 12, 48, 100)
DEFAULT_DYNAMIC_LIMIT = 48 * 1024
"""Above this a kernel must opt in (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)."""
REGISTER_UNIT, SUB_PARTITIONS = 256, 4
"""Registers go to a warp in multiples of 256, from one of the SM's 4 sub-partitions (compute
capability 7.0 and later, per cuda_occupancy.h); the naive count ignores both."""
HEAVY_ACCUMULATORS = 112
"""Live floats per thread in the heavy kernel: ptxas (NVRTC 13.0, sm_90) gives it 119 registers."""

SOURCE = f"""
#define ACC {HEAVY_ACCUMULATORS}
extern "C" __global__ void light(float* out, const float* in, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i] + 1.0f;
}}
extern "C" __global__ void heavy(float* out, const float* in, int n, int rounds) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[i % n];
    float acc[ACC];  // every element live across the loop: held in registers, not local memory
#pragma unroll
    for (int k = 0; k < ACC; ++k) acc[k] = x * (k + 1);
    for (int r = 0; r < rounds; ++r) {{
#pragma unroll
        for (int k = 0; k < ACC; ++k) acc[k] = fmaf(acc[k], acc[(k + 1) % ACC], x);
    }}
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < ACC; ++k) sum += acc[k];
    if (i < n) out[i] = sum;
}}
"""
KERNELS = ("light", "heavy")
CAUSES = ("reserved shared memory", "register allocation", "both", "unexplained")
LIMITS = {
    "warp_size": "WARP_SIZE",
    "max_threads_per_sm": "MAX_THREADS_PER_MULTIPROCESSOR",
    "max_blocks_per_sm": "MAX_BLOCKS_PER_MULTIPROCESSOR",
    "registers_per_sm": "MAX_REGISTERS_PER_MULTIPROCESSOR",
    "registers_per_block": "MAX_REGISTERS_PER_BLOCK",
    "shared_memory_per_sm": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    "shared_memory_per_block_optin": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    "reserved_shared_memory_per_block": "RESERVED_SHARED_MEMORY_PER_BLOCK",
}
FUNCTION = {
    "registers_per_thread": ("NUM_REGS", "registers/thread", "registers per thread"),
    "static_shared_memory": ("SHARED_SIZE_BYTES", "bytes", "static shared memory per block"),
    "local_memory": ("LOCAL_SIZE_BYTES", "bytes", "local memory per thread, 0 when nothing spills"),
    "max_threads_per_block": ("MAX_THREADS_PER_BLOCK", "threads/block", "largest block it can be launched with"),
}
"""Each kernel's cuFuncGetAttribute values: result suffix -> (CU_FUNC_ATTRIBUTE_ suffix, unit, what)."""
NAIVE = (
    "naive count: min of the SM's threads, blocks, registers and shared memory, each ÷ one block's use "
    "(no shared memory reservation, no register allocation granularity)"
)


def combo(kernel: str, block: int, kib: int) -> str:
    return f"{kernel}_b{block}_s{kib}k"


def combinations(kernels: dict[str, dict[str, int]], attrs: dict[str, int]) -> list[tuple[str, int, int]]:
    """Every (kernel, block, KiB) whose shared memory fits the per-block opt-in limit."""
    return [
        (k, b, s)
        for k in KERNELS
        for s in SHARED_KIB
        for b in BLOCKS
        if kernels[k]["static_shared_memory"] + s * 1024 <= attrs["shared_memory_per_block_optin"]
    ]


def count(attrs: dict[str, int], fn: dict[str, int], block: int, dynamic: int, reserve: bool, allocate: bool) -> int:
    """Blocks per SM as the min of the SM's limits ÷ one block's use. Naive: neither flag. reserve
    adds the per-block shared memory reservation; allocate, registers as the hardware gives them."""
    warp = attrs["warp_size"]
    warps = -(-block // warp)
    limits = [attrs["max_threads_per_sm"] // block, attrs["max_blocks_per_sm"]]
    smem = fn["static_shared_memory"] + dynamic + (attrs["reserved_shared_memory_per_block"] if reserve else 0)
    if smem:
        limits.append(attrs["shared_memory_per_sm"] // smem)
    regs = fn["registers_per_thread"]
    if regs and not allocate:
        limits.append(attrs["registers_per_sm"] // (regs * block))
    elif regs:
        per_warp = -(-regs * warp // REGISTER_UNIT) * REGISTER_UNIT
        assumed = per_warp * -(-warps // SUB_PARTITIONS) * SUB_PARTITIONS
        if assumed > attrs["registers_per_block"]:
            limits.append(0)
        else:
            per_partition = attrs["registers_per_sm"] // SUB_PARTITIONS // per_warp
            limits.append(per_partition * SUB_PARTITIONS // warps)
    return min(limits)


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    drv = device.driver
    attrs = {name: device.attribute(f"CU_DEVICE_ATTRIBUTE_{suffix}") for name, suffix in LIMITS.items()}
    kernels: dict[str, dict[str, int]] = {}
    blocks: dict[str, int | str] = {}
    with opened(device) as gpu:
        functions = {k: gpu.kernel(SOURCE, k) for k in KERNELS}
        for k, fn in functions.items():
            kernels[k] = {}
            for key, (suffix, _, _) in FUNCTION.items():
                attr = getattr(drv.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{suffix}")
                kernels[k][key] = int(check("cuFuncGetAttribute", drv.cuFuncGetAttribute(attr, fn)))
        opt_in = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        for k, b, s in combinations(kernels, attrs):
            try:  # SHARED_KIB ascends, so a limit raised for one combination holds for the next
                if s * 1024 > DEFAULT_DYNAMIC_LIMIT:
                    check("cuFuncSetAttribute", drv.cuFuncSetAttribute(functions[k], opt_in, s * 1024))
                call = drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(functions[k], b, s * 1024)
                blocks[combo(k, b, s)] = int(check("cuOccupancyMaxActiveBlocksPerMultiprocessor", call))
            except CudaError as exc:
                blocks[combo(k, b, s)] = str(exc)
    return summarise(kernels, blocks, attrs)


def summarise(kernels: dict[str, dict[str, int]], blocks: dict[str, int | str], attrs: dict[str, int]) -> Outcome:
    """Results and gates from the kernels' attributes, the API's answers and the device limits."""
    outcome = Outcome(repeats=1)
    for k in KERNELS:
        for key, (suffix, unit, what) in FUNCTION.items():
            text = f"{k} kernel: {what} (CU_FUNC_ATTRIBUTE_{suffix})"
            outcome.add(Result(f"{k}_{key}", kernels[k][key], unit, text))
    max_warps = attrs["max_threads_per_sm"] // attrs["warp_size"]
    over, refused, why = [], [], {}
    todo = combinations(kernels, attrs)
    for k, b, s in todo:
        name, fn, dynamic = combo(k, b, s), kernels[k], s * 1024
        case = f"{k} kernel, {b} threads per block, {s} KiB dynamic shared memory"
        api = blocks.get(name, "not asked")
        naive = count(attrs, fn, b, dynamic, reserve=False, allocate=False)
        if isinstance(api, str):
            if b <= fn["max_threads_per_block"]:  # a block the kernel cannot have may be refused outright
                refused.append(f"{name}: {api}")
            outcome.add(Result(f"{name}_blocks", None, "blocks/SM", f"{case}: the API gave no answer: {api}"[:1000]))
        else:
            warps = api * -(-b // attrs["warp_size"])
            per_sm = f"{case}: active blocks per SM (cuOccupancyMaxActiveBlocksPerMultiprocessor)"
            percent = f"{case}: the API's warps per SM ÷ the most an SM holds ({max_warps})"
            outcome.add(
                Result(f"{name}_blocks", api, "blocks/SM", per_sm),
                Result(f"{name}_occupancy", round(100 * warps / max_warps, 1), "%", percent),
            )
            if api > naive:
                over.append(f"{name}: API {api} above naive {naive}")
            elif api < naive:
                why[name] = explain(attrs, fn, b, dynamic, api, naive)
        outcome.add(Result(f"{name}_naive_blocks", naive, "blocks/SM", f"{case}: {NAIVE}"))
    for name, (cause, text) in why.items():
        outcome.add(Result(f"{name}_why", cause, "", text))
    causes = [cause for cause, _ in why.values()]
    for cause in CAUSES:
        text = f"combinations where the API is below the naive count, explained by: {cause}"
        outcome.add(Result(f"differ_{cause.replace(' ', '_')}", causes.count(cause), "combinations", text))
    asked = "kernel × block size × dynamic shared memory combinations asked (any over the opt-in limit skipped)"
    outcome.add(Result("combinations", len(todo), "combinations", asked))
    outcome.gate("the occupancy API answered every launchable combination", not refused, "; ".join(refused)[:20_000])
    outcome.gate("the occupancy API never exceeds the naive count", not over, "; ".join(over) or f"{len(todo)} asked")
    reserved = [n for n, (c, _) in why.items() if c in CAUSES[::2]]
    outcome.gate(
        "at least one combination differs from naive because of the reserved shared memory",
        True,  # the brief: say so when none does, never fail on it
        ", ".join(reserved) if reserved else "none did: the reservation changed no combination's count on this GPU",
    )
    return outcome


def explain(
    attrs: dict[str, int], fn: dict[str, int], block: int, dynamic: int, api: int, naive: int
) -> tuple[str, str]:
    """Why the API is below the naive count: the reservation, register allocation, both, or neither."""
    reserved = count(attrs, fn, block, dynamic, reserve=True, allocate=False)
    allocated = count(attrs, fn, block, dynamic, reserve=False, allocate=True)
    both = count(attrs, fn, block, dynamic, reserve=True, allocate=True)
    found = {CAUSES[0]: reserved, CAUSES[1]: allocated, CAUSES[2]: both}
    cause = next((c for c, n in found.items() if n == api), CAUSES[3])
    text = (
        f"API {api} blocks, naive {naive}; with the {attrs['reserved_shared_memory_per_block']} bytes of shared memory "
        f"reserved per block: {reserved}; with registers given per warp in units of {REGISTER_UNIT} from "
        f"{SUB_PARTITIONS} sub-partitions: {allocated}; with both: {both}"
    )
    return cause, text
