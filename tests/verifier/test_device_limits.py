"""device-limits on the CPU: the driver's raw integers (fixture values) become named results with
units, two derived values, and the gates (every attribute read; a 32-thread warp)."""

from __future__ import annotations

from verifier.experiments import device_limits

# Fixture values, plausible for an H200: not measurements (the GPU run records the real ones).
H200: device_limits.Raw = {
    "warp_size": 32,
    "sm_count": 132,
    "max_threads_per_block": 1024,
    "max_threads_per_sm": 2048,
    "max_blocks_per_sm": 32,
    "registers_per_sm": 65536,
    "registers_per_block": 65536,
    "shared_memory_per_sm": 233472,
    "shared_memory_per_block": 49152,
    "shared_memory_per_block_optin": 232448,
    "reserved_shared_memory_per_block": 1024,
    "l2_cache_size": 52428800,
    "max_persisting_l2_size": 82837504,
    "memory_bus_width": 6144,
    "memory_clock_rate": 3201000,
    "sm_clock_rate": 1980000,
    "cluster_launch": 1,
    "compute_capability_major": 9,
    "compute_capability_minor": 0,
    "async_engine_count": 3,
    "unified_addressing": 1,
    "managed_memory": 1,
    "concurrent_kernels": 1,
    "total_global_memory": 150754820096,
}


def values(raw: device_limits.Raw) -> dict[str, object]:
    return {r.name: r.value for r in device_limits.summarise(raw).results}


def test_every_attribute_is_a_named_result_with_its_unit_and_the_gates_pass() -> None:
    outcome = device_limits.summarise(H200)
    assert outcome.repeats == 1
    assert [(g.name, g.passed) for g in outcome.gates] == [
        ("every device attribute was read", True),
        ("the warp size is 32 threads", True),
    ]
    by_name = {r.name: r for r in outcome.results}
    assert len(by_name) == len(outcome.results) == len(device_limits.ATTRIBUTES) + 3, "each value named once"
    assert (by_name["sm_count"].value, by_name["sm_count"].unit) == (132, "SMs")
    assert (by_name["shared_memory_per_block_optin"].value, by_name["shared_memory_per_block_optin"].unit) == (
        232448,
        "bytes",
    )
    assert by_name["reserved_shared_memory_per_block"].value == 1024
    assert (by_name["memory_clock_rate"].value, by_name["memory_clock_rate"].unit) == (3201.0, "MHz")
    assert by_name["sm_clock_rate"].value == 1980.0
    assert by_name["cluster_launch"].value is True and by_name["concurrent_kernels"].value is True
    assert (by_name["total_global_memory"].value, by_name["total_global_memory"].unit) == (150754820096, "bytes")
    assert (by_name["max_warps_per_sm"].value, by_name["max_warps_per_sm"].unit) == (64, "warps/SM")
    assert "derived" in by_name["max_warps_per_sm"].description
    bandwidth = by_name["theoretical_memory_bandwidth"]
    assert (bandwidth.value, bandwidth.unit) == (4916.7, "GB/s")  # 2 × 3.201 GHz × 6144 bits ÷ 8
    assert "double data rate" in bandwidth.description and "not measured" in bandwidth.description
    assert all(r.samples == [] for r in outcome.results)
    assert all("CU_DEVICE_ATTRIBUTE_" in by_name[name].description for name, *_ in device_limits.ATTRIBUTES)


def test_a_wrong_warp_size_fails_its_gate() -> None:
    outcome = device_limits.summarise({**H200, "warp_size": 64})
    gate = next(g for g in outcome.gates if g.name == "the warp size is 32 threads")
    assert not gate.passed and gate.detail == "the driver says 64"


def test_an_unread_attribute_fails_the_read_gate_and_is_recorded_as_none() -> None:
    raw = {**H200, "reserved_shared_memory_per_block": "cuDeviceGetAttribute: CUDA_ERROR_INVALID_VALUE (1): bad"}
    outcome = device_limits.summarise(raw)
    gate = outcome.gates[0]
    assert not gate.passed and gate.detail.startswith("reserved_shared_memory_per_block: cuDeviceGetAttribute")
    assert values(raw)["reserved_shared_memory_per_block"] is None
    missing = {k: v for k, v in H200.items() if k != "total_global_memory"}
    assert not device_limits.summarise(missing).gates[0].passed


def test_clocks_gate_nothing_and_a_zero_memory_clock_derives_no_bandwidth() -> None:
    raw = {**H200, "memory_clock_rate": 0, "sm_clock_rate": "this cuda-bindings has no CU_DEVICE_ATTRIBUTE_CLOCK_RATE"}
    outcome = device_limits.summarise(raw)
    assert all(g.passed for g in outcome.gates)
    got = values(raw)
    assert got["memory_clock_rate"] == 0.0 and got["sm_clock_rate"] is None
    assert got["theoretical_memory_bandwidth"] is None
