"""Host costs and versions: what compiling a kernel with NVRTC and calling the CUDA driver and
runtime APIs cost the host, and which driver, runtime, NVRTC and NVML versions a node has.

Every timing here is a HOST cost (method 'host'): perf_counter time spent by the host CPU, the
CUDA libraries and the Python binding (cuda-bindings), never GPU time; the host CPU is in the
provenance. No event pair is used: nothing timed here is GPU work.

(a) NVRTC compile time, in this process (NVRTC is loaded already: the provenance compiled a
kernel before this ran, and each of the four compiles runs once untimed first). The small
kernel is saxpy (verifier/kernels/saxpy.py); the large one is CHAIN_SOURCE, STEPS steps of a
32-bit hash written out by the preprocessor, each a shift, an xor and a multiply-add with its
own constants, so its PTX holds about three instructions per step. Each is compiled to PTX for
the GPU's virtual architecture (compute_90 on an H200) and to a cubin for its real one (sm_90),
in rounds that compile all four (a change in the host's speed reaches all four alike); the
median of the rounds is the result. Correctness first: saxpy's cubin runs correctly (saxpy.run
checks it against numpy), and the large cubin's output equals the chain computed on the CPU.

(b) Host cost of driver API calls against the runtime API's equivalents (verifier/host_calls.py
says how): cuDriverGetVersion / cudaRuntimeGetVersion (a call that does no work: the binding's
floor), cuCtxSynchronize / cudaDeviceSynchronize on an idle device, cuMemAlloc+cuMemFree /
cudaMalloc+cudaFree of 1 MiB, and cuLaunchKernel of an empty kernel (host submission cost: one
cuCtxSynchronize after each batch, outside the timing). cuda.bindings.runtime binds no
cudaLaunchKernel, so the launch has no runtime side (runtime_launch_kernel_bound says so).

(c) Versions: cuDriverGetVersion, cudaRuntimeGetVersion (the runtime cuda.bindings.runtime
carries, linked statically, not a libcudart.so of the node), nvrtcVersion, and NVML's driver
version, CUDA driver version and own version, read as verifier/provenance.py reads NVML (its
nvml_handle). A gate checks that the driver API and NVML name the same CUDA version.

Prediction (host costs follow the host CPU, not a GPU datasheet; figures from a 2-core VM with
NVRTC 13.0.88, where this module's tests run, and from launch-overhead on the H200 nodes):
saxpy to PTX about 16 ms and to a cubin about 23 ms (ptxas added); the large kernel has 6192 PTX
lines and compiles in about 0.38 s to PTX and 0.65 s to a cubin, some 25x the small one; PTX
lines and cubin sizes are exact for a given NVRTC build (saxpy's PTX 60 lines, its cubin 3976
bytes; the large cubin 134784). A call that does no work costs a few hundred ns from Python;
cuCtxSynchronize on an idle device about 1-3 us, the runtime's within a few tenths of that;
1 MiB alloc+free some 5-30 us a pair; cuLaunchKernel about 5-8 us (launch-overhead's
host_launch_call). Versions on the H200 nodes: driver API 13.0, NVML driver 580.159.04 and CUDA
13.0, NVRTC 13.0, runtime 13.3 (cuda-bindings 13.3.1 carries it): newer than the driver, which
CUDA's minor-version compatibility allows within one major version.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier import host_calls
from verifier.cuda import Device, check, compile_source, nvrtc_version
from verifier.experiment import Outcome, median_result
from verifier.kernels import saxpy

ID = "host-costs"
PURPOSE = "Host costs of NVRTC compiles and of driver and runtime API calls, and the CUDA software versions"
USES = ("host_calls.py", "provenance.py")

STEPS = 2048
"""Unrolled steps of the large kernel: some 6,000 lines of PTX."""
MIN_ROUNDS = 5
CHAIN_N, CHAIN_BLOCK = 1 << 13, 256
HOST = "the host CPU is in the provenance"

EMPTY_SOURCE = r"""
extern "C" __global__ void empty() {}
"""

CHAIN_SOURCE = r"""
// One step: shift, xor, multiply-add, each step with constants of its own.
#define STEP(k) h = (h ^ (h >> (7u + (k) % 19u))) * (0x9E3779B1u + 2u * (k)) + (k);
#define STEP4(k) STEP(k) STEP((k) + 1u) STEP((k) + 2u) STEP((k) + 3u)
#define STEP16(k) STEP4(k) STEP4((k) + 4u) STEP4((k) + 8u) STEP4((k) + 12u)
#define STEP64(k) STEP16(k) STEP16((k) + 16u) STEP16((k) + 32u) STEP16((k) + 48u)
#define STEP256(k) STEP64(k) STEP64((k) + 64u) STEP64((k) + 128u) STEP64((k) + 192u)
#define STEP1024(k) STEP256(k) STEP256((k) + 256u) STEP256((k) + 512u) STEP256((k) + 768u)

extern "C" __global__ void chain(const unsigned* in, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned h = in[i];
    STEP1024(0u) STEP1024(1024u)  // STEPS = 2048 steps, written out
    out[i] = h;
}
"""

KERNELS = {"small": (saxpy.SOURCE, "saxpy.cu"), "large": (CHAIN_SOURCE, "chain.cu")}
NO_WORK, SYNC, ALLOC = (
    "a call that does no work",
    "synchronize an idle device",
    "allocate and free 1 MiB of device memory",
)
LAUNCH = (
    "host submission cost of an empty kernel (one block of 32 threads) on the default stream, not GPU time "
    "(one cuCtxSynchronize after each batch, outside the timing)"
)
CALLS = [  # (kind, side, result name, the call, what it does)
    ("version", "driver", "driver_version_call", "cuDriverGetVersion", NO_WORK),
    ("version", "runtime", "runtime_version_call", "cudaRuntimeGetVersion", NO_WORK),
    ("sync", "driver", "driver_ctx_synchronize", "cuCtxSynchronize", SYNC),
    ("sync", "runtime", "runtime_device_synchronize", "cudaDeviceSynchronize", SYNC),
    ("alloc", "driver", "driver_alloc_free_1mib", "cuMemAlloc+cuMemFree", ALLOC),
    ("alloc", "runtime", "runtime_alloc_free_1mib", "cudaMalloc+cudaFree", ALLOC),
    ("launch", "driver", "driver_launch_submit", "cuLaunchKernel", LAUNCH),
]


def chain_reference(values: Any, steps: int = STEPS) -> Any:
    """CHAIN_SOURCE's output for each uint32 input, on the CPU (numpy wraps as the GPU does)."""
    import numpy as np

    h = np.asarray(values, dtype=np.uint32).copy()
    for k in range(steps):
        h = (h ^ (h >> np.uint32(7 + k % 19))) * np.uint32(0x9E3779B1 + 2 * k) + np.uint32(k)
    return h


def ptx_lines(image: bytes) -> int:
    return len(image.rstrip(b"\0 ").decode(errors="replace").splitlines())


def _compile_rounds(raw: dict[str, Any], arch: str, virtual: str, rounds: int) -> dict[str, bytes]:
    images: dict[str, bytes] = {}
    cases = [(size, kind, target) for size in KERNELS for kind, target in (("ptx", virtual), ("cubin", arch))]
    for size, kind, target in cases:  # untimed first compile of each
        images[f"{size}_{kind}"] = compile_source(*KERNELS[size], target).image
    raw["compile_s"] = {f"{size}_{kind}": [] for size, kind, _ in cases}
    for _ in range(rounds):
        for size, kind, target in cases:
            began = time.perf_counter()
            compile_source(*KERNELS[size], target)
            raw["compile_s"][f"{size}_{kind}"].append(time.perf_counter() - began)
    return images


def _run_chain(device: Device, image: bytes) -> int:
    """Load the large cubin, run it on random inputs, and count outputs unlike the CPU's."""
    import numpy as np

    drv = device.driver
    module, _ = device.load(image)
    fn = device.function(module, "chain")
    data = np.random.default_rng().integers(0, 1 << 32, CHAIN_N, dtype=np.uint32)
    dx = check("cuMemAlloc", drv.cuMemAlloc(data.nbytes))
    dy = check("cuMemAlloc", drv.cuMemAlloc(data.nbytes))
    try:
        check("cuMemcpyHtoD", drv.cuMemcpyHtoD(dx, data.ctypes.data, data.nbytes))
        check("cuMemsetD32", drv.cuMemsetD32(dy, 0xDEADBEEF, CHAIN_N))  # poisoned: each output must be written
        params = [np.array([int(dx)], dtype=np.uint64), np.array([int(dy)], dtype=np.uint64)]
        params.append(np.array([CHAIN_N], dtype=np.int32))
        pointers = np.array([p.ctypes.data for p in params], dtype=np.uint64)
        grid = -(-CHAIN_N // CHAIN_BLOCK)
        check("cuLaunchKernel", drv.cuLaunchKernel(fn, grid, 1, 1, CHAIN_BLOCK, 1, 1, 0, 0, pointers.ctypes.data, 0))
        check("cuCtxSynchronize", drv.cuCtxSynchronize())
        out = np.zeros(CHAIN_N, dtype=np.uint32)
        check("cuMemcpyDtoH", drv.cuMemcpyDtoH(out.ctypes.data, dy, out.nbytes))
    finally:
        check("cuMemFree", drv.cuMemFree(dx))
        check("cuMemFree", drv.cuMemFree(dy))
        check("cuModuleUnload", drv.cuModuleUnload(module))
    return int(np.count_nonzero(out != chain_reference(data)))


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    cc = device.describe()["compute_capability"].replace(".", "")
    raw: dict[str, Any] = {"arch": f"sm_{cc}", "virtual": f"compute_{cc}", "steps": STEPS, "calls": host_calls.CALLS}
    rounds = max(MIN_ROUNDS, repeats)
    images = _compile_rounds(raw, raw["arch"], raw["virtual"], rounds)
    raw["ptx_lines"] = {size: ptx_lines(images[f"{size}_ptx"]) for size in KERNELS}
    raw["cubin_bytes"] = {size: len(images[f"{size}_cubin"]) for size in KERNELS}
    module, _ = device.load(images["small_cubin"])
    raw["saxpy_correct"] = bool(saxpy.run(device, module)["correct"])
    check("cuModuleUnload", device.driver.cuModuleUnload(module))
    raw["chain_n"], raw["chain_wrong"] = CHAIN_N, _run_chain(device, images["large_cubin"])
    driver_version = int(check("cuDriverGetVersion", device.driver.cuDriverGetVersion()))
    raw["versions"] = {"driver": driver_version, "runtime": None, "nvrtc": nvrtc_version()}
    empty, _ = device.load(compile_source(EMPTY_SOURCE, "empty.cu", raw["arch"]).image)
    host_calls.measure(device, device.function(empty, "empty"), raw)
    check("cuModuleUnload", device.driver.cuModuleUnload(empty))
    raw["nvml"] = host_calls.nvml_versions(device)
    return summarise(raw, repeats=rounds)


def _host(name: str, samples: list[float], unit: str, what: str, taken: str) -> Result:
    description = f"host cost: {what}, from Python (cuda-bindings), timed with perf_counter ({taken}); {HOST}"
    return median_result(name, samples, unit, description, 4, 4, "host")


def summarise(raw: dict[str, Any], repeats: int) -> Outcome:
    """Gates and results from the raw numbers run() collected (pure: the CPU test feeds it fixtures)."""
    outcome = Outcome(repeats=repeats)
    outcome.gate("saxpy compiled by NVRTC to a cubin ran correctly", raw["saxpy_correct"])
    n, wrong = raw["chain_n"], raw["chain_wrong"]
    outcome.gate(
        f"the large kernel's cubin computed the {raw['steps']}-step hash chain as the CPU did for {n} inputs",
        wrong == 0,
        f"{wrong} of {n} outputs differ",
    )
    lines = raw["ptx_lines"]["large"]
    outcome.gate(
        "the large kernel's PTX has at least 2 lines per step (the steps stayed unrolled)",
        lines >= 2 * raw["steps"],
        f"{lines} lines for {raw['steps']} steps",
    )
    outcome.gate(
        "every timed driver and runtime call returned success", not raw["failures"], ", ".join(raw["failures"])
    )
    timings = [s for group in raw["compile_s"].values() for s in group]
    timings += [s for side in ("driver_us", "runtime_us") for group in raw[side].values() for s in group]
    outcome.gate("every host cost is positive", all(t > 0 for t in timings))
    nvml = raw["nvml"]
    if "cuda_driver_version" in nvml:
        outcome.gate(
            "cuDriverGetVersion and NVML name the same CUDA driver version",
            nvml["cuda_driver_version"] == raw["versions"]["driver"],
            f"cuDriverGetVersion {raw['versions']['driver']}, NVML {nvml['cuda_driver_version']}",
        )
    outcome.add(*_results(raw))
    return outcome


def _results(raw: dict[str, Any]) -> list[Result]:
    out: list[Result] = []
    rounds = f"median of {len(raw['compile_s']['small_ptx'])} compiles, NVRTC already loaded"
    for size, (_, file) in KERNELS.items():
        for kind, target in (("ptx", raw["virtual"]), ("cubin", raw["arch"])):
            ms = [s * 1000 for s in raw["compile_s"][f"{size}_{kind}"]]
            what = f"NVRTC compile of the {size} kernel ({file}) to {kind.upper()} for {target}, in-process"
            out.append(_host(f"nvrtc_{size}_{kind}", ms, "ms", what, rounds))
    for size, (_, file) in KERNELS.items():
        out.append(Result(f"{size}_ptx_lines", raw["ptx_lines"][size], "lines", f"lines of PTX NVRTC wrote for {file}"))
        out.append(
            Result(f"{size}_cubin_bytes", raw["cubin_bytes"][size], "bytes", f"size of the cubin NVRTC made of {file}")
        )
    for kind, side, name, call, what in CALLS:
        if samples := raw[f"{side}_us"].get(kind):
            each = "alloc+free pairs" if kind == "alloc" else "calls"
            taken = f"median of {len(samples)} batches of {raw['calls'][kind]} {each}, each batch's mean per call"
            out.append(_host(name, samples, "µs", f"{call} ({side} API): {what}", taken))
    runtime, versions, nvml = raw["runtime"], raw["versions"], raw["nvml"]
    out += [
        Result("runtime_bindings_importable", runtime["importable"], "", "can cuda.bindings.runtime be imported?"),
        Result(
            "runtime_launch_kernel_bound",
            runtime["launch_bound"],
            "",
            "does cuda.bindings.runtime bind cudaLaunchKernel (else kernels launch through the driver API)?",
        ),
        Result("runtime_api_error", runtime["error"], "", "the error a runtime API call gave before timing, or none"),
        Result(
            "cuda_driver_version",
            host_calls.version_text(versions["driver"]),
            "",
            "cuDriverGetVersion: the newest CUDA version the driver (libcuda) supports",
        ),
        Result("nvrtc_version", versions["nvrtc"], "", "nvrtcVersion: NVRTC's major.minor"),
    ]
    if versions["runtime"] is not None:
        out += [
            Result(
                "cuda_runtime_version",
                host_calls.version_text(versions["runtime"]),
                "",
                "cudaRuntimeGetVersion: the CUDA runtime cuda.bindings.runtime carries (linked statically)",
            ),
            Result(
                "runtime_newer_than_driver",
                versions["runtime"] > versions["driver"],
                "",
                "is the runtime's CUDA version newer than the driver's (minor-version compatibility)?",
            ),
        ]
    if "error" in nvml:
        return [*out, Result("nvml_driver_version", f"NVML {nvml['error']}", "", "NVML's driver version")]
    return [
        *out,
        Result(
            "nvml_driver_version", nvml["driver_version"], "", "nvmlSystemGetDriverVersion: the kernel driver's release"
        ),
        Result(
            "nvml_cuda_driver_version",
            host_calls.version_text(nvml["cuda_driver_version"]),
            "",
            "nvmlSystemGetCudaDriverVersion: the CUDA version the installed driver supports",
        ),
        Result("nvml_version", nvml["nvml_version"], "", "nvmlSystemGetNVMLVersion: NVML's own version"),
    ]
