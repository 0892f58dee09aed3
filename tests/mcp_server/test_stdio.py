"""``alphadesk mcp`` over stdio, as an MCP client sees it: the catalogue's tools, a chart
tool at a date, the CSP desk with progress and a recorded run, and bad input answered with
clear errors while the server keeps serving."""

from __future__ import annotations

import base64
from datetime import date
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp import types
from mcp.shared.exceptions import MCPError

from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import close_on_or_before
from alphadesk.store.runs import RunStore
from alphadesk.tools.catalog import tool_catalog
from tests.mcp_server.client import mcp_session

pytestmark = pytest.mark.slow

_PNG = b"\x89PNG\r\n\x1a\n"


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_lists_every_catalogue_tool_with_its_own_schema_and_as_of(data_dir: Path) -> None:
    async with mcp_session(data_dir) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    catalog = tool_catalog()
    assert sorted(tools) == sorted([*catalog.names, "screen", "fund", "ask", "backtest"])
    for entry in catalog:
        listed = tools[entry.name].input_schema
        assert "as_of" in listed["properties"], entry.name
        own = {k: v for k, v in listed["properties"].items() if k not in ("as_of", "model")}
        assert own == entry.tool.spec.parameters.get("properties", {}), entry.name
        assert listed.get("required", []) == entry.tool.spec.parameters.get("required", [])
    assert tools["get_price_history"].output_schema is not None
    assert {"run_csp_desk", "run_trading_desk"} <= set(tools)


async def test_a_chart_tool_answers_at_the_date_asked_with_an_image(data_dir: Path) -> None:
    async with mcp_session(data_dir) as session:
        result = await session.call_tool("render_chart", {"symbol": "nvda", "as_of": "2024-12-31"})
    assert not result.is_error, _text(result)
    structured = result.structured_content
    assert structured is not None
    assert structured["symbol"] == "NVDA"
    assert structured["as_of"].startswith("2024-12-31")
    # The price the tool reports is the close of that day in the data, read independently.
    bars = build_provider(Settings(data_dir=data_dir)).daily_bars(
        "NVDA", close_on_or_before(date(2024, 12, 31))
    )
    assert structured["current_price"] == pytest.approx(
        float(bars.frame["close"].iloc[-1]), rel=1e-4
    )
    images = [c for c in result.content if isinstance(c, types.ImageContent)]
    assert images and base64.b64decode(images[0].data).startswith(_PNG)
    assert "As of the close of 2024-12-31" in _text(result)


async def test_without_as_of_a_tool_says_it_used_the_last_close_the_data_covers(
    data_dir: Path,
) -> None:
    async with mcp_session(data_dir) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        result = await session.call_tool("get_price_history", {"symbol": "NVDA"})
    assert not result.is_error, _text(result)
    assert result.structured_content is not None
    jsonschema.validate(result.structured_content, tools["get_price_history"].output_schema)
    last = result.structured_content["last_date"]
    assert "the last date the data covers for NVDA" in _text(result)
    assert last in _text(result)


async def test_the_csp_desk_reports_progress_and_records_its_run(data_dir: Path) -> None:
    progress: list[tuple[float, str | None]] = []

    async def on_progress(done: float, _total: float | None, message: str | None) -> None:
        progress.append((done, message))

    async with mcp_session(data_dir) as session:
        result = await session.call_tool(
            "run_csp_desk", {"symbol": "NVDA", "as_of": "2025-02-14"}, progress_callback=on_progress
        )
    assert not result.is_error, _text(result)
    verdict = result.structured_content
    assert verdict is not None and verdict["desk"] == "csp" and verdict["run_id"]
    assert len(progress) >= 3
    assert [done for done, _ in progress] == sorted(done for done, _ in progress)
    assert any(message and message.endswith(" started") for _, message in progress)
    run = RunStore(Settings(data_dir=data_dir).store_path).get(verdict["run_id"])
    assert run.kind == "csp" and run.status == verdict["decision"]
    assert run.as_of is not None and run.as_of.date() == date(2025, 2, 14)


async def test_bad_input_gets_a_clear_error_and_the_server_keeps_serving(data_dir: Path) -> None:
    async with mcp_session(data_dir) as session:
        with pytest.raises(MCPError, match="no tool 'get_prices'"):
            await session.call_tool("get_prices", {"symbol": "NVDA"})
        wrong_type = await session.call_tool("get_price_history", {"symbol": "NVDA", "period": 3})
        unknown = await session.call_tool("get_price_history", {"symbol": "ZZZZQ"})
        bad_symbol = await session.call_tool("get_price_history", {"symbol": "NV DA!"})
        bad_date = await session.call_tool(
            "get_price_history", {"symbol": "NVDA", "as_of": "2024-13-01"}
        )
        missing = await session.call_tool("get_price_history", {})
        fine = await session.call_tool(
            "get_price_history", {"symbol": "NVDA", "as_of": "2024-06-03"}
        )
    assert wrong_type.is_error and "period" in _text(wrong_type)
    assert unknown.is_error and "ZZZZQ" in _text(unknown)
    assert bad_symbol.is_error and "symbol" in _text(bad_symbol).lower()
    assert bad_date.is_error and "pass YYYY-MM-DD" in _text(bad_date)
    assert missing.is_error and "symbol" in _text(missing) and "required" in _text(missing).lower()
    assert not fine.is_error and fine.structured_content is not None
    assert fine.structured_content["last_date"] == "2024-06-03"


async def test_the_trading_desk_reports_its_debate_and_records_its_decision(data_dir: Path) -> None:
    messages: list[str] = []

    async def on_progress(_done: float, _total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async with mcp_session(data_dir) as session:
        result = await session.call_tool(
            "run_trading_desk",
            {"symbol": "NVDA", "as_of": "2025-02-14"},
            progress_callback=on_progress,
        )
    assert not result.is_error, _text(result)
    verdict = result.structured_content
    assert verdict is not None and verdict["decision"] in ("BUY", "HOLD", "SELL")
    assert "bull argued in the investment debate (round 1)" in messages
    assert "bear answered the others in the investment debate (round 1)" in messages
    assert messages[-1] == "judge completed"
    run = RunStore(Settings(data_dir=data_dir).store_path).get(verdict["run_id"])
    assert run.kind == "desk" and run.result is not None
    assert run.result["final"]["action"] == verdict["details"]["action"]


async def test_a_secret_echoed_back_in_an_error_is_redacted(data_dir: Path) -> None:
    secret = "QZQZXWXW"  # a key that happens to be a valid symbol, sent back in the error
    async with mcp_session(data_dir, BROKER_API_KEY=secret) as session:
        result = await session.call_tool("get_price_history", {"symbol": secret})
    assert result.is_error
    assert secret not in _text(result)
    assert "[REDACTED]: no provider had daily bars" in _text(result)


async def test_a_cancelled_run_tool_call_is_recorded_interrupted_and_the_server_goes_on(
    data_dir: Path,
) -> None:
    started = anyio.Event()

    async def on_progress(_done: float, _total: float | None, _message: str | None) -> None:
        started.set()

    async with mcp_session(data_dir) as session:
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await session.call_tool(
                    "run_csp_desk", {"symbol": "NVDA", "as_of": "2025-02-14"},
                    progress_callback=on_progress,
                )  # fmt: skip

            group.start_soon(call)
            with anyio.fail_after(60):
                await started.wait()
            group.cancel_scope.cancel()  # the client gives up: notifications/cancelled
        store = RunStore(Settings(data_dir=data_dir).store_path)
        for _ in range(150):  # the server records the interruption as it unwinds
            runs = store.recent(kind="csp")
            if runs and runs[0].status != "running":
                break
            await anyio.sleep(0.2)
        after = await session.call_tool("get_price_history", {"symbol": "NVDA"})
    assert [run.status for run in runs] == ["interrupted"]
    assert "Cancelled" in (runs[0].error or "")
    assert not after.is_error
