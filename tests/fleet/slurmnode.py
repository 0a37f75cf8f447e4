"""A private single-node Slurm for tests: munged, slurmctld and slurmd on this host.

Everything lives in one temporary folder (key, sockets, state, spool, logs, slurm.conf) and
the daemons run in the foreground as our own children, so they are stopped by pid and no
system service, system config or other Slurm on the host is touched. The clients find this
cluster through SLURM_CONF in the environment that env() returns.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol")
CPUS = 4
"""Advertised CPUs (config_overrides: more than a small CI host has, so three tasks run at once)."""


def missing() -> list[str]:
    """The Slurm and munge programs that are not installed."""
    found = {name: shutil.which(name) or _sbin(name) for name in DAEMONS}
    return [name for name, path in found.items() if path is None]


def _sbin(name: str) -> str | None:
    path = Path("/usr/sbin") / name
    return str(path) if path.is_file() else None


def _program(name: str) -> str:
    path = shutil.which(name) or _sbin(name)
    assert path is not None, name
    return path


def _free_ports(count: int) -> list[int]:
    """Ports free now, distinct (all held open until each is known)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


class SlurmNode:
    """One cluster of one node (partitions given by name), started by start(), ended by stop()."""

    def __init__(self, folder: Path, partitions: tuple[str, ...], cluster: str = "cgtest") -> None:
        self.folder = folder
        self.partitions = partitions
        self.cluster = cluster
        self.host = socket.gethostname().split(".")[0]
        self.conf = folder / "slurm.conf"
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []

    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def _write(self) -> None:
        f = self.folder
        for sub in ("munge", "state", "spool", "log"):
            (f / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
        key = f / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        names = [f"PartitionName={p} Nodes={self.host} State=UP MaxTime=INFINITE" for p in self.partitions]
        names[0] += " Default=YES"
        ctld_port, slurmd_port = _free_ports(2)
        self.conf.write_text(
            "\n".join(
                [
                    f"ClusterName={self.cluster}",
                    f"SlurmctldHost={self.host}(127.0.0.1)",
                    f"SlurmctldPort={ctld_port}",
                    f"SlurmdPort={slurmd_port}",
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    "AuthType=auth/munge",
                    "CredType=cred/munge",
                    f"AuthInfo=socket={f / 'munge' / 'munge.sock'}",
                    f"StateSaveLocation={f / 'state'}",
                    f"SlurmdSpoolDir={f / 'spool'}",
                    f"SlurmctldPidFile={f / 'slurmctld.pid'}",
                    f"SlurmdPidFile={f / 'slurmd.pid'}",
                    f"SlurmctldLogFile={f / 'log' / 'slurmctld.log'}",
                    f"SlurmdLogFile={f / 'log' / 'slurmd.log'}",
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "AccountingStorageType=accounting_storage/none",
                    "JobCompType=jobcomp/none",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_Core",
                    "SchedulerType=sched/builtin",
                    "SlurmdParameters=config_overrides",
                    "ReturnToService=2",
                    "MpiDefault=none",
                    "MinJobAge=600",
                    f"NodeName={self.host} NodeAddr=127.0.0.1 CPUs={CPUS} State=UNKNOWN",
                    *names,
                    "",
                ]
            )
        )

    def _spawn(self, name: str, *args: str) -> None:
        log = (self.folder / "log" / f"{name}.out").open("wb")
        proc = subprocess.Popen([_program(name), *args], env=self.env(), stdout=log, stderr=subprocess.STDOUT)
        self.procs.append((name, proc))
        log.close()

    def start(self, timeout: float = 60) -> str | None:
        """Start the three daemons and wait for the node to be idle; None, or why it did not start."""
        self._write()
        m = self.folder / "munge"
        self._spawn(
            "munged",
            "--foreground",
            "--force",
            f"--key-file={m / 'munge.key'}",
            f"--socket={m / 'munge.sock'}",
            f"--pid-file={m / 'munged.pid'}",
            f"--log-file={self.folder / 'log' / 'munged.log'}",
            f"--seed-file={m / 'munge.seed'}",
        )
        self._spawn("slurmctld", "-D", "-c")
        self._spawn("slurmd", "-D", "-N", self.host)
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            dead = [name for name, proc in self.procs if proc.poll() is not None]
            if dead:
                return f"{', '.join(dead)} exited: {self.logs()}"
            out = subprocess.run(
                [_program("sinfo"), "-h", "-N", "-o", "%T"], env=self.env(), capture_output=True, text=True, timeout=10
            )
            state = out.stdout.strip()
            if state.startswith("idle"):
                return None
            time.sleep(0.3)
        return f"the node was not idle within {timeout:.0f} s (sinfo: {state or 'nothing'}): {self.logs()}"

    def logs(self) -> str:
        """The last lines of every daemon log, for a failure's message."""
        parts = []
        for path in sorted((self.folder / "log").glob("*")):
            lines = path.read_text(errors="replace").splitlines()[-8:]
            parts.append(f"--- {path.name}\n" + "\n".join(lines))
        return "\n".join(parts)

    def stop(self) -> None:
        """Stop every daemon this object started, by its pid; then kill what did not stop."""
        for _, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for _, proc in reversed(self.procs):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
