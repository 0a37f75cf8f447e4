"""No kernel image: what the driver says when an image holds nothing this GPU can run.

Images with only SASS for another architecture (e.g. sm_80 on a 9.0 GPU) and only PTX for
a virtual architecture newer than the GPU, bare and inside fat binaries, are loaded in a
fresh process with the JIT cache disabled. The exact error name, code and message are
recorded with the JIT log, and the CUDA runtime's name and message for the same code (the
words most people first see). Where nvcc is on PATH, a small runtime-API program built for
the other architecture is also run, and what it prints is recorded.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device, check, compile_source, make_fatbin, supported_archs
from verifier.experiment import Outcome, failure
from verifier.kernels import saxpy
from verifier.spawn import spawn
from verifier.targets import Needs

ID = "no-kernel-image"
PURPOSE = "The exact error when an image holds only SASS for another GPU or PTX for a newer one"

NEEDS = {"APP_SOURCE": Needs("a whole host program that nvcc builds on the node", builder="nvcc")}
"""Checked by make kernels (verifier/targets.py): NVRTC is never asked to compile it."""

APP_SOURCE = r"""
#include <cstdio>
__global__ void touch(int* p) { *p = 1; }
int main() {
    int* p = nullptr;
    cudaMalloc(&p, sizeof(int));
    touch<<<1, 1>>>(p);
    cudaError_t err = cudaGetLastError();
    std::printf("%d\n%s\n%s\n", (int)err, cudaGetErrorName(err), cudaGetErrorString(err));
    return err == cudaSuccess ? 0 : 1;
}
"""


def other_arch(cc: int, supported: list[int]) -> str:
    """A real architecture whose SASS a cc GPU cannot run: the previous major's x0 (sm_80 for
    a 9.0 GPU), else the first supported one of another major."""
    major = cc // 10
    if (major - 1) * 10 in supported:
        return f"sm_{(major - 1) * 10}"
    return f"sm_{next(a for a in supported if a // 10 != major)}"


def newer_virtual_arch(cc: int, supported: list[int]) -> str | None:
    """The oldest virtual architecture newer than the GPU, if this NVRTC knows one."""
    newer = [a for a in supported if a // 10 > cc // 10]
    return f"compute_{min(newer)}" if newer else None


def _runtime_words(code: int) -> tuple[str, str]:
    """The CUDA runtime's name and message for an error number (cudaGetErrorName/String)."""
    from cuda.bindings import runtime

    err = runtime.cudaError_t(code)
    name = check("cudaGetErrorName", runtime.cudaGetErrorName(err))
    text = check("cudaGetErrorString", runtime.cudaGetErrorString(err))
    return name.decode(), text.decode()


def _nvcc_app(arch: str, workdir: Path) -> dict[str, Any] | str:
    """Build and run the runtime-API program for arch; a string says why it was not run."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return "nvcc is not on PATH"
    source, binary = workdir / "app.cu", workdir / "app"
    source.write_text(APP_SOURCE)
    number = arch.split("_", 1)[1]
    build = subprocess.run(
        [nvcc, f"-gencode=arch=compute_{number},code={arch}", "-o", str(binary), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if build.returncode != 0:
        return f"nvcc failed: {build.stderr.strip()[-500:]}"
    ran = subprocess.run(
        [str(binary)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "CUDA_CACHE_DISABLE": "1"},
    )
    lines = ran.stdout.strip().splitlines()
    if len(lines) != 3:
        return f"the program printed {ran.stdout!r} (exit {ran.returncode})"
    return {"code": int(lines[0]), "name": lines[1], "message": lines[2], "exit": ran.returncode, "nvcc": nvcc}


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    outcome = Outcome(repeats=1)
    cc = int(device.describe()["compute_capability"].replace(".", ""))
    supported = supported_archs()
    other = other_arch(cc, supported)
    newer = newer_virtual_arch(cc, supported)
    images: dict[str, Path] = {}
    labels: dict[str, str] = {}

    def add(case: str, label: str, data: bytes) -> None:
        images[case] = workdir / f"{case}.bin"
        images[case].write_bytes(data)
        labels[case] = label

    control = compile_source(saxpy.SOURCE, "saxpy.cu", f"sm_{cc}")
    add("control", f"SASS for this GPU (sm_{cc})", control.image)
    sass = compile_source(saxpy.SOURCE, "saxpy.cu", other)
    add("sass_other_arch", f"a cubin holding only {other} SASS", sass.image)
    add("fatbin_sass_other_arch", f"a fat binary holding only {other} SASS", make_fatbin([sass], [other]))
    if newer:
        ptx = compile_source(saxpy.SOURCE, "saxpy.cu", newer)
        add("ptx_newer_arch", f"PTX for {newer}, newer than the GPU", ptx.image.rstrip(b"\0 ") + b"\0")
        add("fatbin_ptx_newer_arch", f"a fat binary holding only {newer} PTX", make_fatbin([ptx], [newer]))
    outcome.add(
        Result("other_arch", other, "", "the real architecture whose SASS the images hold"),
        Result("newer_virtual_arch", newer, "", "the virtual architecture, newer than the GPU, of the PTX images"),
    )
    found = spawn(
        "kernels.saxpy",
        "load_each",
        {"images": {k: str(v) for k, v in images.items()}},
        {"CUDA_CACHE_DISABLE": "1"},
    )
    if not outcome.gate("the worker process ran", found["ok"], failure(found)):
        return outcome
    ctl = found["control"]
    outcome.gate(
        f"the control (sm_{cc} SASS) loads and computes correctly",
        ctl["ok"] and ctl.get("correct", False),
        "" if ctl["ok"] else failure(ctl),
    )
    for case, label in labels.items():
        if case == "control":
            continue
        r = found[case]
        outcome.gate(f"{label} is refused", not r["ok"])
        if r["ok"]:
            continue
        outcome.add(
            Result(f"{case}_call", r["call"], "", f"{label}: the call that failed"),
            Result(f"{case}_error_name", r["error_name"], "", f"{label}: the driver's error name"),
            Result(f"{case}_error_code", r["error_code"], "", f"{label}: the error's number"),
            Result(f"{case}_error_message", r["error_message"], "", f"{label}: the driver's message"),
            Result(f"{case}_jit_log", r["jit_log"], "", f"{label}: the JIT error log"),
        )
    sass_result = found["sass_other_arch"]
    if not sass_result["ok"]:
        name, text = _runtime_words(sass_result["error_code"])
        outcome.add(
            Result("runtime_error_name", name, "", "the CUDA runtime's name for the same error number"),
            Result("runtime_error_message", text, "", "the CUDA runtime's message for it"),
        )
    app = _nvcc_app(other, workdir)
    if isinstance(app, str):
        outcome.add(Result("nvcc_app_error_message", None, "", f"not measured: {app}"))
    else:
        label = f"a runtime-API program built by nvcc for {other} only, launching a kernel"
        outcome.add(
            Result("nvcc_app_error_name", app["name"], "", f"{label}: cudaGetLastError's name"),
            Result("nvcc_app_error_code", app["code"], "", f"{label}: its number"),
            Result("nvcc_app_error_message", app["message"], "", f"{label}: cudaGetErrorString"),
        )
    return outcome


summarise = None
"""No pure summary: run() judges what it saw as it goes (the experiment contract, verifier/contract.py)."""
