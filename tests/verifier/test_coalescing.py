"""coalescing on the CPU: its kernel compiles for sm_90, every stride reads each element once,
and its gates and results from fixture data."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from verifier.experiments import coalescing as co


def elements(log2n: int, stride: int) -> list[int]:
    """The element each item k reads, by the kernel's own arithmetic (written again in Python)."""
    n, log2s = 1 << log2n, co.log2(stride)
    log2m = co.log2(stride // min(stride, co.SECTOR_FLOATS))
    shift, m = log2n - log2s, 1 << log2m
    out = []
    for k in range(n):
        p, i = k >> shift, k & ((1 << shift) - 1)
        out.append(i * stride + (p & (m - 1)) * (stride >> log2m) + (p >> log2m))
    return out


@pytest.mark.parametrize("stride", co.STRIDES)
def test_every_stride_reads_each_element_exactly_once(stride: int) -> None:
    log2n = 12
    read = elements(log2n, stride)
    assert sorted(read) == list(range(1 << log2n))
    assert sorted(co.pass_order(stride)) == list(range(stride))
    # Within a pass, consecutive items (a warp's threads) are `stride` elements apart.
    assert read[1] - read[0] == stride


@pytest.mark.parametrize("stride", [8, 16, 32, 64, 128])
def test_passes_sharing_a_sector_are_a_whole_buffer_apart(stride: int) -> None:
    """The passes whose offsets fall in one 8-float sector are stride / 8 passes apart, and
    stride / 8 passes fetch (n / stride sectors each) as many sectors as the buffer holds."""
    order = co.pass_order(stride)
    by_sector: dict[int, list[int]] = {}
    for p, r in enumerate(order):
        by_sector.setdefault(r // co.SECTOR_FLOATS, []).append(p)
    gap = stride // co.SECTOR_FLOATS
    for passes in by_sector.values():
        assert all(b - a == gap for a, b in itertools.pairwise(passes))


def test_kernel_compiles_for_sm_90() -> None:
    pytest.importorskip("cuda.bindings.nvrtc")
    from verifier.cuda import compile_source

    compiled = compile_source(co.SOURCE, "coalescing.cu", "sm_90")
    assert compiled.kind == "cubin" and compiled.image[:4] == b"\x7fELF"


def test_fill_is_exact_in_float32() -> None:
    np = pytest.importorskip("numpy")
    values = co.fill(1 << 12)
    assert values.dtype == np.float32 and values.min() >= 0 and values.max() <= 1023
    assert np.all(values == np.floor(values))


def raw_fixture() -> dict[str, Any]:
    # Fixture values, not measurements: 256 MiB in 0.07 ms at stride 1, eight times longer from stride 8.
    times = {1: 0.07, 2: 0.14, 4: 0.28, 8: 0.56, 16: 0.56, 32: 0.58, 64: 0.6, 128: 0.62}
    return {
        "bytes": 256 << 20,
        "expected": 123.0,
        "strides": {str(s): {"ms": [t] * 10 + [t * 1.02], "stopped": "spread", "sum": 123.0} for s, t in times.items()},
    }


def test_summary_of_good_fixture() -> None:
    outcome = co.summarise(raw_fixture())
    assert [g.passed for g in outcome.gates] == [True]
    values = {r.name: r.value for r in outcome.results}
    assert values["stride_1"] == pytest.approx((256 << 20) / 0.07e-3 / 1e9, abs=0.1)
    assert values["ratio_stride_8"] == 0.125 and values["ratio_stride_2"] == 0.5
    assert "ratio_stride_1" not in values
    assert {r.unit for r in outcome.results} == {"GB/s", "×"}
    assert outcome.repeats == 11


def test_a_wrong_checksum_fails() -> None:
    raw = raw_fixture()
    raw["strides"]["32"]["sum"] = 122.0
    gates = co.summarise(raw).gates
    assert not gates[0].passed and "stride 32" in gates[0].detail
