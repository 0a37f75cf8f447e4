"""`cudagloss serve [--port N]`: the live preview (`mkdocs serve` with the glossary's hooks).

What it adds to `mkdocs serve`: a port that is taken, or not a port, is one line naming
another to try (MkDocs prints a traceback), and the preview rebuilds only the pages an edit
changes (--dirty, which the hooks make exact). A term broken while it runs is shown in the
browser with its diagnostics (cudagloss.mkdocs.adapter), and clears once fixed. Before MkDocs
starts, every path it would read, watch or import is checked (cudagloss.load.preview): a hook or
folder outside the repository, or a committed link on the way to one, is one line and a
non-zero exit, and MkDocs never runs.
"""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
from pathlib import Path

from cudagloss.errors import ExitCode, UsageError
from cudagloss.model.project import CONFIG

HOST = "127.0.0.1"


def port_number(text: str) -> int:
    """The port as typed (make serve PORT=...): a number from 1 to 65535, or a usage error."""
    if not text.isascii() or not text.isdigit() or not 0 < int(text) < 65536:
        raise UsageError(f"PORT must be a number from 1 to 65535, not {text!r}")
    return int(text)


def port_free(port: int) -> bool:
    """Whether the preview could listen on the port now (another server, say an earlier make serve, may hold it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the preview's server binds
        try:
            probe.bind((HOST, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def run(args: argparse.Namespace) -> ExitCode:
    from cudagloss.load.preview import refuse_preview_reads

    refuse_preview_reads(Path(args.config or CONFIG))  # before MkDocs imports a hook or watches a folder
    port = port_number(str(args.port))
    if not port_free(port):
        raise UsageError(f"port {port} on {HOST} is in use (another make serve?): try make serve PORT={port + 1}")
    command = [sys.executable, "-m", "mkdocs", "serve", "--dev-addr", f"{HOST}:{port}", "--livereload", "--dirty"]
    if args.config:
        command += ["--config-file", args.config]
    sys.stdout.flush()
    # The preview's own process: Ctrl-C and its output are MkDocs'. PYTHONSAFEPATH (Python 3.11+):
    # `python -m` puts the working folder first on sys.path, and a module lister (pkgutil) would
    # then stat every entry of the repository's root, a committed link among them, following it.
    os.execve(sys.executable, command, {**os.environ, "PYTHONSAFEPATH": "1"})


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser("serve", help="preview the site; a saved edit rebuilds the pages it changes")
    serve.add_argument("--port", default="8000", help="the port on 127.0.0.1 (default: 8000)")
    serve.add_argument("--config", help="the preview's configuration (default: mkdocs.yml)")
    serve.set_defaults(run=run)
