"""coalescing on the CPU: its kernels compile for sm_90, every stride reads each element once, the
expected sectors and DRAM bytes per stride and width, and its gates and results from fixture data."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from verifier.experiments import coalescing as co

CASES = [(w, s) for w in co.WIDTHS for s in co.STRIDES]


def elements(log2n: int, stride: int, width: int) -> list[int]:
    """The element each item k reads, by the kernel's own arithmetic (written again in Python)."""
    n, log2s = 1 << log2n, co.log2(stride)
    log2m = co.log2(co.passes_apart(stride, width))
    shift, m = log2n - log2s, 1 << log2m
    out = []
    for k in range(n):
        p, i = k >> shift, k & ((1 << shift) - 1)
        out.append(i * stride + (p & (m - 1)) * (stride >> log2m) + (p >> log2m))
    return out


@pytest.mark.parametrize(("width", "stride"), CASES)
def test_every_stride_reads_each_element_exactly_once(width: int, stride: int) -> None:
    log2n = 12
    read = elements(log2n, stride, width)
    assert sorted(read) == list(range(1 << log2n))
    assert sorted(co.pass_order(stride, width)) == list(range(stride))
    # Within a pass, consecutive items (a warp's lanes) are `stride` elements apart.
    assert read[1] - read[0] == stride


@pytest.mark.parametrize(("width", "stride"), CASES)
def test_passes_sharing_a_dram_piece_are_a_whole_buffer_of_traffic_apart(width: int, stride: int) -> None:
    """Passes whose offsets fall in one 64-byte piece are m passes apart, and m passes move (at
    the expected DRAM bytes per useful byte) as many bytes as the buffer holds."""
    order = co.pass_order(stride, width)
    by_piece: dict[int, list[int]] = {}
    for p, r in enumerate(order):
        by_piece.setdefault(r * width // co.DRAM_FETCH, []).append(p)
    m = co.passes_apart(stride, width)
    for passes in by_piece.values():
        assert all(b - a == m for a, b in itertools.pairwise(passes))
    n = co.BUFFER // width
    per_pass = n // stride * width * co.dram_per_byte(stride, width)
    assert m * per_pass == co.BUFFER


def touched(stride: int, width: int, unit: int) -> int:
    """Distinct `unit`-byte pieces a warp's 32 lanes touch, counted address by address (every pass)."""
    counts = set()
    for r in co.pass_order(stride, width):
        lanes = [((32 * 5 + lane) * stride + r) * width for lane in range(32)]  # warp 5 of the pass
        counts.add(len({b // unit for a in lanes for b in range(a, a + width)}))
    assert len(counts) == 1
    return counts.pop()


def test_the_expected_sectors_and_dram_bytes_per_stride() -> None:
    sectors = {w: [co.sectors_per_request(s, w) for s in co.STRIDES] for w in co.WIDTHS}
    assert sectors == {4: [4, 8, 16, 32, 32, 32, 32, 32], 16: [16, 32, 32, 32, 32, 32, 32, 32]}
    dram = {w: [co.dram_per_byte(s, w) for s in co.STRIDES] for w in co.WIDTHS}
    assert dram == {4: [1, 2, 4, 8, 16, 16, 16, 16], 16: [1, 2, 4, 4, 4, 4, 4, 4]}
    for w, s in CASES:
        assert touched(s, w, co.SECTOR) == co.sectors_per_request(s, w)
        assert touched(s, w, co.DRAM_FETCH) * co.DRAM_FETCH == co.dram_per_byte(s, w) * 32 * w
    # From stride 8 to 16 with floats the sectors per request stay 32: the fall is the 64-byte fetch.
    assert co.sectors_per_request(16, 4) == co.sectors_per_request(8, 4)
    assert co.dram_per_byte(16, 4) == 2 * co.dram_per_byte(8, 4)


def test_kernels_compile_for_sm_90() -> None:
    pytest.importorskip("cuda.bindings.nvrtc")
    from verifier.cuda import compile_source

    compiled = compile_source(co.SOURCE, "coalescing.cu", "sm_90")
    assert compiled.kind == "cubin" and compiled.image[:4] == b"\x7fELF"
    assert all(f"void {name}" in co.SOURCE or f"{name}(" in co.SOURCE for name in co.KERNELS.values())
    assert co.SOURCE.count("probe_begin(probe)") == 1 and co.SOURCE.count("probe_end(probe, mark)") == 1


def test_the_fill_is_exact_in_float32_and_its_sum_is_chunked(monkeypatch: pytest.MonkeyPatch) -> None:
    np = pytest.importorskip("numpy")
    values = co.fill_values(0, 1 << 12)
    assert values.dtype == np.float32 and values.min() >= 0 and values.max() <= 1023
    assert np.all(values == np.floor(values))
    assert co.fill_values(100, 5).tolist() == values[100:105].tolist()
    monkeypatch.setattr(co, "CHUNK", 1000)
    assert co.expected_sum(1 << 12) == float(values.sum(dtype=np.float64))


def timed(ms: float, clock: float = 1980.0, **change: Any) -> dict[str, Any]:
    """A case's Timed.raw() as gpu.time() keeps it: per-run ms, in-kernel span and clock."""
    samples = [ms] * 10 + [ms * 1.02]
    raw = {"ms": samples, "stopped": "spread", "reps": 1, "held": 0, "method": "gpu-queued"}
    return raw | {"kernel_ms": [t * 0.99 for t in samples], "clock_mhz": [clock] * 11} | change


def raw_fixture(counters: Any = "not cross-checked: Nsight Compute (ncu) is not on this node") -> dict[str, Any]:
    # Fixture values, not measurements: 1 GiB at 4.4 TB/s at stride 1, slower by the DRAM bytes.
    cases = {}
    for w, s in CASES:
        ms = co.BUFFER / 4.4e9 * co.dram_per_byte(s, w)
        cases[co.label(w, s)] = timed(ms) | {"sum": 123.0, "width": w, "stride": s}
    return {"bytes": co.BUFFER, "expected": 123.0, "cases": cases, "counters": counters}


def test_summary_of_good_fixture() -> None:
    outcome = co.summarise(raw_fixture())
    assert all(g.passed for g in outcome.gates) and len(outcome.gates) == 1 + len(CASES)
    values = {r.name: r for r in outcome.results}
    assert values["stride_1"].value == pytest.approx(4400, abs=0.1) and values["stride_1"].method == "gpu-queued"
    assert values["float4_stride_1"].value == pytest.approx(4400, abs=0.1)
    assert values["ratio_stride_8"].value == 0.125 and values["ratio_stride_16"].value == 0.062
    assert values["float4_ratio_stride_2"].value == 0.5 and values["float4_ratio_stride_128"].value == 0.25
    assert "ratio_stride_1" not in values and "float4_ratio_stride_1" not in values
    assert values["read_clock"].value == 1980 and values["read_clock"].method == "in-kernel"
    assert values["counters"].method == "info" and "not cross-checked" in str(values["counters"].value)
    assert "16 DRAM bytes per useful byte expected" in values["stride_32"].description
    assert outcome.repeats == 11


def test_counters_give_dram_bytes_per_useful_byte_per_case() -> None:
    launches = [("fill", {"dram__bytes_read.sum": 0.0})]
    for w, s in CASES:
        launches.append((co.KERNELS[w], {"dram__bytes_read.sum": co.BUFFER * co.dram_per_byte(s, w)}))
    outcome = co.summarise(raw_fixture(launches))
    values = {r.name: r.value for r in outcome.results}
    assert values["stride_16_dram_per_byte"] == 16.0 and values["float4_stride_8_dram_per_byte"] == 4.0
    assert "counters" not in values and all(g.passed for g in outcome.gates)
    short = co.summarise(raw_fixture(launches[:5])).gates
    assert not short[-1].passed and short[-1].detail == f"4 for {len(CASES)} cases"


def test_host_time_in_a_sample_fails_its_gate() -> None:
    raw = raw_fixture()
    one = raw["cases"]["stride_1"]
    raw["cases"]["stride_1"] = one | {"ms": [t * 1.3 for t in one["ms"]]}  # events far longer than the kernel
    raw["cases"]["float4_stride_4"] |= {"held": 2}
    failed = [g for g in co.summarise(raw).gates if not g.passed]
    assert [g.name for g in failed] == [
        "no host time in float reads at stride 1 (events agree with the in-kernel timer)",
        "no host time in float4 reads at stride 4 (events agree with the in-kernel timer)",
    ]
    assert "hold timed out" in failed[1].detail


def test_a_wrong_checksum_fails() -> None:
    raw = raw_fixture()
    raw["cases"]["stride_32"]["sum"] = 122.0
    gates = co.summarise(raw).gates
    assert not gates[0].passed and "stride_32" in gates[0].detail
