"""``alphadesk mcp --transport http``: streamable HTTP behind the HTTP API's guard."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.mcp_server.client import free_port, http_server, server_env

pytestmark = pytest.mark.slow

_KEY = "mcp-test-key-5f2b9c"


def test_off_loopback_without_a_key_it_refuses_to_start(data_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "alphadesk", "mcp", "--transport", "http", "--host", "0.0.0.0"],
        env=server_env(data_dir, ALPHADESK_API_KEY=""),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 without an API key" in done.stderr


async def test_with_a_key_only_a_client_that_sends_it_is_served(data_dir: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with http_server(data_dir, port, ALPHADESK_API_KEY=_KEY):
        async with httpx.AsyncClient() as plain:
            refused = await plain.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401
        assert "API key" in refused.json()["error"]["message"]

        keyed = httpx2.AsyncClient(headers={"Authorization": f"Bearer {_KEY}"}, timeout=60)
        async with (
            keyed,
            streamable_http_client(url, http_client=keyed) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            result = await session.call_tool(
                "get_price_history", {"symbol": "NVDA", "as_of": "2024-06-03"}
            )
    assert "run_csp_desk" in names
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["last_date"] == "2024-06-03"
    assert _KEY not in str(result.model_dump())
