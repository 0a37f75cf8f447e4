"""distributed-shared-memory on the CPU: its kernels compile for sm_90, pass the cluster barrier
before and after their remote reads, the CPU's checksum is the kernel's formula, and the gates
and results come out of fixture numbers as the page will show them."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from verifier.cuda import compile_source
from verifier.experiments import distributed_shared_memory as ds
from verifier.kernels import dsmem

# Fixture values, written by hand for this test: not measurements. Per load: own 30 cycles,
# through the cluster window 33, another block's 200 (210 in clusters of 8); streaming, own
# 120 bytes per clock, another block's 32; clusters of 2, 4, 8: 66, 33, 16 fit at once.
ACTIVE = {2: 66, 4: 33, 8: 16}
REMOTE_CYCLES = {2: 200.0, 4: 200.0, 8: 210.0}


def latency_rows(n: int, blocks: int, **change: Any) -> list[list[int]]:
    rows = []
    for _ in range(ds.LAUNCHES):
        for b in range(blocks):
            sm = 2 * b  # each block on an SM of its own
            remote = int(REMOTE_CYCLES[n] * dsmem.STEPS) + b
            target_sm = 2 * (b - b % n + (b % n + 1) % n)
            row = [30 * dsmem.STEPS, 33 * dsmem.STEPS, remote, 0, n, b % n, sm, target_sm, 7, b // n]
            rows.append(row)
    for index, value in change.items():
        rows[3][int(index[1:])] = value
    return rows


def read_case(blocks: int, n: int, per_clock: float, remote: bool, mhz: float = 1980.0) -> dict[str, Any]:
    per_block = dsmem.PASSES * dsmem.BW_BYTES
    cycles = [int(per_block / per_clock)] * (blocks * ds.LAUNCHES)
    ms = per_block / per_clock / (mhz * 1e3) * 1.05  # the whole launch: a little over the loop
    return {
        "ms": [ms] * 10,
        "stopped": "spread",
        "reps": 8,
        "held": 0,
        "kernel_ms": [ms * 0.99] * 10,
        "clock_mhz": [mhz] * 10,
        "method": "gpu-queued",
        "sums": ds.expected_sums(blocks, n, remote),
        "cycles": cycles,
    }


def fixture() -> dict[str, Any]:
    sizes: dict[int, Any] = {}
    for n in ds.SIZES:
        blocks = ACTIVE[n] * n
        sizes[n] = {"active": ACTIVE[n], "active_latency": ACTIVE[n], "blocks": blocks}
        sizes[n]["latency"] = latency_rows(n, blocks)
        sizes[n]["remote"] = read_case(blocks, n, 32.0, True)
    sizes[2]["local"] = read_case(ACTIVE[2] * 2, 2, 120.0, False)
    return {"sms": 132, "sizes": sizes}


def values(outcome: Any) -> dict[str, Any]:
    return {r.name: r for r in outcome.results}


def failed(raw: dict[str, Any]) -> list[str]:
    return [g.name for g in ds.summarise(raw).gates if not g.passed]


def ptx(kernel: str) -> str:
    text = compile_source(dsmem.SOURCE, "dsmem.cu", "compute_90").image.decode()
    start = text.index(f".entry {kernel}(")
    end = text.find(".entry", start + 1)
    return text[start : end if end > 0 else None]


def test_the_kernels_compile_for_sm_90() -> None:
    cubin = compile_source(dsmem.SOURCE, "dsmem.cu", "sm_90")
    assert cubin.kind == "cubin" and cubin.image[:4] == b"\x7fELF"


@pytest.mark.parametrize("kernel", ["dsmem_latency", "dsmem_read"])
def test_every_remote_read_lies_between_two_cluster_barriers(kernel: str) -> None:
    text = ptx(kernel)
    arrive = [m.start() for m in re.finditer(r"barrier\.cluster\.arrive\.release", text)]
    wait = [m.start() for m in re.finditer(r"barrier\.cluster\.wait\.acquire", text)]
    remote = [m.start() for m in re.finditer(r"ld\.shared::cluster", text)]
    assert len(arrive) == len(wait) == 2 and remote and "mapa.shared::cluster" in text
    assert arrive[0] < wait[0] < min(remote) and max(remote) < arrive[1] < wait[1]


def test_the_latency_chases_are_loads_alone() -> None:
    text = ptx("dsmem_latency")
    chain = re.findall(r"ld\.shared(?:::cluster)?\.u32 (%r\d+), \[(%r\d+)\];", text)
    assert chain and all(dst == src for dst, src in chain[:16])


def test_the_checksum_is_the_kernels_formula() -> None:
    assert dsmem.word(0, 0) == 0 and dsmem.word(0, 1) == dsmem.MULT
    assert dsmem.word(3, 5) == ((5 ^ (3 << 20)) * dsmem.MULT) % 2**32
    assert dsmem.read_sum(1, passes=2) == 2 * sum(dsmem.word(1, j) for j in range(dsmem.BW_BYTES // 4)) % 2**32
    assert ds.expected_sums(4, 2, True)[:4] == [dsmem.read_sum(r) for r in (1, 0, 1, 0)]
    assert ds.expected_sums(4, 2, False)[:4] == [dsmem.read_sum(r) for r in (0, 1, 0, 1)]
    assert dsmem.SHARED_BYTES * 2 > 233472  # an H200 SM's shared memory holds one such block, not two


def test_fixture_gives_every_result_and_passing_gates() -> None:
    outcome = ds.summarise(fixture())
    assert not [g.name for g in outcome.gates if not g.passed]
    got = values(outcome)
    assert got["local_latency_cycles"].value == 30.0 and got["local_latency_cycles"].method == "in-kernel"
    assert got["cluster_self_latency_cycles"].value == 33.0
    assert got["remote_latency_cycles_c2"].value == 200.0 and got["remote_latency_cycles_c8"].value == 210.0
    assert got["remote_over_local_latency_c2"].value == 6.67
    assert got["max_active_clusters_c4"].value == 33 and got["blocks_c8"].value == 128
    assert got["local_bytes_per_clock_per_sm"].value == 120.0
    assert got["remote_c4_bytes_per_clock_per_sm"].value == 32.0 and got["remote_c4_fraction_of_local"].value == 26.7
    assert got["remote_c2_gbs"].unit == "GB/s" and got["remote_c2_read_clock"].value == 1980
    per_block = dsmem.PASSES * dsmem.BW_BYTES
    want = 132 * per_block / (per_block / 32.0 / 1980e3 * 1.05 * 1e-3) / 1e9
    assert got["remote_c2_gbs"].value == round(want, 1)
    assert outcome.repeats == ds.LAUNCHES


def test_a_wrong_cluster_shape_fails() -> None:
    raw = fixture()
    raw["sizes"][4]["latency"] = latency_rows(4, 132, s4=2)  # a block saw clusters of 2
    shape = "each block saw the cluster size launched, its rank (block index mod size) and its cluster id"
    assert failed(raw) == [shape]
    raw["sizes"][4]["latency"] = latency_rows(4, 132, s5=0)  # block 3 saw rank 0
    assert len(failed(raw)) == 1


def test_a_word_read_wrong_fails_and_reports_nothing() -> None:
    for change in ({"s3": 1}, {"s8": 3}):  # a mismatched word; the remote chase ended elsewhere
        raw = fixture()
        raw["sizes"][2]["latency"] = latency_rows(2, 132, **change)
        outcome = ds.summarise(raw)
        assert not outcome.gates[-1].passed and outcome.results == []
    raw = fixture()
    raw["sizes"][8]["remote"]["sums"][5] += 1
    assert "checksums differ" in ds.summarise(raw).gates[-1].detail


def test_a_target_on_the_same_sm_a_rate_above_the_banks_or_a_missing_size_fails() -> None:
    raw = fixture()
    raw["sizes"][2]["latency"] = latency_rows(2, 132, s7=6)  # block 3 (SM 6) read a block on SM 6
    assert failed(raw) == ["every block's remote reads went to a block on another SM"]
    fast = fixture()
    fast["sizes"][2]["local"] = read_case(132, 2, 140.0, False)
    assert failed(fast) == ["the own-memory read is at most 128 bytes per clock per SM (32 banks × 4 bytes)"]
    broken = copy.deepcopy(fixture())
    broken["sizes"][8] = {"error": "cuLaunchKernelEx: CUDA_ERROR_CLUSTER_OUT_OF_RESOURCES"}
    outcome = ds.summarise(broken)
    assert [g.name for g in outcome.gates if not g.passed] == ["clusters of 8 launched and ran"]
    assert "remote_latency_cycles_c8" not in values(outcome) and "remote_latency_cycles_c4" in values(outcome)
