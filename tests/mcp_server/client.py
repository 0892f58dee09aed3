"""``alphadesk mcp`` started as a real subprocess (stdio or HTTP) for the SDK's own client."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TextIO

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SRC = Path(__file__).resolve().parents[2] / "src"


def server_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """This checkout's alphadesk over a private data directory."""
    path = f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    return {**os.environ, "PYTHONPATH": path, "ALPHADESK_DATA_DIR": str(data_dir), **extra}


@asynccontextmanager
async def mcp_session(
    data_dir: Path, *args: str, errlog: TextIO = sys.stderr, **env: str
) -> AsyncIterator[ClientSession]:
    """A client session with ``alphadesk mcp ARGS`` (stdio) over a private data directory,
    its stderr to ``errlog``."""
    command = [sys.executable, "-m", "alphadesk", "mcp", *args]
    environment = server_env(data_dir, **env)
    params = StdioServerParameters(command=command[0], args=command[1:], env=environment)
    streams = stdio_client(params, errlog=errlog)
    async with streams as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def cli_json(data_dir: Path, *args: str) -> Any:
    """What ``alphadesk ARGS --json`` prints over ``data_dir``, parsed."""
    done = subprocess.run(
        [sys.executable, "-m", "alphadesk", *args, "--json"],
        env=server_env(data_dir), capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def http_server(data_dir: Path, port: int, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    """``alphadesk mcp --transport http`` on loopback, once it accepts connections."""
    process = subprocess.Popen(
        [sys.executable, "-m", "alphadesk", "mcp", "--transport", "http", "--port", str(port)],
        env=server_env(data_dir, **env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield process
    finally:
        process.terminate()
        process.wait(timeout=20)
