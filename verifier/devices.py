"""`make verify DEVICES=all`: every GPU of this host measured as its own node.

A host with several GPUs contributes one result per card: each card gets its own run of
`python3 -m verifier` (the same arguments), with CUDA_VISIBLE_DEVICES naming that card alone
(in PCI bus order, so CUDA's numbering is nvidia-smi's) and VERIFY_NODE=<node>-gpu<N>. The
runs go one after another: cards measured at once would share the host's CPU, PCIe and
memory, and time each other. Experiments that measure the cards together (HOST_WIDE: pairs
of GPUs) then run once more with every chosen card visible, as the host's own node; in the
per-card runs they record that they need two GPUs.

    python3 -m verifier.devices --devices all [verifier arguments...]
    python3 -m verifier.devices --devices 0,2 --experiment ptx-jit

Exit: the highest exit status of the runs; 3 when this host has no GPU; 2 for a bad --devices;
130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from cudagloss.boundary import guarded
from cudagloss.errors import ExitCode, complain
from verifier.experiment import ROOT
from verifier.provenance import node_name

PROG = "make verify DEVICES=..."


def gpu_count() -> int | str:
    """How many GPUs this host has, by NVML (what nvidia-smi counts), or why it cannot tell."""
    try:
        import pynvml
    except ImportError:
        return "nvidia-ml-py is not installed"
    try:
        pynvml.nvmlInit()
        return int(pynvml.nvmlDeviceGetCount())
    except Exception as exc:  # NVML's own error types: no driver, no GPU
        return f"NVML cannot count GPUs ({type(exc).__name__})"


def chosen(spec: str, count: int) -> list[int]:
    """The card indices `all` or a comma list names; ValueError for one this host lacks."""
    if spec == "all":
        return list(range(count))
    picked = []
    for part in spec.split(","):
        if not part.strip().isdigit() or int(part) >= count:
            raise ValueError(f"{part.strip()!r} is not a GPU of this host (it has {count}: 0 to {count - 1})")
        picked.append(int(part))
    return sorted(set(picked))


Run = tuple[str, dict[str, str], list[str]]
"""A run's node name, environment and verifier arguments."""


def host_wide() -> list[str]:
    """The experiments that measure a host's cards together (HOST_WIDE in their module)."""
    from verifier.registry import CONTRACTS

    return [e.id for e in CONTRACTS if e.host_wide]


def plan(
    indices: list[int],
    base: str,
    environ: dict[str, str],
    rest: list[str] | None = None,
    together: tuple[str, ...] | list[str] = (),
) -> list[Run]:
    """Each card's node name, environment and arguments; then, with two cards or more, one run
    per experiment of together (those rest selects) with all of them visible, as node base."""
    rest = list(rest or [])
    chosen_one = rest[rest.index("--experiment") + 1] if "--experiment" in rest[:-1] else None
    runs: list[Run] = []
    order = {**environ, "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    if chosen_one is None or chosen_one not in together or len(indices) < 2:
        for index in indices:
            node = f"{base}-gpu{index}"
            runs.append((node, {**order, "CUDA_VISIBLE_DEVICES": str(index), "VERIFY_NODE": node}, rest))
    if len(indices) >= 2:
        cards = ",".join(map(str, indices))
        wanted = list(together) if chosen_one is None else [e for e in together if e == chosen_one]
        kept = [
            a for i, a in enumerate(rest) if a not in ("--experiment", "--all") and rest[i - 1 : i] != ["--experiment"]
        ]
        for experiment in wanted:
            args = [*kept, "--experiment", experiment]
            runs.append((base, {**order, "CUDA_VISIBLE_DEVICES": cards, "VERIFY_NODE": base}, args))
    return runs


def main(argv: list[str] | None = None) -> int:
    """_main inside the error boundary `make verify` runs in (cudagloss.boundary): Ctrl-C
    between the cards' runs is one line and 130."""
    return guarded(PROG, lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", required=True, help="'all', or card indices such as 0,2")
    args, rest = parser.parse_known_args(argv)
    count = gpu_count()
    if isinstance(count, str) or count == 0:
        complain(PROG, f"no usable CUDA GPU on this machine ({count if isinstance(count, str) else 'none'})")
        return ExitCode.NO_GPU
    try:
        indices = chosen(args.devices, count)
    except ValueError as exc:
        complain(PROG, str(exc))
        return ExitCode.USAGE
    worst = 0
    for node, env, run_args in plan(indices, node_name(), dict(os.environ), rest, host_wide()):
        print(f"== {node} (cards {env['CUDA_VISIBLE_DEVICES']} of {count})", flush=True)
        command = [sys.executable, "-m", "verifier", *run_args]
        code = subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
        worst = max(worst, code)
    return worst


if __name__ == "__main__":
    sys.exit(main())
