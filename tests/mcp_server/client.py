"""``alphadesk mcp`` started as a real subprocess, driven by the SDK's own client."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SRC = Path(__file__).resolve().parents[2] / "src"


@asynccontextmanager
async def mcp_session(data_dir: Path) -> AsyncIterator[ClientSession]:
    """A client session with ``alphadesk mcp`` (stdio) over a private data directory."""
    env = {
        **os.environ,
        "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        "ALPHADESK_DATA_DIR": str(data_dir),
    }
    params = StdioServerParameters(command=sys.executable, args=["-m", "alphadesk", "mcp"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session
