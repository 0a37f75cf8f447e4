"""The code behind each number (issue 30, part 3): what an experiment compiles and which CUDA
calls produced its values, read from the verifier's code itself (verifier/anatomy.py), so the
measurement page cannot drift from it."""

from __future__ import annotations

import re
from html import unescape

import markdown
import pytest
from verifier.anatomy import Helpers, kernels
from verifier.experiment import ROOT
from verifier.experiments import host_costs, memory_bandwidth, memory_latency, peer_copy, tensor_core
from verifier.registry import EXPERIMENTS, catalog, experiment_hash

from cudagloss.site import escape


def test_kernels_are_the_strings_the_experiment_compiles_its_own_and_those_of_the_kernels_it_imports() -> None:
    assert [k.where for k in kernels(memory_latency, ROOT)] == ["verifier/experiments/memory_latency.py:SOURCE"]
    assert "__global__ void chase(" in kernels(memory_latency, ROOT)[0].source
    assert [k.where for k in kernels(tensor_core, ROOT)] == [
        "verifier/kernels/mma_sync.py:SOURCE",
        "verifier/kernels/wgmma.py:SOURCE",
    ]
    assert all(k.language == "cuda" for m in EXPERIMENTS for k in kernels(m, ROOT))


def test_calls_follow_the_helpers_and_the_child_processes_and_leave_out_error_wording() -> None:
    helpers = Helpers()
    bandwidth = helpers.api_calls(memory_bandwidth)
    assert "cuMemcpyDtoDAsync" in bandwidth  # its own call
    assert {"cuGraphInstantiate", "cuGraphLaunch", "cuStreamBeginCapture"} <= set(bandwidth)  # gpu.time_graph's
    assert {"nvrtcCreateProgram", "nvrtcCompileProgram"} <= set(bandwidth)  # compile_source's
    assert not {"cuGetErrorName", "cuGetErrorString", "nvrtcResult"} & set(bandwidth)  # error wording, a type
    assert "cuMemcpyPeerAsync" in helpers.api_calls(peer_copy)  # in verifier/peer_pair.py, run by spawn()
    assert list(bandwidth) == sorted(bandwidth)


def test_runtime_and_nvml_calls_count_and_a_name_only_asked_about_does_not() -> None:
    calls = set(Helpers().api_calls(host_costs))
    assert {"cudaMalloc", "cudaDeviceSynchronize", "nvmlSystemGetDriverVersion"} <= calls
    assert "cudaLaunchKernel" not in calls  # only hasattr(runtime, "cudaLaunchKernel"): cuda-python binds none
    assert not {"cudaGetErrorName", "cudaError_t"} & calls


def test_the_catalog_hashes_as_before_with_each_file_read_once() -> None:
    """Reading the shared files once per catalog must not change a single hash (a changed hash
    would call every committed measurement stale)."""
    assert [info.code_hash for info in catalog()] == [experiment_hash(m) for m in EXPERIMENTS]


EXTENSIONS = ["pymdownx.details", "pymdownx.superfences", "pymdownx.highlight"]


@pytest.mark.parametrize(
    "source",
    [
        "int main() { return 0; }\n```\n</code></pre><script>alert(1)</script>\n````\n",
        "  indented\n\n\n\tand a tab\r\nand CRLF",
    ],
)
def test_a_kernel_block_shows_its_text_literally_whatever_it_holds(source: str) -> None:
    """A fence inside the source cannot end the block early, and markup in it stays text."""
    page = f'??? example "k"\n{escape.code_block(source, "cuda", indent=4)}\n\nAfter the block.\n'
    html = markdown.markdown(page, extensions=EXTENSIONS)
    assert "<script>" not in html and "After the block." in html.split("</details>")[1]
    shown = unescape(re.sub(r"<[^>]+>", "", html.split("<pre>")[1].split("</pre>")[0]))
    assert html.count("<pre") == 1 and shown.split() == source.split()  # every character, as text
