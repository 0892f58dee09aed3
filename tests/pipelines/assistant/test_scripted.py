"""The assistant with scripted models: malformed router output retried, a tool timeout and
the iteration limit reported in the answer, a made-up figure flagged, errors typed, and the
answer streamed token by token from LiteLLM over a real local HTTP server."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from alphadesk.agent.agent import FORCE_FINAL
from alphadesk.agent.events import OutputRetry, TextDelta
from alphadesk.data.calendar import session_close
from alphadesk.llm.litellm_model import LiteLLMModel
from alphadesk.llm.testing import ScriptedModel, json_answer, tool_calls
from alphadesk.pipelines.assistant import ChatLimits
from alphadesk.store.conversations import ConversationStore
from tests.pipelines.assistant.conftest import Make, ask, states
from tests.support.openai_server import OpenAIServer, reply_text

pytestmark = pytest.mark.filterwarnings("ignore:.*using the `ReadOnly` qualifier:UserWarning")


def route(strategy: str, calls: list[tuple[str, dict[str, Any]]], **extra: Any) -> dict[str, Any]:
    return {
        "selected_tools": [name for name, _ in calls] + extra.pop("tools", []),
        "complexity": extra.pop("complexity", "SIMPLE"),
        "strategy": strategy,
        "calls": [{"tool": name, "arguments": args} for name, args in calls],
        "reason": "scripted",
    }


CLOSE_2018 = session_close(date(2018, 12, 31))
OVERVIEW = route("DIRECT", [("get_market_overview", {})])


async def test_malformed_router_output_goes_back_and_is_fixed(make: Make) -> None:
    router = ScriptedModel([
        "I think you should look at the market.",  # no JSON at all
        json_answer(route("DIRECT", [("get_weather", {})])),  # an unknown tool
        json_answer(OVERVIEW),
    ])  # fmt: skip
    result, events = await ask(make({"router": router}), "how is the market?")
    assert result.status == "completed" and result.route is not None
    assert result.route.selected_tools == ["get_market_overview"]
    retries = [e for e in events if isinstance(e, OutputRetry) and e.agent == "router"]
    assert len(retries) == 2 and "unknown tools ['get_weather']" in retries[1].error
    assert "no JSON object" in router.requests[1].last_text
    assert "S&P 500 2506.85" in result.answer


async def test_a_tool_timeout_is_reported_in_the_answer(make: Make) -> None:
    router = ScriptedModel([json_answer(route("DIRECT", [
        ("get_market_overview", {}), ("think_deeply", {"query": "size?"})]))])  # fmt: skip
    slow_thinker = ScriptedModel(["REASONING: x CONCLUSION: y"], latency_s=5.0)
    pipeline = make({"router": router, "thinker": slow_thinker})
    limits = ChatLimits(tool_timeout_s=0.3)
    result, _ = await ask(pipeline, "should I size down?", limits=limits)
    assert result.status == "completed"
    assert (
        "think_deeply: ToolTimeout: think_deeply did not answer within 0.3 s"
        in (result.failures[0])
    )
    assert "Could not get think_deeply: ToolTimeout" in result.answer
    assert "VIX 28.34" in result.answer  # the other tool still answered


async def test_the_iteration_limit_forces_a_final_answer(make: Make) -> None:
    router = ScriptedModel([json_answer(route("ITERATIVE", [],
                                              tools=["get_market_overview"]))])  # fmt: skip
    looping = ScriptedModel([
        tool_calls(("get_market_overview", {})),
        tool_calls(("get_market_overview", {})),
        "The VIX is 28.34 and the market is closed.",
    ])  # fmt: skip
    result, events = await ask(make({"router": router, "answer": looping}), "market?")
    assert result.status == "completed" and result.numbers.ok
    assert len(looping.requests) == 3  # SIMPLE: two turns, then the forced answer
    assert looping.requests[-1].tools == () and looping.requests[-1].last_text == FORCE_FINAL
    assert states(events) == ["PLANNING", "EXECUTING", "RESPONDING", "IDLE"]


async def test_the_tool_call_limit_stops_a_loop(make: Make) -> None:
    router = ScriptedModel([json_answer(route("ITERATIVE", [], complexity="COMPLEX",
                                              tools=["get_market_data"]))])  # fmt: skip
    looping = ScriptedModel([
        tool_calls(("get_market_data", {"symbol": "AAPL"}),
                   ("get_market_data", {"symbol": "MSFT"})),
        tool_calls(("get_market_data", {"symbol": "NVDA"})),
        "Two quotes were enough.",
    ])  # fmt: skip
    pipeline = make({"router": router, "answer": looping})
    result, _ = await ask(pipeline, "market?", limits=ChatLimits(max_tool_calls=2))
    assert [r.ok for r in result.tool_calls if r.tool == "get_market_data"] == [
        True, True, False]  # fmt: skip
    assert "limit of 2 tool calls" in result.failures[-1]
    assert "limit of 2 tool calls" in looping.requests[2].messages[-1].content  # type: ignore[union-attr]


async def test_a_made_up_price_is_flagged(make: Make) -> None:
    router = ScriptedModel([json_answer(OVERVIEW)])
    liar = ScriptedModel(["SPY is at $612.34 today, with the VIX at 28.34 (up 2.1%)."])
    pipeline = make({"router": router, "answer": liar})
    # Dated at the index's last close: SPY itself would date it to its 2025 bars.
    result, events = await ask(pipeline, "where is SPY?", as_of=CLOSE_2018)
    assert result.numbers.unverified == ["$612.34", "2.1%"]
    assert result.numbers.checked == 3 and result.numbers.traced == 1
    checked = [e for e in events if e.kind == "numbers_checked"]
    assert checked and checked[0].check.unverified == ["$612.34", "2.1%"]  # type: ignore[attr-defined]
    (entry,) = ConversationStore(pipeline.settings.store_path).audit_log(kind="answer")
    assert entry.outcome == "flagged" and "$612.34" in entry.detail


async def test_a_model_failure_ends_in_error_with_the_reason(make: Make) -> None:
    result, events = await ask(make({"classifier": ScriptedModel([])}), "how is NVDA?")
    assert result.status == "error" and "has no scripted response" in (result.error or "")
    assert states(events) == ["PLANNING", "ERROR", "IDLE"]
    store = ConversationStore(make().settings.store_path)
    assert [m.role for m in store.history(result.session_id)] == ["user"]
    assert store.audit_log(kind="error")[0].outcome == "error"


async def test_the_answer_streams_from_litellm_token_by_token(
    make: Make, openai_server: OpenAIServer
) -> None:
    text = "The S&P 500 closed at 2506.85 and the VIX at 28.34; SPY is modeled at 250.69."
    openai_server.script(reply_text(text, chunk_delay_s=0.01))
    model = LiteLLMModel("openai/test-model", api_base=openai_server.api_base, timeout_s=5)
    router = ScriptedModel([json_answer(OVERVIEW)])
    result, events = await ask(
        make({"router": router, "answer": model}), "where is SPY?", as_of=CLOSE_2018
    )
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 10 and "".join(deltas) == text == result.answer
    assert result.numbers.ok and result.numbers.checked == 4  # 500 of "S&P 500" too
    assert openai_server.requests[0].stream
    sent = openai_server.requests[0].messages[-1]["content"]
    assert '"tool": "get_market_overview"' in sent and "2506.85" in sent
    assert result.models["answer"] == "openai/test-model"


async def test_the_classifier_is_held_to_symbols_the_providers_know(make: Make) -> None:
    classifier = ScriptedModel([
        tool_calls(("lookup_symbols", {"queries": ["nvidia", "NVDX"]})),
        json_answer({"question_type": "comparison", "symbols": ["nvidia", "NVDX"]}),
        json_answer({"question_type": "stock_specific", "symbols": ["nvidia"],
                     "unresolved": [{"text": "NVDX", "close_matches": ["NVDA"]}],
                     "categories": ["technical"], "asset_class": "stock"}),
    ])  # fmt: skip
    result, events = await ask(make({"classifier": classifier}), "nvidia vs NVDX?")
    assert result.classification is not None and result.classification.symbols == ["NVDA"]
    retry = next(e for e in events if isinstance(e, OutputRetry) and e.agent == "classifier")
    assert "NVDX (close matches: NVDA" in retry.error
    lookup = classifier.requests[1].messages[-1].content
    assert '"query":"nvidia","symbol":"NVDA"' in str(lookup)


async def test_the_skill_follows_the_asset_class_and_history_is_context(make: Make) -> None:
    answer = ScriptedModel(["Bitcoin is in the data."] * 2)
    pipeline = make({"answer": answer})
    first, _ = await ask(pipeline, "how does bitcoin look?")
    await ask(pipeline, "and NVDA?", session_id=first.session_id)
    system = answer.requests[0].messages[0].content
    assert "Crypto analysis framework" in str(system)
    assert "Stock analysis framework" in str(answer.requests[1].messages[0].content)
    second_task = str(answer.requests[1].messages[1].content)
    assert "user: how does bitcoin look?\nassistant: Bitcoin is in the data." in second_task


async def test_identical_calls_run_once_whichever_way_the_assistant_calls(make: Make) -> None:
    twice = route("DIRECT", [("get_market_overview", {}), ("get_market_overview", {})])
    direct, _ = await ask(make({"router": ScriptedModel([json_answer(twice)])}), "market?")
    assert [r.tool for r in direct.tool_calls] == ["get_market_overview"]

    router = ScriptedModel([json_answer(route("ITERATIVE", [], tools=["get_market_overview"]))])
    looping = ScriptedModel([
        tool_calls(*[("get_market_overview", {})] * 5),
        "The VIX is 28.34.",
    ])  # fmt: skip
    loop, _ = await ask(make({"router": router, "answer": looping}), "market?")
    assert [r.tool for r in loop.tool_calls] == ["get_market_overview"]
    assert "repeated identical tool call(s) were dropped" in looping.requests[1].last_text
