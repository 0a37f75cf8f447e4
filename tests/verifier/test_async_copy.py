"""async-copy on the CPU: its kernels compile for sm_90 and hold the instructions each path is
about, the CPU's sum follows the fill kernel's formula, and the gates and results come out of
fixture numbers as the page will show them."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import async_copy as ac
from verifier.kernels import tiles

# Fixture values shaped like an H200's (4814 GB/s in theory), written by hand for this test: not
# measurements. Rates: direct 4500, TMA 4400, cp.async 4300, plain 3800 GB/s.
ATTRS = {"sm_count": 132, "memory_clock_khz": 3_201_000, "bus_width_bits": 6016, "l2_bytes": 60 << 20}
RATES = {"plain": 3800.0, "cp_async": 4300.0, "tma": 4400.0, "direct": 4500.0}
REGISTERS = {"plain": 90, "cp_async": 40, "tma": 31, "direct": 83}
TOTAL = 34_225_520_640
DUMP = """
        /*0400*/                   UMOV UR8, UR4 ;
        /*0410*/                   UTMALDG.2D [UR8], [UR6] ;
        /*0420*/                   UTMALDG.2D [UR12], [UR6] ;
"""


def case(gbs: float, registers: int, n: int = 10, **change: Any) -> dict[str, Any]:
    ms = ac.WORDS * 4 / (gbs * 1e9) * 1e3
    samples = [ms * (1 + 0.002 * (i % 3 - 1)) for i in range(n)]
    raw = {"ms": samples, "stopped": "spread", "reps": 80, "held": 0, "method": "gpu-queued"}
    raw |= {"kernel_ms": [s * 0.995 for s in samples], "clock_mhz": [1980.0] * n}
    raw |= {"total": TOTAL, "registers": registers, "resident": 2, "tensor_map": ""}
    return raw | change


def fixture() -> dict[str, Any]:
    raw: dict[str, Any] = {"expected": TOTAL, "grid": 264}
    for method in ac.METHODS:
        raw[method] = case(RATES[method], REGISTERS[method])
    raw["tma"]["tensor_map"] = "cuda-python cuTensorMapEncodeTiled"
    raw["tma"]["sass"] = {"dump": DUMP}
    raw["plain"]["sass"] = {"missing": "cuobjdump is not on this node's PATH"}
    return raw


def values(outcome: Any) -> dict[str, Any]:
    return {r.name: r for r in outcome.results}


def ptx(kernel: str) -> str:
    text = compile_source(tiles.SOURCE, "tiles.cu", "compute_90").image.decode()
    start = text.index(f".entry {kernel}(")
    end = text.find(".entry", start + 1)
    return text[start : end if end > 0 else None]


def test_the_kernels_compile_for_sm_90() -> None:
    cubin = compile_source(tiles.SOURCE, "tiles.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"
    for method in ac.METHODS:
        assert f"tiles_{method}" in tiles.SOURCE


def test_each_path_holds_its_own_instructions_and_no_other() -> None:
    plain, cp, tma, direct = (ptx(f"tiles_{m}") for m in ac.METHODS)
    assert "ld.global" in plain and "st.shared" in plain and "cp.async" not in plain
    assert re.search(r"cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16;", cp)
    assert "cp.async.commit_group" in cp and f"cp.async.wait_group {tiles.STAGES - 2};" in cp
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in tma
    assert "mbarrier.try_wait.parity" in tma and "mbarrier.arrive.expect_tx" in tma
    assert "cp.async.cg" not in tma and "ld.global" not in tma.split("mbarrier.init")[1]
    # The tensor map is the first parameter, 128 bytes aligned to 64, addressed in param space.
    assert ".param .align 64 .b8 tiles_tma_param_0[128]" in tma and "cvta.param.u64" in tma
    assert "st.shared" not in direct and "ld.shared" not in direct


def test_the_cpu_sum_follows_the_fill_formula() -> None:
    words = 5000
    want = sum(((i * ac.MULT) % 2**32) >> 24 for i in range(words))
    assert ac.expected_total(words, chunk=777) == want
    assert ac.TILES == ac.WORDS * 4 // tiles.TILE_BYTES == 65536


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = ac.summarise(fixture(), ATTRS)
    failed = [g.name for g in outcome.gates if not g.passed]
    assert not failed and len(outcome.gates) == 7  # sums, one wave, four no-host-time, sanity
    got = values(outcome)
    assert got["tma_gbs"].value == 4400.0 and got["tma_gbs"].unit == "GB/s" and got["tma_gbs"].method == "gpu-queued"
    assert "cuda-python cuTensorMapEncodeTiled" in got["tma_gbs"].description
    assert got["plain_registers"].value == 90 and got["tma_registers"].unit == "registers/thread"
    assert got["tma_over_direct"].value == round(4400 / 4500, 3) == 0.978 and got["tma_over_direct"].unit == "×"
    assert got["plain_over_direct"].value == 0.844 and "direct_over_direct" not in got
    assert got["tma_clock"].value == 1980 and got["array_over_l2"].value == 17.1
    assert got["theoretical_gbs"].value == round(2 * 3_201_000e3 * 6016 / 8 / 1e9, 1)
    assert got["tma_sass_count"].value == 2 and got["tma_sass_mnemonic"].value == "UTMALDG.2D"
    assert "plain_sass_count" not in got and "cuobjdump" in str(got["plain_sass_note"].value)
    assert outcome.repeats == 10


def test_a_wrong_sum_fails_and_reports_nothing() -> None:
    raw = fixture()
    raw["cp_async"]["total"] = TOTAL - 255
    outcome = ac.summarise(raw, ATTRS)
    assert [g.passed for g in outcome.gates] == [False] and outcome.results == []
    assert "cp_async" in outcome.gates[0].detail


def test_a_failed_tensor_map_fails_its_gate_and_keeps_the_other_paths() -> None:
    raw = fixture()
    raw["tma"] = {"error": "cuTensorMapEncodeTiled: CUDA_ERROR_INVALID_VALUE (1)"}
    outcome = ac.summarise(raw, ATTRS)
    assert [g.name for g in outcome.gates if not g.passed] == ["the tma kernel compiled, loaded and ran"]
    got = values(outcome)
    assert "tma_gbs" not in got and got["cp_async_gbs"].value == 4300.0


def test_a_rate_over_the_theoretical_peak_or_host_time_or_a_second_wave_fails() -> None:
    raw = fixture()
    raw["direct"] = case(5200.0, 83)
    assert not ac.summarise(raw, ATTRS).gates[-1].passed
    late = copy.deepcopy(fixture())
    late["tma"]["ms"] = [t * 1.2 for t in late["tma"]["ms"]]
    assert [g.name for g in ac.summarise(late, ATTRS).gates if not g.passed] == [
        "no host time in the tma kernel (events agree with the in-kernel timer)"
    ]
    crowded = fixture()
    crowded["plain"]["resident"] = 1
    assert not ac.summarise(crowded, ATTRS).gates[1].passed
