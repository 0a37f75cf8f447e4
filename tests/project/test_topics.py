"""Every topic of Modal's GPU Glossary has a page here, or is named by a page that merges it
(issue 31): the list is its 81 pages as its repository lists them in four sections (device hardware,
device software, host software, performance), each mapped to our slug and, where two names are
one idea here, to the name or alias our page carries for it. A topic whose page is missing, or
whose merged name is not on the page that should carry it, fails with the topic named."""

from __future__ import annotations

import pytest

from conftest import ROOT
from cudagloss.load.terms import load_terms

SAME = None
"""The topic is a page of its own here, under the slug given."""

TOPICS: dict[str, tuple[str, str | None]] = {
    # Device hardware
    "CUDA (Device Architecture)": ("cuda-device-architecture", SAME),
    "Streaming Multiprocessor": ("streaming-multiprocessor", SAME),
    "Core": ("gpu-core", SAME),
    "Special Function Unit": ("special-function-unit", SAME),
    "Load/Store Unit": ("load-store-unit", SAME),
    "Warp Scheduler": ("warp-scheduler", SAME),
    "CUDA Core": ("cuda-core", SAME),
    "Tensor Core": ("tensor-core", SAME),
    "Tensor Memory Accelerator": ("tensor-memory-accelerator", SAME),
    "Streaming Multiprocessor Architecture": ("sm-architecture", SAME),
    "Texture Processing Cluster": ("texture-processing-cluster", SAME),
    "Graphics/GPU Processing Cluster": ("graphics-processing-cluster", SAME),
    "Register File": ("register-file", SAME),
    "L1 Data Cache": ("l1-cache", "L1 data cache"),
    "Tensor Memory": ("tensor-memory", SAME),
    "GPU RAM": ("hbm", "GPU RAM"),
    # Device software
    "CUDA (Programming Model)": ("cuda-programming-model", SAME),
    "Streaming ASSembler": ("sass", SAME),
    "Parallel Thread eXecution": ("ptx", "Parallel Thread Execution"),
    "Compute Capability": ("compute-capability", SAME),
    "Thread": ("thread", SAME),
    "Warp": ("warp", SAME),
    "Cooperative Thread Array": ("thread-block", "cooperative thread array"),
    "Kernel": ("kernel", SAME),
    "Kernel Launch Configuration": ("kernel", "kernel launch configuration"),
    "Thread Block": ("thread-block", SAME),
    "Thread Block Grid": ("grid", "thread block grid"),
    "Thread Hierarchy": ("thread-hierarchy", SAME),
    "Memory Hierarchy": ("memory-hierarchy", SAME),
    "Registers": ("register-file", "registers"),
    "Shared Memory": ("shared-memory", SAME),
    "Global Memory": ("hbm", "global memory"),
    "Warpgroup": ("warpgroup", SAME),
    "CUDA Tile Programming Model": ("tile-programming-model", SAME),
    # Host software
    "CUDA (Software Platform)": ("cuda-toolkit", "CUDA software platform"),
    "CUDA C++ (programming language)": ("cuda-cpp", SAME),
    "NVIDIA GPU Drivers": ("nvidia-driver", SAME),
    "nvidia.ko": ("nvidia-driver", "nvidia.ko"),
    "CUDA Driver API": ("cuda-driver-api", SAME),
    "libcuda.so": ("cuda-driver-api", "libcuda.so"),
    "NVIDIA Management Library": ("nvml", SAME),
    "libnvml.so": ("nvml", "libnvml.so"),
    "nvidia-smi": ("nvidia-smi", SAME),
    "CUDA Runtime API": ("cuda-runtime-api", SAME),
    "libcudart.so": ("cuda-runtime-api", "libcudart.so"),
    "NVIDIA CUDA Compiler Driver": ("nvcc", SAME),
    "NVIDIA Runtime Compiler": ("nvrtc", SAME),
    "NVIDIA CUDA Profiling Tools Interface": ("cupti", SAME),
    "NVIDIA Nsight Systems": ("nsight-systems", SAME),
    "NVIDIA Nsight Compute": ("nsight-compute", SAME),
    "CUDA Binary Utilities": ("cuda-binary-utilities", SAME),
    "cuBLAS": ("cublas", SAME),
    "cuDNN": ("cudnn", SAME),
    "CUTLASS": ("cutlass", SAME),
    "CuTe": ("cutlass", "CuTe"),
    "CuTe DSL": ("cutlass", "CuTe DSL"),
    "cuTile": ("tile-programming-model", "cuTile"),
    "CUDA Graph": ("cuda-graph", SAME),
    # Performance
    "Performance Bottleneck": ("performance-bottleneck", SAME),
    "Roofline Model": ("roofline-model", SAME),
    "Compute-bound": ("compute-bound", SAME),
    "Memory-bound": ("memory-bound", SAME),
    "Arithmetic Intensity": ("arithmetic-intensity", SAME),
    "Overhead": ("overhead", SAME),
    "Little's Law": ("littles-law", SAME),
    "Memory Bandwidth": ("memory-bandwidth", SAME),
    "Arithmetic Bandwidth": ("arithmetic-bandwidth", SAME),
    "Latency Hiding": ("latency-hiding", SAME),
    "Warp Execution State": ("warp-execution-state", SAME),
    "Active Cycle": ("active-cycle", SAME),
    "Occupancy": ("occupancy", SAME),
    "Pipe Utilization": ("pipe-utilization", SAME),
    "Peak Rate": ("peak-rate", SAME),
    "Issue Efficiency": ("issue-efficiency", SAME),
    "Streaming Multiprocessor Utilization": ("sm-utilization", SAME),
    "Warp Divergence": ("warp-divergence", SAME),
    "Branch Efficiency": ("branch-efficiency", SAME),
    "Bank Conflict": ("bank-conflict", SAME),
    "Register Pressure": ("register-pressure", SAME),
    "Scoreboard Stall": ("scoreboard-stall", SAME),
    "Memory Coalescing": ("memory-coalescing", SAME),
}


@pytest.fixture(scope="module")
def names() -> dict[str, set[str]]:
    """Each term's slug and the names readers find it by, folded to lower case."""
    terms, _ = load_terms(ROOT / "terms", ROOT)
    return {t.slug: {n.casefold() for n in (t.term.name, *t.term.aliases, *t.term.abbreviations)} for t in terms}


@pytest.mark.parametrize("topic", sorted(TOPICS))
def test_every_topic_has_a_page_or_is_named_in_the_page_that_merges_it(topic: str, names: dict[str, set[str]]) -> None:
    slug, merged = TOPICS[topic]
    assert slug in names, f"{topic!r}: no page terms/{slug}.yaml"
    if merged is not None:
        assert merged.casefold() in names[slug], f"{topic!r} is merged into {slug}, which does not name {merged!r}"


def test_a_page_of_its_own_stands_for_one_topic() -> None:
    """Two topics mapped to one slug as its own page would hide that one of them lost its page."""
    own = [slug for slug, merged in TOPICS.values() if merged is None]
    assert len(own) == len(set(own)), sorted(s for s in own if own.count(s) > 1)
