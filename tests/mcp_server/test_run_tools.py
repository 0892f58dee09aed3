"""The run tools that are not catalogue tools (screen, ask, backtest) over stdio, and the
guards on every call of a run tool: the model allow-list, runs at once, a call's time limit."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import types

from alphadesk.agents.csp.models import CspConstraints
from alphadesk.config import McpSettings, Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import close_on_or_before
from alphadesk.mcp_server.guards import Guards
from alphadesk.pipelines.screen.prefilter import prefilter
from alphadesk.serving.allowed import ModelNotAllowed
from alphadesk.store.runs import RunStore
from tests.mcp_server.client import cli_json, mcp_session

pytestmark = pytest.mark.slow

_DAY = date(2025, 2, 14)


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _store(data_dir: Path) -> RunStore:
    return RunStore(Settings(data_dir=data_dir).store_path)


async def _schemas(session: Any) -> dict[str, Any]:
    return {t.name: t.output_schema for t in (await session.list_tools()).tools}


async def test_screen_filters_then_runs_the_desk_on_the_survivors(data_dir: Path) -> None:
    messages: list[str] = []

    async def on_progress(_done: float, _total: float | None, message: str | None) -> None:
        messages.append(message or "")

    symbols = ["NVDA", "KO", "AAPL"]
    async with mcp_session(data_dir) as session:
        schemas = await _schemas(session)
        result = await session.call_tool(
            "screen", {"symbols": [s.lower() for s in symbols], "as_of": str(_DAY)},
            progress_callback=on_progress,
        )  # fmt: skip
    assert not result.is_error, _text(result)
    screen = result.structured_content
    assert screen is not None
    jsonschema.validate(screen, schemas["screen"])
    # The pre-filter's verdicts, computed here on the same data, decide who reached the desk.
    market = build_provider(Settings(data_dir=data_dir))
    at = close_on_or_before(_DAY)
    passed = {s for s in symbols if prefilter(market, s, at, CspConstraints()).passed}
    assert {c["symbol"] for c in screen["candidates"]} == passed
    assert {f["symbol"] for f in screen["filtered"]} == set(symbols) - passed
    assert all(f["reasons"] for f in screen["filtered"])
    assert screen["counts"]["symbol_dates"] == 3 and screen["counts"]["analysed"] == len(passed)
    for symbol in symbols:
        assert any(m.startswith(f"{symbol}: ") for m in messages), messages
    store = _store(data_dir)
    assert store.get(screen["run_id"]).kind == "screen"
    for candidate in screen["candidates"]:
        run = store.get(candidate["run_id"])
        assert run.kind == "csp" and run.status == candidate["decision"]


async def test_ask_answers_from_the_data_and_continues_the_conversation(data_dir: Path) -> None:
    async with mcp_session(data_dir) as session:
        schemas = await _schemas(session)
        first = await session.call_tool(
            "ask", {"question": "how does NVDA look?", "as_of": str(_DAY)}
        )
        assert not first.is_error, _text(first)
        answer = first.structured_content
        assert answer is not None
        again = await session.call_tool(
            "ask", {"question": "and KO?", "session_id": answer["session_id"], "as_of": str(_DAY)}
        )
    jsonschema.validate(answer, schemas["ask"])
    close = build_provider(Settings(data_dir=data_dir)).daily_bars("NVDA", close_on_or_before(_DAY))
    assert f"{float(close.frame['close'].iloc[-1]):.2f}" in answer["answer"]
    assert answer["status"] == "completed" and answer["numbers"]["checked"] > 0
    assert _store(data_dir).get(answer["run_id"]).kind == "assistant"
    assert f"alphadesk://runs/{answer['run_id']}" in _text(first)
    assert again.structured_content is not None
    assert again.structured_content["session_id"] == answer["session_id"]


async def test_backtest_gives_the_cli_s_numbers_and_records_its_charts(data_dir: Path) -> None:
    arguments = {"symbol": "NVDA", "strategy": "sma_cross", "params": {"fast": 10},
                 "start": "2020-01-01", "end": "2024-12-31"}  # fmt: skip
    async with mcp_session(data_dir) as session:
        schemas = await _schemas(session)
        result = await session.call_tool("backtest", arguments)
        assert not result.is_error, _text(result)
        outcome = result.structured_content
        assert outcome is not None
        charts = await session.read_resource(f"alphadesk://runs/{outcome['run_id']}/chart")
    jsonschema.validate(outcome, schemas["backtest"])
    expected = cli_json(data_dir, "backtest", "sma_cross", "NVDA", "--param", "fast=10",
                        "--from", "2020-01-01", "--to", "2024-12-31")  # fmt: skip
    assert outcome["metrics"] == expected["metrics"]
    assert outcome["params"] == {"fast": 10, "slow": 50} == expected["strategy"]["params"]
    assert outcome["trades"] == len(expected["trades"])
    assert outcome["buy_and_hold"]["final"] != outcome["metrics"]["final"]
    names = sorted(c.uri.rsplit("/", 1)[-1] for c in charts.contents)
    assert names == ["NVDA_sma_cross_drawdown.png", "NVDA_sma_cross_equity.png"]
    assert all(isinstance(c, types.BlobResourceContents) for c in charts.contents)
    run = _store(data_dir).get(outcome["run_id"])
    assert run.kind == "backtest" and run.status == "completed"


_STRATEGY = """
import backtrader as bt


class BuyOnce(bt.Strategy):
    def next(self):
        if not self.position:
            self.buy(size=10)
"""


async def test_backtest_code_is_checked_and_run_only_in_the_sandbox(data_dir: Path) -> None:
    from alphadesk.backtest.sandbox import SandboxUnavailable, find_sandbox

    base = {"symbol": "KO", "strategy": "buy_once", "start": "2022-01-03", "end": "2022-06-30"}
    async with mcp_session(data_dir) as session:
        sneaky = _STRATEGY.replace("import backtrader", "import os\nimport backtrader")
        refused = await session.call_tool("backtest", {**base, "code": sneaky})
        try:
            find_sandbox()
        except SandboxUnavailable:
            pytest.skip("no sandbox on this machine: strategy code never runs")
        ran = await session.call_tool("backtest", {**base, "code": _STRATEGY})
    assert refused.is_error and "refused by the static check" in _text(refused)
    assert "os" in _text(refused)
    assert not ran.is_error, _text(ran)
    outcome = ran.structured_content
    assert outcome is not None and outcome["strategy"] == "buy_once"
    assert outcome["trades"] == 1 and outcome["engine"] == "backtrader"
    assert "strategy code run on Backtrader in the sandbox" in outcome["notes"]


async def test_run_tool_calls_with_bad_input_get_clear_errors(data_dir: Path) -> None:
    async with mcp_session(data_dir) as session:
        calls = {
            "bad symbol": ("screen", {"symbols": ["NV DA!"]}),
            "bad date": ("screen", {"symbols": ["NVDA"], "as_of": "2024-13-01"}),
            "too many": ("screen", {"symbols": [f"S{i}" for i in range(51)]}),
            "wrong type": ("ask", {"question": 3}),
            "extra": ("ask", {"question": "hi", "temperature": 2}),
            "unknown strategy": ("backtest", {"symbol": "NVDA", "strategy": "moonshot"}),
            "unknown symbol": ("backtest", {"symbol": "ZZZZQ"}),
            "bad param": ("backtest", {"symbol": "NVDA", "params": {"fast": "ten"}}),
        }
        results = {
            name: await session.call_tool(tool, args) for name, (tool, args) in calls.items()
        }
        fine = await session.call_tool("backtest", {"symbol": "KO", "strategy": "buy_hold"})
    said = {name: _text(result) for name, result in results.items()}
    assert all(result.is_error for result in results.values()), said
    assert "symbol" in said["bad symbol"].lower()
    assert "as_of" in said["bad date"] and "YYYY-MM-DD" in said["bad date"]
    assert "limit is 50" in said["too many"]
    assert "question" in said["wrong type"]
    assert "temperature" in said["extra"] and "not permitted" in said["extra"]
    assert "moonshot" in said["unknown strategy"] and "sma_cross" in said["unknown strategy"]
    assert "ZZZZQ" in said["unknown symbol"]
    assert "fast must be an integer" in said["bad param"]
    assert not fine.is_error, _text(fine)
    assert [run.kind for run in _store(data_dir).recent()] == ["backtest"]  # nothing else ran


async def test_a_model_the_server_does_not_allow_is_refused(data_dir: Path) -> None:
    async with mcp_session(data_dir) as session:
        schemas = await _schemas(session)
        csp = await session.call_tool("run_csp_desk", {"symbol": "NVDA", "model": "openai/gpt-4o"})
        ask = await session.call_tool("ask", {"question": "hi", "model": "anthropic/claude-x"})
        allowed = await session.call_tool(
            "run_csp_desk", {"symbol": "NVDA", "as_of": str(_DAY), "model": "rules"}
        )
    for refused, name in ((csp, "openai/gpt-4o"), (ask, "anthropic/claude-x")):
        assert refused.is_error
        assert f"model {name!r} is not allowed on this server" in _text(refused)
        assert "use one of rules" in _text(refused)
    assert not allowed.is_error, _text(allowed)
    jsonschema.validate(allowed.structured_content, schemas["run_csp_desk"])
    assert [run.model for run in _store(data_dir).recent()] == ["rules"]


def test_the_allow_list_is_rules_the_configured_models_and_the_added_ones() -> None:
    settings = Settings(models={"quick": "ollama/qwen3"}, mcp=McpSettings(models=["openai/x"]))
    guards = Guards(settings)
    assert guards.models.names == ["ollama/qwen3", "openai/x", "rules"]
    assert guards.model("openai/x") == "openai/x" and guards.model(None) is None
    with pytest.raises(ModelNotAllowed, match="'openai/y' is not allowed"):
        guards.model("openai/y")


async def test_one_run_tool_call_more_than_the_limit_is_refused_at_once(data_dir: Path) -> None:
    started = anyio.Event()
    results: list[types.CallToolResult] = []

    async def on_progress(_done: float, _total: float | None, _message: str | None) -> None:
        started.set()

    async with (
        mcp_session(data_dir, ALPHADESK_MCP__MAX_RUNS="1") as session,
        anyio.create_task_group() as group,
    ):

        async def first() -> None:
            results.append(await session.call_tool(
                "run_trading_desk", {"symbol": "NVDA", "as_of": str(_DAY)},
                progress_callback=on_progress,
            ))  # fmt: skip

        group.start_soon(first)
        with anyio.fail_after(60):
            await started.wait()
        second = await session.call_tool("screen", {"symbols": ["KO"], "as_of": str(_DAY)})
    assert second.is_error
    assert "1 run is in progress, the server's limit is 1 ([mcp] max_runs)" in _text(second)
    assert not results[0].is_error, _text(results[0])
    assert [run.kind for run in _store(data_dir).recent()] == ["desk"]


async def test_a_cancelled_screen_is_recorded_interrupted_and_the_server_goes_on(
    data_dir: Path,
) -> None:
    heard = anyio.Event()

    async def on_progress(_done: float, _total: float | None, _message: str | None) -> None:
        heard.set()

    arguments = {"symbols": ["KO", "JPM", "XOM"], "as_of": "2022-06-30", "concurrency": 1}
    async with mcp_session(data_dir) as session:
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await session.call_tool("screen", arguments, progress_callback=on_progress)

            group.start_soon(call)
            with anyio.fail_after(120):
                await heard.wait()  # the first symbol is done, the others are not
            group.cancel_scope.cancel()
        store = _store(data_dir)
        for _ in range(150):  # the server records the interruption as it unwinds
            if all(run.status != "running" for run in store.recent()):
                break
            await anyio.sleep(0.2)
        after = await session.call_tool("get_price_history", {"symbol": "KO"})
    (screen,) = store.recent(kind="screen")
    assert screen.status == "interrupted" and "Cancelled" in (screen.error or "")
    assert len(store.recent(kind="csp")) < 3  # not every symbol was analysed
    assert not after.is_error
