"""The experiments the verifier knows, and the hash of each one's code.

Importing this needs no GPU and no cuda-python (the CUDA modules are imported only when an
experiment runs), so the site build can ask which experiments exist and whether a
committed measurement was made by the code as it is now.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from cudagloss.model.keys import code_hash
from cudagloss.model.measurement import ExperimentInfo
from verifier.anatomy import Helpers
from verifier.contract import Experiment
from verifier.experiment import ROOT
from verifier.experiments import (
    arch_matrix,
    arithmetic_rates,
    async_copy,
    atomics,
    bank_conflicts,
    blackwell_on_hopper,
    coalescing,
    device_limits,
    distributed_shared_memory,
    error_strings,
    fp32_throughput,
    host_costs,
    host_transfer,
    instruction_availability,
    instruction_latency,
    jit_cache,
    kernel_errors,
    latency_hiding,
    launch_limits,
    launch_overhead,
    memory_bandwidth,
    memory_latency,
    no_kernel_image,
    occupancy,
    peer_access,
    peer_copy,
    ptx_jit,
    register_spilling,
    roofline,
    shared_memory_bandwidth,
    special_functions,
    tensor_core,
    warp_divergence,
)

EXPERIMENTS: list[ModuleType] = [
    ptx_jit,
    jit_cache,
    no_kernel_image,
    arch_matrix,
    device_limits,
    occupancy,
    memory_bandwidth,
    coalescing,
    memory_latency,
    bank_conflicts,
    launch_overhead,
    host_transfer,
    fp32_throughput,
    tensor_core,
    warp_divergence,
    atomics,
    peer_access,
    peer_copy,
    host_costs,
    launch_limits,
    register_spilling,
    blackwell_on_hopper,
    instruction_latency,
    special_functions,
    shared_memory_bandwidth,
    arithmetic_rates,
    async_copy,
    distributed_shared_memory,
    roofline,
    latency_hiding,
    error_strings,
    instruction_availability,
    kernel_errors,
]
CONTRACTS: tuple[Experiment, ...] = tuple(Experiment.from_module(m) for m in EXPERIMENTS)
"""Every experiment as its checked contract (verifier/contract.py), in EXPERIMENTS' order: a module
that lacks what an experiment needs stops the import here, named. EXPERIMENTS stays the modules,
as verifier/replay.py reads older checkouts and the keys are computed (recipe.py)."""
SHARED = [
    "runner.py",
    "spawn.py",
    "worker.py",
    "cuda.py",
    "experiment.py",
    "cachedir.py",
    "kernels/saxpy.py",
]
"""Code every experiment runs through (the runner sets the environment): a change to it makes
every measurement stale. `__main__.py` is not in it: its options and its error boundary only
report (as settle.py and rerun.py do), and what of it bore on a measurement, the private
CUDA_CACHE_PATH, is runner.run_all's."""


def experiment_hash(module: ModuleType, read: dict[Path, bytes] | None = None) -> str:
    """Hash of the experiment's own module, the shared code it runs through, and the modules
    it names in USES (paths under verifier/, e.g. 'gpu.py'); read: files already read (catalog)."""
    here = Path(__file__).resolve().parent
    uses = [here / name for name in getattr(module, "USES", ())]
    return code_hash([Path(str(module.__file__)), *(here / name for name in SHARED), *uses], read)


def catalog() -> list[ExperimentInfo]:
    helpers, read = Helpers(), dict[Path, bytes]()
    return [
        ExperimentInfo(
            id=e.id,
            purpose=e.purpose,
            code_hash=experiment_hash(e.module, read),
            source=Path(str(e.module.__file__)).resolve().relative_to(ROOT).as_posix(),
            kernels=e.kernels(),
            api_calls=helpers.api_calls(e.module),
            recipe=keys[0],
            summary=keys[1],
        )
        for e in CONTRACTS
        for keys in [e.keys()]
    ]
