"""Small checked wrappers over cuda.bindings (driver API and NVRTC).

Every CUDA call's return code is checked: a failure raises CudaError with the error's
name, number and message, which experiments record verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifier import compiled

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""


class CudaError(RuntimeError):
    def __init__(self, call: str, name: str, code: int, message: str, log: str = "") -> None:
        super().__init__(f"{call}: {name} ({code}): {message}")
        self.call, self.name, self.code, self.message, self.log = call, name, code, message, log

    def as_result(self) -> dict[str, Any]:
        """The error as a step reports it: exact name, number, message and JIT log."""
        return {
            "ok": False,
            "call": self.call,
            "error_name": self.name,
            "error_code": self.code,
            "error_message": self.message,
            "jit_log": self.log,
        }


def _driver() -> Any:
    from cuda.bindings import driver

    return driver


def _nvrtc() -> Any:
    from cuda.bindings import nvrtc

    return nvrtc


def _nvfatbin() -> Any:
    from cuda.bindings import nvfatbin

    return nvfatbin


def check(call: str, result: Any) -> Any:
    """Unpack a cuda.bindings result tuple, raising CudaError unless it is success."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    driver, nvrtc = _driver(), _nvrtc()
    if isinstance(err, driver.CUresult):
        if err != driver.CUresult.CUDA_SUCCESS:
            _, name = driver.cuGetErrorName(err)
            _, text = driver.cuGetErrorString(err)
            raise CudaError(call, name.decode() if name else str(err), int(err), text.decode() if text else "")
    elif isinstance(err, nvrtc.nvrtcResult) and err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, text = nvrtc.nvrtcGetErrorString(err)
        raise CudaError(call, err.name, int(err), text.decode() if text else "")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


def nvrtc_version() -> str:
    major, minor = check("nvrtcVersion", _nvrtc().nvrtcVersion())
    return f"{major}.{minor}"


@dataclass(frozen=True)
class Compiled:
    image: bytes
    kind: str  # 'ptx' or 'cubin'
    log: str


def compile_source(source: str, name: str, arch: str, extra: tuple[str, ...] = ()) -> Compiled:
    """Compile CUDA C++ with NVRTC for arch ('compute_75' gives PTX, 'sm_90' a cubin)."""
    compiled.note(source)  # the contract checks what a run compiled against what it declares
    nvrtc = _nvrtc()
    prog = check("nvrtcCreateProgram", nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []))
    try:
        options = [f"--gpu-architecture={arch}".encode(), *(o.encode() for o in extra)]
        result = nvrtc.nvrtcCompileProgram(prog, len(options), options)
        size = check("nvrtcGetProgramLogSize", nvrtc.nvrtcGetProgramLogSize(prog))
        buf = bytearray(size)  # not b" " * size: for size 1 that is the interned b" ", which NVRTC would overwrite
        check("nvrtcGetProgramLog", nvrtc.nvrtcGetProgramLog(prog, buf))
        log = buf.rstrip(b"\0 ").decode(errors="replace")
        try:
            check("nvrtcCompileProgram", result)
        except CudaError as exc:
            exc.log = log
            raise
        if arch.startswith("compute_"):
            size = check("nvrtcGetPTXSize", nvrtc.nvrtcGetPTXSize(prog))
            out = b" " * size
            check("nvrtcGetPTX", nvrtc.nvrtcGetPTX(prog, out))
            return Compiled(out, "ptx", log)
        size = check("nvrtcGetCUBINSize", nvrtc.nvrtcGetCUBINSize(prog))
        out = b" " * size
        check("nvrtcGetCUBIN", nvrtc.nvrtcGetCUBIN(prog, out))
        return Compiled(out, "cubin", log)
    finally:
        check("nvrtcDestroyProgram", nvrtc.nvrtcDestroyProgram(prog))


def supported_archs() -> list[int]:
    """The real architectures (75, 80, ...) this NVRTC can compile for."""
    return [int(a) for a in check("nvrtcGetSupportedArchs", _nvrtc().nvrtcGetSupportedArchs())]


def arch_number(arch: str) -> str:
    """'sm_90a' -> '90a', 'compute_75' -> '75': the form nvFatbin takes."""
    return arch.split("_", 1)[1]


def make_fatbin(entries: list[Compiled], archs: list[str]) -> bytes:
    """A fat binary holding the given PTX and cubin images (nvFatbin), e.g. a PTX-only one."""
    fatbin = _nvfatbin()
    try:
        handle = fatbin.create([], 0)
    except fatbin.nvFatbinError as exc:
        raise CudaError("nvFatbinCreate", type(exc).__name__, -1, str(exc)) from None
    except RuntimeError as exc:  # libnvfatbin not installed: cuda.bindings cannot find it
        raise CudaError("nvFatbinCreate", "NVFATBIN_NOT_FOUND", -1, f"libnvfatbin is not available: {exc}") from None
    try:
        for image, arch in zip(entries, archs, strict=True):
            number = arch_number(arch)
            if image.kind == "ptx":
                code = image.image.rstrip(b"\0 ") + b"\0"
                fatbin.add_ptx(handle, code, len(code), number, f"saxpy_{number}.ptx", "")
            else:
                fatbin.add_cubin(handle, image.image, len(image.image), number, f"saxpy_{number}.cubin")
        size = int(fatbin.size(handle))
        out = bytearray(size)
        fatbin.get(handle, out)
        return bytes(out)
    except fatbin.nvFatbinError as exc:
        raise CudaError("nvFatbin", type(exc).__name__, -1, str(exc)) from None
    finally:
        fatbin.destroy(handle)


def ptx_isa_version(ptx: bytes) -> str:
    """The '.version X.Y' line of a PTX image."""
    for line in ptx.decode(errors="replace").splitlines():
        if line.startswith(".version"):
            return line.split()[1]
    return "unknown"


class Device:
    """The first GPU, with its primary context current."""

    def __init__(self, ordinal: int = 0) -> None:
        driver = _driver()
        check("cuInit", driver.cuInit(0))
        self.driver = driver
        self.dev = check("cuDeviceGet", driver.cuDeviceGet(ordinal))
        self.ctx = check("cuDevicePrimaryCtxRetain", driver.cuDevicePrimaryCtxRetain(self.dev))
        check("cuCtxSetCurrent", driver.cuCtxSetCurrent(self.ctx))

    def attribute(self, name: str) -> int:
        attr = getattr(self.driver.CUdevice_attribute, name)
        return int(check("cuDeviceGetAttribute", self.driver.cuDeviceGetAttribute(attr, self.dev)))

    def capability(self) -> tuple[int, int]:
        """The compute capability as (major, minor)."""
        major = self.attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
        return major, self.attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")

    def attributes(self, **names: str) -> dict[str, int]:
        """Each key's CU_DEVICE_ATTRIBUTE_*, read in the order given: the attributes an experiment
        hands its summary, under its own names."""
        return {key: self.attribute(name) for key, name in names.items()}

    def memory_facts(self) -> dict[str, int]:
        """The rated memory clock in kHz, the bus width in bits and the L2 size in bytes the
        bandwidth experiments hand their summary."""
        return self.attributes(
            memory_clock_khz="CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE",
            bus_width_bits="CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH",
            l2_bytes="CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE",
        )

    def sm_facts(self, *, clock: bool = False) -> dict[str, Any]:
        """The SM count and compute capability ('9.0') the per-SM experiments hand their summary,
        and the rated SM clock in kHz where asked: read in one place, the same way for each."""
        major, minor = self.capability()
        facts: dict[str, Any] = {"sm_count": self.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")}
        facts["cc"] = f"{major}.{minor}"
        if clock:
            facts["clock_khz"] = self.attribute("CU_DEVICE_ATTRIBUTE_CLOCK_RATE")
        return facts

    def describe(self) -> dict[str, Any]:
        driver = self.driver
        raw = check("cuDeviceGetName", driver.cuDeviceGetName(256, self.dev))
        version = int(check("cuDriverGetVersion", driver.cuDriverGetVersion()))
        major, minor = self.capability()
        return {
            "gpu_name": raw.split(b"\0", 1)[0].decode(),
            "compute_capability": f"{major}.{minor}",
            "sm_count": self.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"),
            "cuda_driver_version": f"{version // 1000}.{(version % 1000) // 10}",
        }

    def load(self, image: bytes, log_size: int = 1 << 14) -> tuple[Any, str]:
        """cuModuleLoadDataEx with the JIT's info and error logs captured."""
        driver = self.driver
        # cuda.bindings takes the log buffers as bytes objects that the driver fills in place.
        info = b"\0" * log_size
        error = b"\0" * log_size
        options = [
            driver.CUjit_option.CU_JIT_INFO_LOG_BUFFER,
            driver.CUjit_option.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
            driver.CUjit_option.CU_JIT_ERROR_LOG_BUFFER,
            driver.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ]
        values = [info, log_size, error, log_size]
        result = driver.cuModuleLoadDataEx(image, len(options), options, values)
        info_text = info.split(b"\0", 1)[0].decode(errors="replace")
        error_text = error.split(b"\0", 1)[0].decode(errors="replace")
        log = (info_text + error_text).strip()
        try:
            module = check("cuModuleLoadDataEx", result)
        except CudaError as exc:
            exc.log = error_text.strip()
            raise
        return module, log

    def load_file(self, path: Path) -> Any:
        """cuModuleLoad: the driver reads the file itself (PTX, cubin or fat binary)."""
        return check("cuModuleLoad", self.driver.cuModuleLoad(str(path).encode()))

    def function(self, module: Any, name: str) -> Any:
        return check("cuModuleGetFunction", self.driver.cuModuleGetFunction(module, name.encode()))
