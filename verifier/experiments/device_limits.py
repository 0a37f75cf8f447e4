"""Device limits: what the driver says this GPU has, each value named once for many terms to cite.

Every relevant cuDeviceGetAttribute value is read, with cuDeviceTotalMem, and recorded with its
unit; two values are derived and say so (warps per SM, and the theoretical memory bandwidth from
the memory clock and bus width). Nothing is timed. The clock attributes are recorded as the
driver gives them and gate nothing: CUDA 12 and later may report 0 for them or deprecate them.
"""

from __future__ import annotations

from pathlib import Path

from cudagloss.model.measurement import Result
from verifier.cuda import CudaError, Device, check
from verifier.experiment import Outcome

ID = "device-limits"
PURPOSE = "Every relevant device attribute (warps, SMs, threads, registers, shared memory, L2, memory, clocks)"

ATTRIBUTES: tuple[tuple[str, str, str, str], ...] = (
    ("warp_size", "WARP_SIZE", "threads/warp", "threads per warp"),
    ("sm_count", "MULTIPROCESSOR_COUNT", "SMs", "streaming multiprocessors on the GPU"),
    ("max_threads_per_block", "MAX_THREADS_PER_BLOCK", "threads/block", "most threads one block may have"),
    ("max_threads_per_sm", "MAX_THREADS_PER_MULTIPROCESSOR", "threads/SM", "most threads resident on one SM at once"),
    ("max_blocks_per_sm", "MAX_BLOCKS_PER_MULTIPROCESSOR", "blocks/SM", "most blocks resident on one SM at once"),
    (
        "registers_per_sm",
        "MAX_REGISTERS_PER_MULTIPROCESSOR",
        "registers/SM",
        "32-bit registers in one SM's register file",
    ),
    ("registers_per_block", "MAX_REGISTERS_PER_BLOCK", "registers/block", "most 32-bit registers one block may use"),
    ("shared_memory_per_sm", "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR", "bytes", "shared memory one SM has"),
    ("shared_memory_per_block", "MAX_SHARED_MEMORY_PER_BLOCK", "bytes", "shared memory per block without opting in"),
    (
        "shared_memory_per_block_optin",
        "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
        "bytes",
        "shared memory per block for a kernel that opts in (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)",
    ),
    (
        "reserved_shared_memory_per_block",
        "RESERVED_SHARED_MEMORY_PER_BLOCK",
        "bytes",
        "shared memory the system reserves for each resident block, beside what the kernel asks for",
    ),
    ("l2_cache_size", "L2_CACHE_SIZE", "bytes", "L2 cache size"),
    (
        "max_persisting_l2_size",
        "MAX_PERSISTING_L2_CACHE_SIZE",
        "bytes",
        "most L2 that may be set aside for persisting accesses",
    ),
    ("memory_bus_width", "GLOBAL_MEMORY_BUS_WIDTH", "bits", "global memory bus width"),
    ("memory_clock_rate", "MEMORY_CLOCK_RATE", "MHz", "peak memory clock (the driver reports kHz; shown ÷ 1000)"),
    ("sm_clock_rate", "CLOCK_RATE", "MHz", "peak SM clock (the driver reports kHz; shown ÷ 1000)"),
    ("cluster_launch", "CLUSTER_LAUNCH", "", "whether thread block clusters can be launched"),
    ("compute_capability_major", "COMPUTE_CAPABILITY_MAJOR", "", "compute capability, major number"),
    ("compute_capability_minor", "COMPUTE_CAPABILITY_MINOR", "", "compute capability, minor number"),
    ("async_engine_count", "ASYNC_ENGINE_COUNT", "engines", "copy engines that can overlap copies with kernels"),
    ("unified_addressing", "UNIFIED_ADDRESSING", "", "whether host and device share one virtual address space"),
    ("managed_memory", "MANAGED_MEMORY", "", "whether managed (unified) memory can be allocated"),
    ("concurrent_kernels", "CONCURRENT_KERNELS", "", "whether kernels of different streams may run at once"),
)
"""(result name, CU_DEVICE_ATTRIBUTE_ suffix, unit, what it is)."""

CLOCKS = frozenset({"memory_clock_rate", "sm_clock_rate"})
"""Recorded as the driver gives them, gating nothing (CUDA 12+ may report 0 or deprecate them)."""
FLAGS = frozenset({"cluster_launch", "unified_addressing", "managed_memory", "concurrent_kernels"})
"""0/1 attributes, recorded as booleans."""
WARP_SIZE = 32
"""The programming model's warp: any other value means this is not the device the pages describe."""

Raw = dict[str, int | str]
"""Each result name (and 'total_global_memory') to the driver's integer, or why it could not be read."""


def read(device: Device) -> Raw:
    """Every attribute in ATTRIBUTES and cuDeviceTotalMem, a failure kept as its text."""
    raw: Raw = {}
    for name, suffix, _, _ in ATTRIBUTES:
        try:
            raw[name] = device.attribute(f"CU_DEVICE_ATTRIBUTE_{suffix}")
        except AttributeError:
            raw[name] = f"this cuda-bindings has no CU_DEVICE_ATTRIBUTE_{suffix}"
        except CudaError as exc:
            raw[name] = str(exc)
    try:
        raw["total_global_memory"] = int(check("cuDeviceTotalMem", device.driver.cuDeviceTotalMem(device.dev)))
    except CudaError as exc:
        raw["total_global_memory"] = str(exc)
    return raw


def summarise(raw: Raw) -> Outcome:
    """Results with units and the gates, from the driver's raw integers."""
    outcome = Outcome(repeats=1)
    unread = []
    for name, suffix, unit, description in ATTRIBUTES:
        value = raw.get(name, "not read")
        source = f"CU_DEVICE_ATTRIBUTE_{suffix}"
        if isinstance(value, str):
            if name not in CLOCKS:
                unread.append(f"{name}: {value}")
            outcome.add(Result(name, None, unit, f"{description} ({source}): not read: {value}"[:1000]))
        elif name in CLOCKS:
            outcome.add(Result(name, value / 1000, unit, f"{description} ({source}; 0 means the driver gives none)"))
        elif name in FLAGS:
            outcome.add(Result(name, bool(value), unit, f"{description} ({source})"))
        else:
            outcome.add(Result(name, value, unit, f"{description} ({source})"))
    total = raw.get("total_global_memory", "not read")
    if isinstance(total, str):
        unread.append(f"total_global_memory: {total}")
        outcome.add(
            Result("total_global_memory", None, "bytes", f"global memory (cuDeviceTotalMem): not read: {total}")
        )
    else:
        outcome.add(Result("total_global_memory", total, "bytes", "global memory on the device (cuDeviceTotalMem)"))
    outcome.add(*_derived(raw))
    outcome.gate("every device attribute was read", not unread, "; ".join(unread)[:20_000])
    warp = raw.get("warp_size")
    outcome.gate(f"the warp size is {WARP_SIZE} threads", warp == WARP_SIZE, f"the driver says {warp}")
    return outcome


def _derived(raw: Raw) -> list[Result]:
    """Warps per SM, and the memory bandwidth the attributes imply (where the clock is given)."""
    derived = []
    threads, warp = raw.get("max_threads_per_sm"), raw.get("warp_size")
    if isinstance(threads, int) and isinstance(warp, int) and warp > 0:
        derived.append(
            Result(
                "max_warps_per_sm",
                threads // warp,
                "warps/SM",
                "most warps resident on one SM: derived, max threads per SM ÷ warp size",
            )
        )
    clock, width = raw.get("memory_clock_rate"), raw.get("memory_bus_width")
    if isinstance(clock, int) and isinstance(width, int) and clock > 0 and width > 0:
        derived.append(
            Result(
                "theoretical_memory_bandwidth",
                round(2 * clock * 1000 * width / 8 / 1e9, 1),
                "GB/s",
                "peak memory bandwidth derived from the attributes, not measured: 2 (double data rate: two "
                "transfers per clock) × memory clock × bus width ÷ 8 bits per byte, in 10^9 bytes per second",
            )
        )
    else:
        derived.append(
            Result(
                "theoretical_memory_bandwidth",
                None,
                "GB/s",
                f"not derived: the driver gives memory clock {clock!r} kHz and bus width {width!r} bits",
            )
        )
    return derived


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    return summarise(read(device))
