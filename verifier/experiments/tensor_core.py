"""Tensor Cores: mma.sync and wgmma (FP16 inputs, FP32 accumulate), each checked on random data,
then timed in GPU time at the SM clock it settles to under load, and put per clock per SM.

Two instructions, the same FP16→FP32 arithmetic. mma.sync.m16n8k16 (verifier/kernels/mma_sync.py)
is the warp-level MMA (this shape since sm_80), operands in registers. wgmma.mma_async.m64n256k16
(verifier/kernels/wgmma.py, compiled by NVRTC for sm_90a) is the warpgroup MMA Hopper's Tensor
Cores are built for: 4 warps issue it together, A and B come from shared memory by descriptor,
the 64×256 FP32 accumulator stays in registers. Only 9.0 GPUs run wgmma (sm_90a code loads on
nothing else); elsewhere it is skipped and says why.

Correctness, before any timing: one mma.sync tile and one wgmma product (the very m64n256k16
that is timed, random FP16 A and B, random FP32 C) are compared with numpy's A·B + C in float64.
Random data in every position check the layouts themselves: a wrong descriptor (LBO and SBO
swapped, a wrong core-matrix order) or a wrong accumulator map moves values, and the error is
then of the order of the values, not of rounding. The timed kernels multiply the same random
tiles over and over (never zeros: zeros draw less power, so the clock would hold higher), and
each thread's sum of its accumulators is compared with the count of MMAs × its part of A·B.

Timing: each kernel runs for sustained.WARM_S (the clock falls under the power cap within that
time), then gpu.time samples it queued behind the wait kernel (no host time in a sample; each
sample SAMPLE_MS or more), the kernels timing themselves too (PROBE_SOURCE) and reading the SM
clock they ran at. The rate is 2·M·N·K dense flops per instruction; per clock per SM it is that
rate ÷ (in-kernel SM clock × SMs), set against the datasheet's dense FP16 peak per clock per SM,
so a power-cap clock drop (a lower clock) and the instruction's own ceiling (fewer flops per
clock) are told apart. NVML is read while the same work runs, for why the clock is held back.

What ran: each timed kernel's cubin (the same source, name and target through the same NVRTC)
is disassembled with cuobjdump where the node has it (verifier/sass.py); the file keeps how many
HMMA (mma.sync) or HGMMA (wgmma) instructions the kernel holds and the first one's mnemonic
(compared on a re-run: a compiler that changes them changes what ran), and the instructions
around it (information). Prediction for sm_90/sm_90a: each mma.sync.m16n8k16 becomes one
HMMA.16816.F32, so mma_loop holds a multiple of its ACC = 8 (more if ptxas unrolls the outer
loop too); each wgmma m64n256k16 one HGMMA.64x256x16.F32, so wgmma_loop holds UNROLL = 16 (the
commit and wait in every iteration keep ptxas from unrolling further). Observed on the first run
(2026-12-04, NVRTC for sm_90 and sm_90a, driver 580.159.04): 40 HMMA and 80 HGMMA, five times
each loop body: ptxas unrolled the outer loop by four (its counter steps by -4 beside the first
MMA) and kept one more copy for the remaining iterations; the wgmma prediction was wrong there.

Prediction, written before the first run on an H200 (132 SMs, 1980 MHz maximum, 700 W cap):
wgmma reaches 80-90% of 4096 FLOP/clk/SM; mma.sync about half of wgmma's rate per clock
(published Hopper microbenchmarks put it near 60%); under this sustained load the SM clock falls
below 1980 MHz, held back by the software power cap.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import CudaError, Device, compile_source
from verifier.experiment import Outcome, clock_result, failure, median_result, timed_result
from verifier.kernels import mma_sync, wgmma
from verifier.sass import disassemble, results

ID = "tensor-core"
PURPOSE = (
    "Tensor Core rate per SM clock of mma.sync m16n8k16 and wgmma m64n256k16 (FP16 to FP32), each checked "
    "against numpy, timed in GPU time at the clock it settles to under load"
)
USES = ("gpu.py", "timing.py", "sustained.py", "provenance.py", "sass.py", "kernels/mma_sync.py", "kernels/wgmma.py")

TOLERANCE = 1e-3
"""One product against numpy: FP16 products are exact in FP32, so only the FP32 sums round."""
LOOP_TOLERANCE = 1e-2
"""Thousands of FP32 accumulations of the same product round more; a skipped MMA is off by far more."""
SAMPLE_MS = 50.0
DENSE_FP16_FLOP_PER_CLOCK_PER_SM = {"8.0": 2048, "9.0": 4096}
"""Dense FP16 (FP32 accumulate) Tensor Core flops per clock per SM, from NVIDIA's datasheet peaks:
A100, 312 TFLOP/s ÷ 108 SMs ÷ 1.41 GHz; H100 and H200 SXM, 989.4 TFLOP/s ÷ 132 SMs ÷ 1.83 GHz
(the H100 architecture whitepaper's table; the H200 datasheet gives the same 989 TFLOP/s)."""
HELD_BACK = 0.01
"""An in-kernel clock more than 1% under the GPU's maximum is reported as held back."""


@dataclass(frozen=True)
class Instruction:
    name: str
    ptx: str
    flop: int
    issued_by: str
    check: str
    kernel: str = ""
    """The timed kernel, whose SASS the file keeps."""
    opcode: str = ""
    """The SASS mnemonic the instruction becomes (HMMA, HGMMA)."""
    arch: str = ""
    """What NVRTC compiles it for ('' for the GPU's own sm_XY)."""


INSTRUCTIONS = (
    Instruction(
        name="mma_sync",
        ptx="mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        flop=mma_sync.FLOP,
        issued_by="one warp, operands in registers",
        check="one m16n8k16 tile (random FP16 A and B, FP32 C) equals numpy's A times B plus C",
        kernel="mma_loop",
        opcode="HMMA",
    ),
    Instruction(
        name="wgmma",
        ptx="wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16",
        flop=wgmma.FLOP,
        issued_by="one warpgroup (4 warps), A and B from shared memory by descriptor",
        check="one wgmma m64n256k16 (random FP16 A and B in shared memory, no-swizzle layout; FP32 C) equals "
        "numpy's A times B plus C",
        kernel="wgmma_loop",
        opcode="HGMMA",
        arch="sm_90a",
    ),
)


def sustain(gpu: Any, work: Callable[[], None], probe: int) -> dict[str, Any]:
    """Warm-up to the steady clock, the queued samples (probed), then NVML under the same load."""
    from verifier.sustained import under_load, warm

    one_ms = gpu.queued(work)[0]
    warm_s = warm(gpu, work, one_ms)
    timed = gpu.time(work, warmup=1, probe=probe, min_ms=SAMPLE_MS)
    return {"timed": timed.raw(), "warm_s": round(warm_s, 3), "under_load": under_load(gpu, work, timed.median)}


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    attrs = device.sm_facts(clock=True)
    sms = attrs["sm_count"]
    rng = np.random.default_rng(26)
    with opened(device) as gpu:
        raw: dict[str, Any] = {"mma_sync": mma_sync.measure(gpu, rng, sms, sustain)}
        if attrs["cc"] == "9.0":
            try:
                raw["wgmma"] = wgmma.measure(gpu, rng, sms, sustain)
            except CudaError as exc:  # an NVRTC without sm_90a, say: the mma.sync results still stand
                raw["wgmma"] = {"error": failure(exc.as_result())}
        else:
            raw["wgmma"] = {"skipped": f"wgmma is sm_90a code, for compute capability 9.0; this GPU is {attrs['cc']}"}
        for ins, source in ((INSTRUCTIONS[0], mma_sync.SOURCE), (INSTRUCTIONS[1], wgmma.SOURCE)):
            if "timed" in raw[ins.name]:  # what ran: the same source, name and target through the same NVRTC
                image = compile_source(source, f"{ins.kernel}.cu", ins.arch or gpu.arch).image
                raw[ins.name]["sass"] = disassemble(image, ins.kernel)
    return summarise(raw, attrs)


def summarise(raw: dict[str, Any], attrs: dict[str, Any]) -> Outcome:
    """Gates and results from the raw numbers (pure: the CPU test feeds it fixture data)."""
    timed = [raw[i.name]["timed"]["ms"] for i in INSTRUCTIONS if "timed" in raw.get(i.name, {})]
    outcome = Outcome(repeats=min((len(t) for t in timed), default=0))
    peak = DENSE_FP16_FLOP_PER_CLOCK_PER_SM.get(attrs["cc"])
    clock_max = attrs["clock_khz"] / 1000 if attrs.get("clock_khz") else None
    if peak is not None:
        outcome.add(
            Result(
                "dense_fp16_peak_flop_per_clock_per_sm",
                peak,
                "FLOP/clock/SM",
                "dense FP16 (FP32 accumulate) Tensor Core peak per clock per SM, from NVIDIA's datasheet peak "
                "(H100/H200 SXM: 989.4 TFLOP/s ÷ 132 SMs ÷ 1.83 GHz; A100: 312 ÷ 108 ÷ 1.41 GHz)",
            )
        )
    if clock_max is not None:
        outcome.add(Result("sm_clock_max", round(clock_max), "MHz", "the GPU's maximum SM clock (device attribute)"))
    per_clock: dict[str, float] = {}
    for ins in INSTRUCTIONS:
        data = raw.get(ins.name)
        if data is not None and "skipped" in data:
            outcome.add(Result(f"{ins.name}_note", str(data["skipped"]), "", f"{ins.ptx} was not run"))
        elif data is not None and "error" in data:
            outcome.gate(f"the {ins.name} kernels compiled, loaded and ran", False, str(data["error"]))
        elif data is not None:
            value = instruction(outcome, ins, data, attrs["sm_count"], peak, clock_max)
            if value is not None:
                per_clock[ins.name] = value
            if "sass" in data:
                outcome.add(*results(ins.name, ins.kernel, ins.opcode, data["sass"]))
    if len(per_clock) == 2:
        share = 100 * per_clock["mma_sync"] / per_clock["wgmma"]
        what = "mma.sync's flops per clock per SM as a share of wgmma's, each at the clock it ran at"
        outcome.add(Result("mma_sync_vs_wgmma_per_clock", round(share, 1), "%", what))
    return outcome


def instruction(
    outcome: Outcome, ins: Instruction, data: dict[str, Any], sms: int, peak: int | None, clock_max: float | None
) -> float | None:
    """One instruction's gates and results; its median flops per clock per SM where measured."""
    correct = outcome.gate(ins.check, data["check_error"] <= TOLERANCE, _error(data["check_error"], TOLERANCE))
    summed = outcome.gate(
        f"every thread of the timed {ins.name} kernel holds its count of MMAs times its part of A times B",
        data["loop_error"] <= LOOP_TOLERANCE,
        _error(data["loop_error"], LOOP_TOLERANCE),
    )
    timed = data["timed"]
    if not (outcome.no_host_time(f"the {ins.name} samples", timed) and correct and summed):
        return None
    clocks = [float(c) for c in timed.get("clock_mhz") or []]
    if not outcome.gate(f"the {ins.name} kernel read its SM clock", bool(clocks), f"{len(clocks)} clock readings"):
        return None
    flop = data["instructions"] * ins.flop
    rates = [flop / (ms * 1e-3) / 1e12 for ms in timed["ms"]]
    paired = clocks if len(clocks) == len(rates) else [statistics.median(clocks)] * len(rates)
    per_clock = [r * 1e12 / (mhz * 1e6) / sms for r, mhz in zip(rates, paired, strict=True)]
    median = float(statistics.median(per_clock))
    per_sm = f"{ins.name} rate ÷ (the SM clock it ran at, read inside the kernel, × {sms} SMs), median of the samples"
    description = (
        f"achieved {ins.ptx} rate, dense, 2·M·N·K flops per instruction issued by {ins.issued_by}: "
        f"{data['layout']} per launch; median of samples of at least {SAMPLE_MS:g} ms of launches queued behind "
        f"a wait kernel, after {data['warm_s']:.2f} s of warm-up; stopped on {timed['stopped']}"
    )
    outcome.add(
        timed_result(f"{ins.name}_tflops", rates, "TFLOP/s", description, timed, 1, 2),
        *clock_result(ins.name, timed, f"the {ins.name} samples"),
        median_result(f"{ins.name}_flop_per_clock_per_sm", per_clock, "FLOP/clock/SM", per_sm, None, 1),
        *held_back(ins.name, statistics.median(clocks), clock_max, data.get("under_load") or {}),
    )
    if peak is None:
        return median
    outcome.add(
        Result(
            f"{ins.name}_fraction_of_peak_per_clock",
            round(100 * median / peak, 1),
            "%",
            f"{ins.name} flops per clock per SM ÷ the dense FP16 peak per clock per SM ({peak})",
        )
    )
    outcome.gate(
        f"no {ins.name} sample is above the dense FP16 peak per clock per SM",
        max(per_clock) <= peak,
        f"highest {max(per_clock):.0f} FLOP/clock/SM, peak {peak}",
    )
    return median


def held_back(name: str, clock: float, clock_max: float | None, load: dict[str, Any]) -> list[Result]:
    """How far under the maximum the in-kernel clock was, and NVML's reason and power under the
    same load (where NVML was read): what lets a page say 'held back from 1980 MHz by the power cap'."""
    results: list[Result] = []
    nvml = "power_w" in load
    if clock_max is not None:
        below = clock_max - clock
        state = "held back" if below > HELD_BACK * clock_max else "at its maximum (within 1%)"
        why = f"; NVML's clock event reasons under the same load: {load['clock_limited_by']}" if nvml else ""
        text = f"{name} ran at {clock:.0f} MHz (in-kernel), {state} from the maximum {clock_max:.0f} MHz{why}"
        results.append(
            Result(f"{name}_clock_below_max", round(below, 1), "MHz", text)
        )  # measured: a float, never discrete
    if nvml:
        during = f"while the {name} kernel ran (NVML)"
        results += [
            Result(
                f"{name}_clock_limited_by",
                str(load["clock_limited_by"]),
                "",
                f"clock event reasons {during}",
                method="info",
            ),
            Result(
                f"{name}_power",
                load["power_w"],
                "W",
                f"power drawn {during}; limit {load['power_limit_w']:g} W",
                method="info",
            ),
            Result(
                f"{name}_nvml_clock",
                load["sm_clock_mhz"],
                "MHz",
                f"SM clock {during}, beside the in-kernel one",
                method="info",
            ),
        ]
    return results


def _error(error: float, tolerance: float) -> str:
    return f"max error {error:.2e} of the largest |value| (tolerance {tolerance:.0e})"
