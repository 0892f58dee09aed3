"""The assistant offline, on the rules model and the bundled real data."""

from __future__ import annotations

import json
from datetime import date

import pytest

from alphadesk.agent.events import ToolFinished, ToolStarted
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import session_close
from alphadesk.pipelines.assistant import ChatRequest
from alphadesk.pipelines.assistant.events import sse_frame
from alphadesk.pipelines.follow import orders_from_run
from alphadesk.portfolio import Contract, OrderRequest
from alphadesk.store import RunStore
from alphadesk.store.conversations import ConversationStore
from tests.pipelines.assistant.conftest import Make, ask, states

CHART = {"get_technical_indicators", "find_support_resistance", "detect_chart_patterns",
         "get_price_history"}  # fmt: skip


def _answer_tools(result: object) -> list[str]:
    return [c.tool for c in result.tool_calls if c.tool != "lookup_symbols"]  # type: ignore[attr-defined]


async def test_hello_calls_no_tool(make: Make) -> None:
    result, events = await ask(make(), "hello")
    assert result.status == "completed" and result.answer.startswith("Hello!")
    assert result.route is not None and result.route.selected_tools == []
    assert _answer_tools(result) == []
    assert states(events) == ["PLANNING", "RESPONDING", "IDLE"]


@pytest.mark.slow
async def test_a_technical_question_routes_direct_to_the_chart_tools(make: Make) -> None:
    result, events = await ask(make(), "how does NVDA look technically")
    assert result.classification is not None
    assert result.classification.question_type == "stock_specific"
    assert result.classification.symbols == ["NVDA"]
    assert result.route is not None and result.route.strategy == "DIRECT"
    assert set(result.route.selected_tools) == CHART == set(_answer_tools(result))
    assert all(
        json.loads(c.arguments)["symbol"] == "NVDA" for c in result.tool_calls if c.tool in CHART
    )
    # Concurrent: every chart call started before the first one finished.
    chart = [e for e in events if getattr(e, "tool", None) in CHART]
    first_finish = next(i for i, e in enumerate(chart) if isinstance(e, ToolFinished))
    assert sum(isinstance(e, ToolStarted) for e in chart[:first_finish]) == 4
    assert states(events) == ["PLANNING", "EXECUTING", "RESPONDING", "IDLE"]
    assert "NVDA: last close" in result.answer and result.numbers.ok
    assert result.numbers.checked > 10
    # Offline with no --as-of: the last date the bundled data covers, said so.
    assert result.as_of.date().isoformat() == "2025-02-14"
    assert "last date the data covers for NVDA" in (result.as_of_note or "")


async def test_a_comparison_runs_per_symbol_in_parallel(make: Make) -> None:
    result, events = await ask(make(), "compare AAPL and MSFT")
    assert result.route is not None and result.route.strategy == "PARALLEL"
    calls = [(c.tool, json.loads(c.arguments)["symbol"]) for c in result.tool_calls
             if c.tool != "lookup_symbols"]  # fmt: skip
    tools = set(result.route.selected_tools)
    assert sorted(calls) == sorted((t, s) for t in tools for s in ("AAPL", "MSFT"))
    started = [e for e in events if isinstance(e, ToolStarted) and e.agent == "assistant"]
    first_finish = next(i for i, e in enumerate(events) if isinstance(e, ToolFinished)
                        and e.agent == "assistant")  # fmt: skip
    assert all(events.index(e) < first_finish for e in started)
    assert "AAPL" in result.answer and "MSFT" in result.answer and result.numbers.ok


async def test_what_are_my_positions_reads_the_portfolio(make: Make) -> None:
    pipeline = make()
    traded = session_close(date(2022, 6, 30))  # before the answer's instant (KO's last close)
    pipeline.portfolio.place(OrderRequest(contract=Contract(symbol="KO"), side="buy",
                                          quantity=100, price=40.0, as_of=traded))  # fmt: skip
    result, _ = await ask(pipeline, "what are my positions")
    assert result.classification is not None
    assert result.classification.question_type == "portfolio"
    assert _answer_tools(result) == ["get_positions"]
    assert "KO x 100 at 40, mark" in result.answer and result.numbers.ok
    assert result.as_of.date().isoformat() == "2022-12-28"  # KO's last bundled close
    assert "Cash $96,000.00" in result.answer
    mark = pipeline.market.quote("KO", result.as_of).price
    assert f"mark {mark}, P&L ${(mark - 40) * 100:,.2f}" in result.answer


async def test_a_0dte_strangle_runs_the_engine_on_the_index_and_vix(make: Make) -> None:
    result, _ = await ask(make(), "sell a 0DTE SPY strangle")
    assert "run_zero_dte_engine" in _answer_tools(result)
    assert result.as_of.date().isoformat() == "2018-12-31"
    assert "^GSPC, ^VIX" in (result.as_of_note or "")
    assert "S&P 500 index 2,506.85 / 10" in result.answer and "modeled" in result.answer
    assert "sell the 244 put at $0.30" in result.answer and result.numbers.ok


async def test_what_spy_is_at_is_answered_from_the_last_spy_bar(make: Make) -> None:
    # No --as-of: SPY is the subject, so its own data dates the answer (its last bundled
    # bar, 2025-03-07, close 575.92 in the StockBench snapshot), not the index's 2018 end.
    result, _ = await ask(make(), "what's spy at")
    assert result.classification is not None and result.classification.symbols == ["SPY"]
    assert result.as_of.date().isoformat() == "2025-03-07"
    assert "last date the data covers for SPY." in (result.as_of_note or "")
    assert "SPY 575.92 (observed SPY close)" in result.answer
    assert "modeled" not in result.answer.split("Not available")[0]


@pytest.mark.slow
async def test_a_screen_iterates_and_deep_questions_reach_the_thinker(make: Make) -> None:
    result, events = await ask(make(), "find stocks in an uptrend")
    assert result.route is not None and result.route.strategy == "ITERATIVE"
    assert _answer_tools(result)[0] == "stock_screener"
    assert _answer_tools(result).count("get_technical_indicators") == 3
    assert states(events) == ["PLANNING", "EXECUTING", "RESPONDING", "IDLE"]
    result, _ = await ask(make(), "should I trade today given current conditions?")
    assert _answer_tools(result) == ["get_market_overview", "think_deeply"]
    assert "No deep model is configured (rules)" in result.answer


async def test_sessions_remember_and_every_call_is_audited(make: Make) -> None:
    pipeline = make()
    first, _ = await ask(pipeline, "how does NVDA look technically")
    second, _ = await ask(pipeline, "hello", session_id=first.session_id)
    assert second.session_id == first.session_id
    history = pipeline.conversations.history(first.session_id)
    assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]
    store = ConversationStore(pipeline.settings.store_path)
    audit = store.audit_log(session_id=first.session_id)
    assert {e.tool for e in audit if e.kind == "tool_call"} >= CHART
    assert [e.kind for e in audit].count("answer") == 2
    run = RunStore(pipeline.settings.store_path).get(first.run_id)
    assert run.kind == "assistant" and run.status == "completed"
    assert run.result is not None and run.result["answer"] == first.answer


async def test_an_unknown_symbol_is_named_with_close_matches(make: Make) -> None:
    result, _ = await ask(make(), "how does NVDX look")
    assert result.classification is not None
    (unknown,) = result.classification.unresolved
    assert unknown.text == "NVDX" and "NVDA" in unknown.close_matches
    assert "I could not find the symbol NVDX." in result.answer


@pytest.mark.slow
async def test_the_csp_desk_is_a_tool_and_its_decision_becomes_an_order(make: Make) -> None:
    pipeline = make()
    result, _ = await ask(pipeline, "should I sell a cash-secured put on NVDA?")
    assert _answer_tools(result) == ["run_csp_desk"] and result.numbers.ok
    (desk_run,) = RunStore(pipeline.settings.store_path).recent(kind="csp")
    assert desk_run.status == "select" and desk_run.as_of == result.as_of
    (order,) = orders_from_run(RunStore(pipeline.settings.store_path), desk_run.id)
    assert order.side == "sell" and order.contract.right == "put"
    assert f"The csp desk on NVDA: select. Sell 1 NVDA {order.contract.expiration} " in (
        result.answer
    )
    placed = pipeline.portfolio.place(order)
    assert placed.source == f"csp run {desk_run.id}"


async def test_the_event_stream_is_ready_for_server_sent_events(make: Make) -> None:
    pipeline = make()
    frames = [sse_frame(e) async for e in pipeline.run(ChatRequest(question="hello"))]
    assert all(f.startswith("event: ") and f.endswith("\n\n") for f in frames)
    last = frames[-1].split("\n")
    assert last[0] == "event: chat_finished"
    assert json.loads(last[1].removeprefix("data: "))["result"]["answer"].startswith("Hello!")
    deltas = [f for f in frames if f.startswith("event: text_delta")]
    assert len(deltas) > 3  # the rules answer arrives in pieces


async def test_web_search_says_it_is_unavailable_offline(make: Make) -> None:
    result, _ = await ask(make(), "search the web for news about the Fed")
    assert _answer_tools(result) == ["web_search"]
    # Offline the question falls back to the data's last date: the web of today would
    # see its future, so the search is refused, and the answer says why.
    assert "web_search: not available (web search shows today's web" in result.answer


@pytest.mark.slow
async def test_the_trading_desk_is_a_tool_and_its_decision_becomes_an_order(make: Make) -> None:
    pipeline = make()
    result, _ = await ask(pipeline, "should I buy AAPL as of now? buy, hold or sell")
    assert _answer_tools(result) == ["run_trading_desk"] and result.numbers.ok
    store = RunStore(pipeline.settings.store_path)
    (desk_run,) = store.recent(kind="desk")
    assert desk_run.as_of == result.as_of and desk_run.result is not None
    decision = desk_run.result["decision"]
    assert f"The trading desk on AAPL: {decision}." in result.answer
    if decision == "HOLD":
        with pytest.raises(ValueError, match="no order to place"):
            orders_from_run(store, desk_run.id)
        return
    final = desk_run.result["final"]
    (order,) = orders_from_run(store, desk_run.id, 10)
    assert order.contract == Contract(symbol="AAPL") and order.quantity == 10
    assert order.side == ("buy" if decision == "BUY" else "sell")
    assert order.price == final["entry"] and order.source == f"desk run {desk_run.id}"


async def test_the_settings_set_a_questions_limits_unless_it_names_its_own(
    settings: Settings, market: MarketData
) -> None:
    # [assistant] request_timeout_s bounds a question that names no limits; one that names
    # its own keeps them.
    from alphadesk.pipelines.assistant import AssistantPipeline, ChatLimits

    tight = settings.model_copy(
        update={"assistant": settings.assistant.model_copy(update={"request_timeout_s": 1e-3})}
    )
    pipeline = AssistantPipeline(tight, market, model="rules")
    result, _ = await ask(pipeline, "how does NVDA look?")
    assert result.status == "error" and "0.001" in (result.error or ""), result.error
    result, _ = await ask(pipeline, "how does NVDA look?", limits=ChatLimits())
    assert result.status == "completed", result.error
