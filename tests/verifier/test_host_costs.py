"""host-costs on the CPU: its kernels compile for sm_90 and the large one is the chain the CPU
reference computes; its batches alternate the two APIs and catch a failed call; and its gates and
results come out of fixture numbers as the page will show them, every timing a host cost."""

from __future__ import annotations

import re
from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import CudaError, compile_source
from verifier.experiments import host_costs as hc
from verifier.kernels import saxpy

from verifier import host_calls

NAMES = [
    "nvrtc_small_ptx",
    "nvrtc_small_cubin",
    "nvrtc_large_ptx",
    "nvrtc_large_cubin",
    "small_ptx_lines",
    "small_cubin_bytes",
    "large_ptx_lines",
    "large_cubin_bytes",
    "driver_version_call",
    "runtime_version_call",
    "driver_ctx_synchronize",
    "runtime_device_synchronize",
    "driver_alloc_free_1mib",
    "runtime_alloc_free_1mib",
    "driver_launch_submit",
    "runtime_bindings_importable",
    "runtime_launch_kernel_bound",
    "runtime_api_error",
    "cuda_driver_version",
    "nvrtc_version",
    "cuda_runtime_version",
    "runtime_newer_than_driver",
    "nvml_driver_version",
    "nvml_cuda_driver_version",
    "nvml_version",
]


def fixture(**change: Any) -> dict[str, Any]:
    # Numbers of plausible size for an H200 node's host, written by hand for this test: not measurements.
    raw: dict[str, Any] = {
        "arch": "sm_90",
        "virtual": "compute_90",
        "steps": hc.STEPS,
        "calls": host_calls.CALLS,
        "compile_s": {
            "small_ptx": [0.016, 0.017, 0.015],
            "small_cubin": [0.023, 0.024, 0.022],
            "large_ptx": [0.38, 0.39, 0.37],
            "large_cubin": [0.65, 0.66, 0.64],
        },
        "ptx_lines": {"small": 60, "large": 6192},
        "cubin_bytes": {"small": 3976, "large": 134784},
        "saxpy_correct": True,
        "chain_n": hc.CHAIN_N,
        "chain_wrong": 0,
        "versions": {"driver": 13000, "runtime": 13030, "nvrtc": "13.0"},
        "runtime": {"importable": True, "error": "none", "launch_bound": False},
        "driver_us": {"version": [0.2, 0.21, 0.19], "sync": [1.5, 1.6, 1.4], "alloc": [12.0, 13.0], "launch": [6.0]},
        "runtime_us": {"version": [0.18, 0.2], "sync": [1.7, 1.8, 1.6], "alloc": [14.0, 15.0, 13.0]},
        "failures": [],
        "nvml": {"driver_version": "580.159.04", "cuda_driver_version": 13000, "nvml_version": "13.580.159.04"},
    }
    return raw | change


def by_name(raw: dict[str, Any]) -> dict[str, Any]:
    return {r.name: r for r in hc.summarise(raw, repeats=3).results}


def test_the_kernels_compile_for_sm_90_and_the_large_one_stays_large() -> None:
    for source in (hc.EMPTY_SOURCE, hc.CHAIN_SOURCE):
        cubin = compile_source(source, "k.cu", "sm_90")
        assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"
    assert hc.KERNELS["small"][0] is saxpy.SOURCE
    small = hc.ptx_lines(compile_source(saxpy.SOURCE, "saxpy.cu", "compute_90").image)
    ptx = compile_source(hc.CHAIN_SOURCE, "chain.cu", "compute_90").image
    assert hc.ptx_lines(ptx) >= 3 * hc.STEPS > 20 * small  # thousands of lines: the steps were not rolled up
    assert b".entry chain" in ptx


def test_the_kernel_runs_the_steps_the_cpu_reference_runs() -> None:
    """One shift and one multiply-add by constants per step (step 0 adds 0: a multiply), each with
    the constants chain_reference uses for that step: the kernel and the CPU run the same steps."""
    ptx = compile_source(hc.CHAIN_SOURCE, "chain.cu", "compute_90").image.decode()
    mads = re.findall(r"mad\.lo\.s32\s+%r\d+, %r\d+, (-?\d+), (\d+);", ptx)
    signed = [(0x9E3779B1 + 2 * k) - (1 << 32) for k in range(hc.STEPS)]
    assert mads == [(str(signed[k]), str(k)) for k in range(1, hc.STEPS)]
    assert re.search(rf"mul\.lo\.s32\s+%r\d+, %r\d+, {signed[0]};", ptx)
    shifts = re.findall(r"shr\.u32\s+%r\d+, %r\d+, (\d+);", ptx)
    assert shifts == [str(7 + k % 19) for k in range(hc.STEPS)]


def test_cpu_reference_is_the_chain_step_by_step() -> None:
    def scalar(h: int, steps: int) -> int:
        for k in range(steps):
            h = ((h ^ (h >> (7 + k % 19))) * (0x9E3779B1 + 2 * k) + k) % (1 << 32)
        return h

    values = [0, 1, 0xDEADBEEF, (1 << 32) - 1]
    assert [int(v) for v in hc.chain_reference(values, 40)] == [scalar(v, 40) for v in values]
    assert list(hc.chain_reference(values, 40)) != list(hc.chain_reference(values, 39))


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = hc.summarise(fixture(), repeats=3)
    assert [g.passed for g in outcome.gates] == [True] * 6
    got = {r.name: r for r in outcome.results}
    assert list(got) == NAMES
    assert got["nvrtc_large_cubin"].value == 650.0 and got["nvrtc_large_cubin"].unit == "ms"
    assert got["nvrtc_large_cubin"].samples == [650.0, 660.0, 640.0]
    assert "chain.cu" in got["nvrtc_large_cubin"].description and "sm_90" in got["nvrtc_large_cubin"].description
    assert "compute_90" in got["nvrtc_small_ptx"].description
    assert got["large_ptx_lines"].value == 6192 and got["large_ptx_lines"].unit == "lines"
    assert got["small_cubin_bytes"].value == 3976 and got["small_cubin_bytes"].unit == "bytes"
    assert got["driver_ctx_synchronize"].value == 1.5 and got["driver_ctx_synchronize"].unit == "µs"
    assert got["runtime_alloc_free_1mib"].value == 14.0
    assert "cudaMalloc+cudaFree" in got["runtime_alloc_free_1mib"].description
    assert "host submission cost" in got["driver_launch_submit"].description
    assert "not GPU time" in got["driver_launch_submit"].description
    assert got["cuda_driver_version"].value == "13.0" and got["cuda_runtime_version"].value == "13.3"
    assert got["runtime_newer_than_driver"].value is True and got["runtime_launch_kernel_bound"].value is False
    assert got["nvml_cuda_driver_version"].value == "13.0" and got["nvml_driver_version"].value == "580.159.04"


def test_every_timing_is_a_host_cost_and_nothing_else_is() -> None:
    got = by_name(fixture())
    timed = {name for name, r in got.items() if r.samples}
    assert timed == {n for n in NAMES if got[n].unit in ("ms", "µs")}
    assert len(timed) == 11
    for name in timed:
        r = got[name]
        assert r.method == "host", name
        assert r.description.startswith("host cost: ") and r.description.endswith("the host CPU is in the provenance")
    assert all(r.method == "" for name, r in got.items() if name not in timed)


def test_without_the_runtime_bindings_the_driver_side_is_still_measured() -> None:
    runtime = {"importable": False, "error": "cuda.bindings.runtime is not importable: x", "launch_bound": False}
    raw = fixture(runtime=runtime, runtime_us={}, versions={"driver": 13000, "runtime": None, "nvrtc": "13.0"})
    outcome = hc.summarise(raw, repeats=3)
    assert all(g.passed for g in outcome.gates)
    got = {r.name: r for r in outcome.results}
    assert got["runtime_bindings_importable"].value is False and "not importable" in str(got["runtime_api_error"].value)
    assert "driver_ctx_synchronize" in got
    assert not {"runtime_device_synchronize", "cuda_runtime_version", "runtime_newer_than_driver"} & set(got)


def test_nvml_unread_is_said_and_nvml_disagreeing_fails() -> None:
    outcome = hc.summarise(fixture(nvml={"error": "absent (nvidia-ml-py is not installed)"}), repeats=3)
    assert len(outcome.gates) == 5 and all(g.passed for g in outcome.gates)
    got = {r.name: r for r in outcome.results}
    assert got["nvml_driver_version"].value == "NVML absent (nvidia-ml-py is not installed)"
    assert "nvml_cuda_driver_version" not in got
    nvml = fixture()["nvml"] | {"cuda_driver_version": 12080}
    gate = hc.summarise(fixture(nvml=nvml), repeats=3).gates[-1]
    assert not gate.passed and gate.detail == "cuDriverGetVersion 13000, NVML 12080"


@pytest.mark.parametrize(
    ("change", "gate"),
    [
        ({"saxpy_correct": False}, 0),
        ({"chain_wrong": 3}, 1),
        ({"ptx_lines": {"small": 60, "large": 40}}, 2),
        ({"failures": ["runtime alloc batch 4"]}, 3),
        ({"driver_us": {"version": [0.0]}}, 4),
    ],
)
def test_each_gate_fails_on_its_own_fault(change: dict[str, Any], gate: int) -> None:
    gates = hc.summarise(fixture(**change), repeats=3).gates
    assert [i for i, g in enumerate(gates) if not g.passed] == [gate]


class FakeDriver:
    """The driver calls measure() makes, each returning success as cuda.bindings does (a tuple)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any) -> tuple[int, ...]:
            self.calls.append(name)
            return (0, 1) if name in ("cuDriverGetVersion", "cuMemAlloc") else (0,)

        return call


class FakeDevice:
    def __init__(self) -> None:
        self.driver, self.dev = FakeDriver(), 0


def test_batches_alternate_the_apis_and_a_failed_call_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[str] = []

    def version(side: str, number: int) -> Any:
        def call() -> tuple[int, int]:
            order.append(side)
            return (0, number)

        return call

    def runtime_side(device: Any, raw: dict[str, Any]) -> dict[str, Any]:
        raw["runtime"] = {"importable": True, "error": "none", "launch_bound": False}
        return {
            "version": version("runtime", 13030),
            "sync": lambda: (0,),
            "alloc": lambda: [(0, 1), (1,)],  # the free fails
        }

    monkeypatch.setattr(host_calls, "runtime_calls", runtime_side)
    monkeypatch.setattr(host_calls, "CALLS", {"version": 1, "sync": 2, "alloc": 2, "launch": 3})
    device = FakeDevice()
    raw: dict[str, Any] = {"versions": {}}
    original = host_calls.driver_calls(device, empty=None)  # type: ignore[arg-type]
    monkeypatch.setattr(
        host_calls,
        "driver_calls",
        lambda d, e: original | {"version": version("driver", 13000)},
    )
    host_calls.measure(device, None, raw)  # type: ignore[arg-type]
    assert order[:2] == ["driver", "runtime"]  # the warm-up
    assert order[2:8] == ["driver", "runtime", "runtime", "driver", "driver", "runtime"]
    assert {k: len(v) for k, v in raw["driver_us"].items()} == dict.fromkeys(("version", "sync", "alloc", "launch"), 15)
    assert set(raw["runtime_us"]) == {"version", "sync", "alloc"}
    assert len(raw["failures"]) == host_calls.BATCHES and raw["failures"][0] == "runtime alloc batch 0"
    assert device.driver.calls.count("cuLaunchKernel") == 3 * (host_calls.BATCHES + 1)


def test_codes_and_the_runtime_check() -> None:
    assert host_calls.codes((0, 13000)) == [0] and host_calls.codes([(0, 5), (700,)]) == [0, 700]
    us, returned = host_calls.batch(lambda: (0,), 50)
    assert us > 0 and returned == [(0,)] * 50
    runtime = pytest.importorskip("cuda.bindings.runtime")
    assert host_calls.runtime_check(runtime, "x", (runtime.cudaError_t.cudaSuccess, 7)) == 7
    with pytest.raises(CudaError) as err:
        host_calls.runtime_check(runtime, "cudaMalloc", (runtime.cudaError_t.cudaErrorInvalidValue,))
    assert err.value.name == "cudaErrorInvalidValue" and err.value.call == "cudaMalloc"
    assert host_calls.version_text(13030) == "13.3" and host_calls.version_text(12080) == "12.8"
