"""``alphadesk mcp --transport http``: streamable HTTP behind the servers' guard."""

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
            started = await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            result = await session.call_tool(
                "get_price_history", {"symbol": "NVDA", "as_of": "2024-06-03"}
            )
            tested = await session.call_tool("backtest", {"symbol": "NVDA", "end": "2024-06-03"})
            assert tested.structured_content is not None
            run = await session.read_resource(
                f"alphadesk://runs/{tested.structured_content['run_id']}"
            )
            resources = [str(r.uri) for r in (await session.list_resources()).resources]
            prompts = [p.name for p in (await session.list_prompts()).prompts]
            prompt = await session.get_prompt("should_i_buy", {"symbol": "nvda"})
    assert {"run_csp_desk", "screen", "ask", "backtest"} <= set(names)
    assert "A run tool's call may name a model among: rules." in (started.instructions or "")
    assert not tested.is_error
    assert [c.mime_type for c in run.contents] == ["text/markdown", "application/json"] + 2 * [
        "image/png"
    ]
    assert "alphadesk://data/universe" in resources
    assert "should_i_buy" in prompts and "NVDA" in prompt.messages[0].content.text  # type: ignore[union-attr]
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["last_date"] == "2024-06-03"
    assert _KEY not in str(result.model_dump())
