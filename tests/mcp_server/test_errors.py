"""Whatever fails inside the MCP server, what a client reads names no file of this
machine: an unexpected failure is a generic internal error (its trace in the server's
log), and an error the client can act on keeps its words without the path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.base import MarketData
from alphadesk.data.errors import NoData
from alphadesk.mcp_server import build_server

DAY = "2024-06-03"


class BrokenMarket:
    """The bundled market whose bars and coverage fail as a store that would not open does,
    the error naming the file (as ChromaDB's and SQLite's do)."""

    def __init__(self, inner: MarketData, failure: Exception) -> None:
        self._inner, self._failure = inner, failure

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def daily_bars(self, *_args: Any, **_kwargs: Any) -> Any:
        raise self._failure

    def coverage(self) -> Any:
        raise self._failure


def _server(data_dir: Path, failure: Exception) -> Any:
    settings = Settings(data_dir=data_dir, memory={"enabled": False})
    return build_server(settings, market=BrokenMarket(build_provider(settings), failure))  # type: ignore[arg-type]


def _where(data_dir: Path) -> str:
    return str(data_dir / "memory" / "chroma.sqlite3")


async def test_an_unexpected_failure_is_a_generic_internal_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    failure = RuntimeError(
        f"'RustBindingsAPI' object has no attribute 'bindings' ({_where(tmp_path)})"
    )
    async with Client(_server(tmp_path, failure)) as client:
        with pytest.raises(MCPError) as tool:
            await client.call_tool("get_price_history", {"symbol": "NVDA", "as_of": DAY})
        with pytest.raises(MCPError) as resource:
            await client.read_resource("alphadesk://data/universe")
    for raised in (tool.value, resource.value):
        said = raised.error.message
        assert str(tmp_path) not in said and "chroma" not in said and "/" not in said, said
        assert "the server failed on this request (RuntimeError)" in said
    assert _where(tmp_path) in caplog.text  # the operator still reads what happened


async def test_an_error_the_client_can_act_on_keeps_its_words_without_the_path(
    tmp_path: Path,
) -> None:
    failure = NoData(f"no bars for NVDA in {tmp_path / 'bars' / 'NVDA.parquet'}")
    async with Client(_server(tmp_path, failure)) as client:
        result = await client.call_tool("get_price_history", {"symbol": "NVDA", "as_of": DAY})
    said = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error
    assert said.startswith("get_price_history: no bars for NVDA in <path>"), said
    assert str(tmp_path) not in said
