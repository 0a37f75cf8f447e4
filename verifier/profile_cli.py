"""What Nsight Compute runs for verifier/profile.py: one experiment's profile() on the first GPU.

    python3 -m verifier.profile_cli <experiment-id>

Apart from profile.py because it looks the experiment up in the registry, which imports the
experiments, which import profile.py: kept there, that was an import cycle.
"""

from __future__ import annotations

import sys

from verifier.cuda import Device
from verifier.registry import EXPERIMENTS


def main(argv: list[str]) -> int:
    """Run one experiment's profile() on the first GPU (what ncu starts)."""
    module = next((m for m in EXPERIMENTS if argv[0] == m.ID), None) if argv else None
    if module is None or not hasattr(module, "profile"):
        print(f"verifier.profile_cli: no experiment with a profile(): {argv!r}", file=sys.stderr)
        return 2
    module.profile(Device())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
