"""How a measurement page names a run's provenance: a label per key, and what held the GPU's
clocks back while it ran (NVML's reasons, the harmless ones left out)."""

from __future__ import annotations

from cudagloss.model.measurement import Value

PROVENANCE_LABELS = {
    "node": "Node (it names one card)",
    "contributed_by": "Contributed by (who added the card's folder, as git records it)",
    "gpu_name": "GPU",
    "compute_capability": "Compute capability",
    "sm_count": "SMs",
    "driver_version": "Driver",
    "cuda_driver_version": "CUDA version of the driver",
    "nvrtc_version": "NVRTC",
    "nvrtc_build": "NVRTC build",
    "nvrtc_ptx_isa_version": "PTX ISA that NVRTC emits",
    "cuda_bindings_version": "cuda-bindings",
    "cuda_core_version": "cuda-core",
    "python": "Python",
    "os": "OS",
    "cpu": "Host CPU",
    "cpu_count": "Host CPU threads",
    "module_loading": "Module loading",
    "sm_clock_mhz": "SM clock at the start (MHz)",
    "sm_clock_mhz_end": "SM clock at the end (MHz)",
    "sm_clock_max_mhz": "SM clock maximum (MHz)",
    "memory_clock_mhz": "Memory clock at the start (MHz)",
    "memory_clock_mhz_end": "Memory clock at the end (MHz)",
    "memory_clock_max_mhz": "Memory clock maximum (MHz)",
    "clock_limited_by": "Clocks held back by, at the start",
    "clock_limited_by_end": "Clocks held back by, at the end",
    "clock_held_back_during": "Clocks held back while it ran (NVML's violation counters)",
    "clock_held_back_ms": "Clocks held back while it ran, total (ms)",
    "gpu_uuid": "GPU UUID (which card ran)",
    "pci_bus_id": "PCI bus id",
    "temperature_c": "GPU temperature at the start (°C)",
    "temperature_c_end": "GPU temperature at the end (°C)",
    "power_limit_w": "Power limit (W)",
    "ecc_mode": "ECC",
    "persistence_mode": "Persistence mode",
    "nvml": "NVML",
    "git_commit": "Git commit",
    "git_dirty": "Uncommitted changes",
    "recorded_at": "Recorded at",
    "duration_s": "Duration (s)",
    "repeats": "Repeats",
}
"""How the measurement page names each provenance key (an unknown key is shown as it is)."""


def shown_value(value: Value) -> str:
    """A provenance value as a page shows it."""
    return "not recorded" if value is None else str(value)


BENIGN_CLOCK_REASONS = frozenset({"none", "gpu idle", "application clocks setting", "sync boost"})
"""What NVML names as holding the clocks back that does not slow a measurement (an idle GPU at
the start of a run, clocks an administrator set)."""


def clocks_held(provenance: dict[str, object]) -> str:
    """What held the GPU's clocks down (power, heat) while the run's kernels ran, from NVML's
    violation counters read around it; a file made before they were read has only the reasons
    at its start and end."""
    during = provenance.get("clock_held_back_during")
    if isinstance(during, str) and during and not during.startswith("unknown"):
        return "" if during == "none" else during
    reasons: dict[str, None] = {}
    for key in ("clock_limited_by", "clock_limited_by_end"):
        for reason in str(provenance.get(key, "none")).split(", "):
            if reason not in BENIGN_CLOCK_REASONS:
                reasons[reason] = None
    return ", ".join(reasons)
