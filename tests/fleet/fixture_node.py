"""Stand-in GPU node for the Slurm test, run as CUDAGLOSS_SLURM_WRAP in front of the verifier.

A task whose node name holds '-cpu' writes what a GPU node's make verify would have written:
committed measurements of one node (the experiments named in FIXTURE_EXPERIMENTS, which the
test chose among those measured by today's experiment code), renamed to this node (file name
and provenance.node) on a card of its own (provenance.gpu_uuid), and exits 0. Any other task runs the real verifier it was given (which exits 3 on a host
without a GPU).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE_NODE = "h200-lent"


def main(argv: list[str]) -> int:
    node = os.environ["VERIFY_NODE"]
    if "-cpu" not in node:
        os.execvp(argv[0], argv)
    out = Path(os.environ["CUDAGLOSS_NODE_DIR"])
    experiments = os.environ["FIXTURE_EXPERIMENTS"].split(",")
    for experiment in experiments:
        data = json.loads((ROOT / "measurements" / experiment / f"{SOURCE_NODE}.json").read_text(encoding="utf-8"))
        data["provenance"]["node"] = node
        data["provenance"]["gpu_uuid"] = f"GPU-fixture-{node}"  # a node name names one card: its own
        (out / experiment).mkdir(parents=True, exist_ok=True)
        (out / experiment / f"{node}.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"fixture node {node}: wrote {len(experiments)} experiments")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
