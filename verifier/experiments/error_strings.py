"""Every CUDA error code in the words its libraries give it: the driver's cuGetErrorName and
cuGetErrorString for each CUresult, and the runtime's cudaGetErrorName and cudaGetErrorString
for each cudaError_t, as this node's driver and this cuda-bindings release say them.

Readers paste these strings into search boxes; a glossary that quotes them must quote the words
the libraries print, not a paraphrase, and must say whose words they are. The driver's come from
libcuda.so on the node (its version is in the provenance); the runtime's from the runtime that
cuda-bindings carries (cuda_bindings_version), not from a libcudart on the node. The codes are
every member of the two enums cuda-bindings defines; a code one library does not know is recorded
as that library's refusal (its own error), never skipped. Nothing runs on the GPU.

Prediction: every driver code has a name equal to its enum member's and a message; every runtime
code likewise; the two name CUDA_ERROR_INVALID_VALUE / cudaErrorInvalidValue "invalid argument".
First run (an H100, driver 580.159.04, cuda-bindings 13.3.1): the driver did not know 2 of the 103
codes cuda-bindings defines (CUDA_ERROR_STREAM_DETACHED, CUDA_ERROR_GRAPH_RECAPTURE_FAILURE), newer
than it, and answered CUDA_ERROR_INVALID_VALUE for them, as cuGetErrorName documents for an
unrecognised code: recorded as unknown to this driver, not a failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device
from verifier.experiment import Outcome

ID = "error-strings"
PURPOSE = (
    "The driver's and the runtime's name and message for every CUDA error code, as this node's libraries give them"
)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _answers(get_name: Any, get_text: Any, codes: Any) -> dict[int, dict[str, str]]:
    """Each code's enum member, and the library's name and message for it (or its refusal)."""
    found: dict[int, dict[str, str]] = {}
    for code in codes:
        entry = {"enum": code.name}
        for key, call in (("name", get_name), ("text", get_text)):
            status, value = call(code)
            ok = int(status) == 0
            entry[key] = _text(value) if ok else f"refused: {getattr(status, 'name', status)}"
        found[int(code)] = entry
    return found


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    from cuda.bindings import driver, runtime

    raw = {
        "driver": _answers(driver.cuGetErrorName, driver.cuGetErrorString, driver.CUresult),
        "runtime": _answers(runtime.cudaGetErrorName, runtime.cudaGetErrorString, runtime.cudaError_t),
    }
    return summarise(raw)


REFUSED = "refused: CUDA_ERROR_INVALID_VALUE"
"""How _answers records the driver's documented answer for a code it does not recognise."""
LIBRARIES = {
    "driver": ("cu", "cuGetErrorName", "cuGetErrorString", "the driver (libcuda on this node)"),
    "runtime": ("cuda", "cudaGetErrorName", "cudaGetErrorString", "the runtime cuda-bindings carries"),
}


def summarise(raw: dict[str, Any]) -> Outcome:
    """Gates and one name and one message result per code a library knows, and the codes it
    does not know (pure: the CPU test feeds it fixture data). A code newer than the node's
    driver is refused with the answer the driver documents for an unknown code
    (CUDA_ERROR_INVALID_VALUE); any other refusal, or a name that is not the enum's, fails."""
    outcome = Outcome(repeats=1)
    for library, (prefix, name_call, text_call, whose) in LIBRARIES.items():
        codes: dict[int, dict[str, str]] = raw[library]
        unknown = sorted(c for c, e in codes.items() if REFUSED in (e["name"], e["text"]))
        odd = [c for c, e in codes.items() if c not in unknown and "refused" in e["name"] + e["text"]]
        outcome.gate(
            f"{name_call} and {text_call} answer every {library} code, or refuse it as unknown",
            not odd and len(unknown) < len(codes),
            f"{len(codes)} codes, {len(unknown)} unknown; other refusals: "
            + (", ".join(f"{codes[c]['enum']}: {codes[c]['name']}" for c in odd[:10]) or "none"),
        )
        wrong = [c for c, e in codes.items() if c not in unknown and c not in odd and e["name"] != e["enum"]]
        outcome.gate(
            f"{name_call} gives each {library} code its enum name",
            not wrong,
            ", ".join(f"{codes[c]['enum']}: {codes[c]['name']}" for c in wrong[:10]) or "all equal",
        )
        outcome.add(
            Result(f"{prefix}_codes", len(codes), "codes", f"error codes of {whose} that cuda-bindings defines"),
            Result(
                f"{prefix}_unknown", len(unknown), "codes", f"of those, codes {whose} does not know (newer than it)"
            ),
        )
        if unknown:
            listed = ", ".join(f"{codes[c]['enum']} ({c})" for c in unknown)
            outcome.add(Result(f"{prefix}_unknown_codes", listed, "", f"the codes {whose} answers {REFUSED} for"))
        for code in sorted(set(codes) - set(unknown)):
            entry = codes[code]
            outcome.add(
                Result(f"{prefix}_{code}_name", entry["name"], "", f"{name_call}({entry['enum']} = {code}), {whose}"),
                Result(
                    f"{prefix}_{code}_message", entry["text"], "", f"{text_call}({entry['enum']} = {code}), {whose}"
                ),
            )
    return outcome
