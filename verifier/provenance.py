"""Where and how a measurement ran: the node, its GPU and every software version."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from verifier.cuda import CudaError, Device, compile_source, nvrtc_version, ptx_isa_version
from verifier.experiment import ROOT


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _driver_release() -> str:
    """The kernel driver's release (e.g. 580.159.04), as nvidia-smi or /proc report it."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        )
        return out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        pass
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
        return text.split("Kernel Module")[1].split()[0]
    except (OSError, IndexError):
        return "unknown"


def _git() -> tuple[str, bool | None]:
    """The commit and dirtiness; VERIFY_GIT_COMMIT / VERIFY_GIT_DIRTY stand in where the
    tree was copied without .git (as to a lent GPU node)."""
    if os.environ.get("VERIFY_GIT_COMMIT"):
        return os.environ["VERIFY_GIT_COMMIT"], os.environ.get("VERIFY_GIT_DIRTY", "") == "1"
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        status = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True, check=True)
        return commit.stdout.strip(), bool(status.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return "unknown", None


def _nvrtc_build() -> str:
    """NVRTC's full version (13.0.88), which nvrtcVersion's major.minor does not give: the pip
    package's version, else the loaded library's file name; a patch release can change code
    NVRTC writes, so it is part of the cause of every compiled result."""
    for package in ("nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu13", "nvidia-cuda-nvrtc-cu12"):
        if (found := _version(package)) != "not installed":
            return found
    try:
        maps = Path("/proc/self/maps").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "unknown"
    names = sorted({Path(line.split()[-1]).resolve().name for line in maps.splitlines() if "libnvrtc.so" in line})
    return names[0][:100] if names else "unknown"


def _nvrtc_ptx_isa() -> str:
    """The PTX ISA version this NVRTC writes (the driver must know it to load the PTX)."""
    try:
        ptx = compile_source('extern "C" __global__ void k() {}', "isa.cu", "compute_75")
    except CudaError as exc:
        return f"unknown ({exc.name})"
    return ptx_isa_version(ptx.image)


def _cpu() -> str:
    """The host CPU's model: a JIT compile and a module load run on it, so a node lent on
    another host measures other times with the same GPU, driver and CUDA."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return " ".join(line.split(":", 1)[1].split())[:200] or "unknown"
    except OSError:
        pass
    return platform.processor() or "unknown"


THROTTLE_REASONS = {
    0x1: "gpu idle",
    0x2: "application clocks setting",
    0x4: "software power cap",
    0x8: "hardware slowdown",
    0x10: "sync boost",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "hardware power brake slowdown",
    0x100: "display clock setting",
}
"""NVML's clock event reasons, by bit (nvmlClocksEventReason*): why the clocks are below their maximum."""
CHANGING = ("sm_clock_mhz", "memory_clock_mhz", "clock_limited_by", "temperature_c")
"""The state that can move during an experiment: recorded again, with _end, when it is over."""


def throttle_text(mask: int) -> str:
    """NVML's reason bits as words ('none' when the clocks are not held back)."""
    words = [text for bit, text in THROTTLE_REASONS.items() if mask & bit]
    unknown = mask & ~sum(THROTTLE_REASONS)
    return ", ".join(words + ([f"other (0x{unknown:x})"] if unknown else [])) or "none"


def nvml_handle(device: Device) -> tuple[Any, Any]:
    """pynvml and NVML's handle of this device (matched by PCI bus id): the one way every
    reading finds the card, as a node per card must read its own. Raises ImportError without
    nvidia-ml-py and NVML's own errors where it cannot be read."""
    import pynvml

    pynvml.nvmlInit()
    bus = device.driver.cuDeviceGetPCIBusId(64, device.dev)[1].split(b"\0", 1)[0]
    return pynvml, pynvml.nvmlDeviceGetHandleByPciBusId(bus)


def gpu_state(device: Device) -> dict[str, Any]:
    """Clocks, their limits and why they are held back, power limit, ECC and persistence, from
    NVML (nvidia-ml-py) for this device (matched by PCI bus id); where NVML is not there, one key
    says so instead of numbers that were never read."""
    try:
        pynvml, handle = nvml_handle(device)
    except ImportError:
        return {"nvml": "absent (nvidia-ml-py is not installed)"}
    except Exception as exc:  # NVML raises its own error types; a reading is never worth a crash
        return {"nvml": f"unreadable ({type(exc).__name__}: {str(exc)[:100]})"}
    try:
        bus = device.driver.cuDeviceGetPCIBusId(64, device.dev)[1].split(b"\0", 1)[0]
        clock = pynvml.nvmlDeviceGetClockInfo
        max_clock = pynvml.nvmlDeviceGetMaxClockInfo
        reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or (
            pynvml.nvmlDeviceGetCurrentClocksThrottleReasons
        )
        state: dict[str, Any] = {
            "sm_clock_mhz": clock(handle, pynvml.NVML_CLOCK_SM),
            "memory_clock_mhz": clock(handle, pynvml.NVML_CLOCK_MEM),
            "sm_clock_max_mhz": max_clock(handle, pynvml.NVML_CLOCK_SM),
            "memory_clock_max_mhz": max_clock(handle, pynvml.NVML_CLOCK_MEM),
            "clock_limited_by": throttle_text(int(reasons(handle))),
            "temperature_c": pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU),
            "power_limit_w": round(pynvml.nvmlDeviceGetPowerManagementLimit(handle) / 1000, 1),
            # which card of the host: a node per card (make verify DEVICES=all) names the card
            "pci_bus_id": bus.decode("ascii", "replace"),
            "gpu_uuid": str(pynvml.nvmlDeviceGetUUID(handle)),
        }
        for key, read in (("ecc_mode", pynvml.nvmlDeviceGetEccMode), ("persistence_mode", None)):
            try:
                value = read(handle)[0] if read else pynvml.nvmlDeviceGetPersistenceMode(handle)
                state[key] = "on" if value else "off"
            except pynvml.NVMLError:
                state[key] = "not supported"
        return state
    except Exception as exc:  # NVML raises its own error types; a reading is never worth a crash
        return {"nvml": f"unreadable ({type(exc).__name__}: {str(exc)[:100]})"}


CLOCK_EVENTS = {
    "software power cap": 0,
    "thermal": 1,
    "sync boost": 2,
    "board limit": 3,
    "reliability": 5,
}
"""NVML's performance policies (nvmlPerfPolicyType_t) whose violation counters add up the time the
clocks were held below what was asked; low utilisation (4) is left out: an idle GPU is not held."""


def clock_event_ns(device: Device) -> dict[str, int] | None:
    """NVML's cumulative ns per policy in CLOCK_EVENTS, or None where NVML cannot say: read before
    and after an experiment, the difference is what held the clocks back *while it ran*, which
    one reading of the current reasons at either end cannot show."""
    try:
        pynvml, handle = nvml_handle(device)
        return {
            name: int(pynvml.nvmlDeviceGetViolationStatus(handle, policy).violationTime)
            for name, policy in CLOCK_EVENTS.items()
        }
    except Exception:  # NVML raises its own error types; a reading is never worth a crash
        return None


def clock_events_during(before: dict[str, int] | None, after: dict[str, int] | None) -> dict[str, Any]:
    """Provenance keys for what held the clocks back between two readings of clock_event_ns."""
    if before is None or after is None:
        return {"clock_held_back_during": "unknown (NVML's violation counters could not be read)"}
    held = {name: max(0, after.get(name, 0) - before.get(name, 0)) / 1e6 for name in before}
    words = [f"{name} {ms:.1f} ms" for name, ms in held.items() if ms >= 0.05]
    return {"clock_held_back_during": ", ".join(words) or "none", "clock_held_back_ms": round(sum(held.values()), 1)}


def module_loading() -> str:
    """Whether the driver loads modules lazily (CUDA_MODULE_LOADING): it moves load times."""
    try:
        from cuda.bindings import driver

        err, mode = driver.cuModuleGetLoadingMode()
    except (ImportError, AttributeError):
        return "unknown"
    return mode.name.removeprefix("CU_MODULE_").removesuffix("_LOADING").lower() if not int(err) else "unknown"


def node_name() -> str:
    return os.environ.get("VERIFY_NODE") or platform.node() or "unknown"


def collect(device: Device) -> dict[str, Any]:
    commit, dirty = _git()
    return {
        "node": node_name(),
        **device.describe(),
        "driver_version": _driver_release(),
        "nvrtc_version": nvrtc_version(),
        "nvrtc_build": _nvrtc_build(),
        "nvrtc_ptx_isa_version": _nvrtc_ptx_isa(),
        "cuda_bindings_version": _version("cuda-bindings"),
        "cuda_core_version": _version("cuda-core"),
        "python": sys.version.split()[0],
        "os": platform.platform(),
        "module_loading": module_loading(),
        **gpu_state(device),
        "cpu": _cpu(),
        "cpu_count": os.cpu_count() or 0,
        "git_commit": commit,
        "git_dirty": dirty,
        "recorded_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
