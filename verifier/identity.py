"""Which host a run was made on, without saying which: provenance `host_id`.

Two folders from one host must not pass as two hosts (`cudagloss collect` refuses them: cards
measured at once time each other), so each run records an opaque, stable identity of its
host: a salted hash of the machine id (/etc/machine-id, or D-Bus's copy), never a host name
or an address. A host without a machine id records none. Computed where the run is settled
(verifier/settle.py), outside the code every experiment's hash covers.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from cudagloss.model.measurement import Measurement

MACHINE_ID_FILES: tuple[Path, ...] = (Path("/etc/machine-id"), Path("/var/lib/dbus/machine-id"))
"""Where systemd and D-Bus keep the host's machine id, the first one readable wins."""
SALT = b"cudagloss-host\0"
"""So that the identity is the glossary's own: it cannot be matched against the raw machine id elsewhere."""
UNSET = frozenset({"", "uninitialized"})
"""What an image holds before its first boot writes a machine id (systemd)."""


def machine_id(files: tuple[Path, ...] | None = None) -> str:
    """The host's machine id as its file holds it, or '' where there is none."""
    for path in MACHINE_ID_FILES if files is None else files:
        try:
            text = path.read_text(encoding="ascii", errors="replace").strip()
        except OSError:  # absent, a folder, unreadable: try the next
            continue
        if text not in UNSET:
            return text
    return ""


def host_id(files: tuple[Path, ...] | None = None) -> str:
    """'sha256:' and 16 hex digits of the salted machine id; '' where the host has none."""
    raw = machine_id(files)
    if not raw:
        return ""
    return "sha256:" + hashlib.sha256(SALT + raw.encode("utf-8")).hexdigest()[:16]


def with_host(measurement: Measurement, files: tuple[Path, ...] | None = None) -> Measurement:
    """measurement with this host's host_id in its provenance (one it already records is kept)."""
    host = host_id(files)
    if not host or "host_id" in measurement.provenance:
        return measurement
    return replace(measurement, provenance={**measurement.provenance, "host_id": host})
