"""Each run records its host as an opaque identity (provenance host_id): a salted hash of the
machine id, never the id itself, a host name or an address. Real files through settle()."""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

import pytest
import verifier.identity
from verifier.identity import SALT, host_id, machine_id, with_host
from verifier.settle import settle

from cudagloss.load.measurements import load_measurements
from cudagloss.model.measurement import Gate, Measurement, Result, parse_measurement

RAW = "0123456789abcdef0123456789abcdef"


def run(node: str = "node-a") -> Measurement:
    provenance = {
        "node": node,
        "gpu_name": "NVIDIA H200",
        "duration_s": 1.0,
        "recorded_at": "2026-12-01T10:00:00+00:00",
    }
    return Measurement("ptx-jit", "test", "sha256:now", "ok", provenance, [Gate("correct", True)], [Result("n", 1)])


def test_the_identity_is_a_salted_hash_of_the_machine_id(tmp_path: Path) -> None:
    (tmp_path / "machine-id").write_text(RAW + "\n")
    files = (tmp_path / "machine-id",)
    expected = "sha256:" + hashlib.sha256(b"cudagloss-host\0" + RAW.encode()).hexdigest()[:16]
    assert SALT == b"cudagloss-host\0" and host_id(files) == expected
    assert RAW not in expected and hashlib.sha256(RAW.encode()).hexdigest()[:16] not in expected  # salted
    assert host_id(files) == host_id(files), "stable from run to run"


def test_dbus_copy_is_read_when_systemd_has_none_and_no_id_records_nothing(tmp_path: Path) -> None:
    etc, dbus = tmp_path / "etc-machine-id", tmp_path / "dbus-machine-id"
    dbus.write_text(RAW)
    assert machine_id((etc, dbus)) == RAW
    etc.write_text("uninitialized\n")  # an image before its first boot
    assert machine_id((etc, dbus)) == RAW
    dbus.unlink()
    assert host_id((etc, dbus)) == "" and with_host(run(), (etc, dbus)) == run()


def test_settle_records_the_hashed_identity_and_never_the_raw_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "machine-id").write_text(RAW + "\n")
    monkeypatch.setattr(verifier.identity, "MACHINE_ID_FILES", (tmp_path / "missing", tmp_path / "machine-id"))
    out = tmp_path / "measurements"
    assert settle(run(), out, lambda line: None) is not None
    written = out / "ptx-jit" / "node-a.json"
    text = written.read_text(encoding="utf-8")
    host = json.loads(text)["provenance"]["host_id"]
    assert host == host_id((tmp_path / "machine-id",)) and host.startswith("sha256:") and len(host) == 7 + 16
    assert RAW not in text and socket.gethostname() not in text
    # The format takes it as any other provenance key: the site and collect read the file.
    assert parse_measurement(text, "node-a.json").provenance["host_id"] == host
    found, problems = load_measurements(out)
    assert problems == [] and found.experiments["ptx-jit"].runs[0].good is not None


def test_a_host_without_a_machine_id_records_no_host_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verifier.identity, "MACHINE_ID_FILES", (tmp_path / "missing",))
    assert settle(run(), tmp_path, lambda line: None) is not None
    assert "host_id" not in json.loads((tmp_path / "ptx-jit" / "node-a.json").read_text())["provenance"]
