"""What the loop does against a model that loops, rambles or sends garbage: tool calls
capped and made once, invalid arguments never replayed, refused requests told once, failed
answers quoted short, answers capped, steps ended by their wall-time budget."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from alphadesk.agent import (
    Agent,
    Completed,
    ModelFailed,
    NoValidOutput,
    RunContext,
    RunScope,
    Toolset,
    UsageLimitReached,
    UsageLimits,
    tool,
)
from alphadesk.agent.calls import MAX_ARGUMENT_CHARS
from alphadesk.llm.base import RequestRejected
from alphadesk.llm.messages import (
    AssistantMessage,
    Message,
    RequestSettings,
    ToolMessage,
    ToolSpec,
    UserMessage,
    text_of,
)
from alphadesk.llm.testing import FunctionModel, ScriptedModel, json_answer, tool_calls

AS_OF = datetime(2024, 11, 29, 21, tzinfo=UTC)


class Verdict(BaseModel):
    symbol: str
    score: float


@tool
async def get_filings(
    ctx: RunContext[dict[str, Any]], symbol: str, limit: int = 5
) -> dict[str, Any]:
    """Recent filings of a company.

    Args:
        symbol: Ticker.
        limit: How many.
    """
    ctx.deps.setdefault("calls", []).append((symbol, limit))
    return {"symbol": symbol, "filings": [f"10-Q #{i}" for i in range(limit)]}


def agent(**fields: Any) -> Agent[dict[str, Any], Verdict]:
    base: dict[str, Any] = {
        "name": "analyst",
        "instructions": "Analyse.",
        "output_type": Verdict,
        "toolset": Toolset.of("t", [get_filings]),
    }
    return Agent(**(base | fields))


async def run(model: Any, deps: dict[str, Any] | None = None, **fields: Any) -> Any:
    limits = fields.pop("limits", None) or UsageLimits()
    return await agent(**fields).run(
        model,
        "AAPL as of 2024-11-29",
        deps=deps if deps is not None else {},
        scope=RunScope(as_of=AS_OF, limits=limits),
    )


def tool_call_arguments(messages: Sequence[Message]) -> list[str]:
    return [
        call.arguments for m in messages if isinstance(m, AssistantMessage) for call in m.tool_calls
    ]


# -- 1. identical calls made once, calls per turn capped ---------------------------------


async def test_identical_calls_in_one_turn_run_once_and_the_history_keeps_one() -> None:
    same = [("get_filings", {"symbol": "AAPL", "limit": 3})] * 124
    model = ScriptedModel([tool_calls(*same), json_answer({"symbol": "AAPL", "score": 0.5})])
    deps: dict[str, Any] = {}
    result = await run(model, deps)
    assert isinstance(result.outcome, Completed)
    assert deps["calls"] == [("AAPL", 3)]
    assert result.tool_calls == 1
    second = model.requests[1].messages
    assert len(tool_call_arguments(second)) == 1
    assert sum(isinstance(m, ToolMessage) for m in second) == 1
    assert "123 repeated identical tool call(s) were dropped" in model.requests[1].last_text


async def test_argument_order_and_spacing_do_not_make_a_call_new() -> None:
    model = ScriptedModel(
        [
            tool_calls(
                ("get_filings", '{"symbol": "AAPL", "limit": 2}'),
                ("get_filings", '{"limit":2,"symbol":"AAPL"}'),
            ),
            json_answer({"symbol": "AAPL", "score": 0.5}),
        ]
    )
    deps: dict[str, Any] = {}
    await run(model, deps)
    assert deps["calls"] == [("AAPL", 2)]


async def test_a_call_repeated_in_a_later_turn_points_at_the_earlier_result() -> None:
    call = ("get_filings", {"symbol": "AAPL"})
    model = ScriptedModel(
        [tool_calls(call), tool_calls(call), json_answer({"symbol": "AAPL", "score": 0.5})]
    )
    deps: dict[str, Any] = {}
    result = await run(model, deps)
    assert isinstance(result.outcome, Completed)
    assert deps["calls"] == [("AAPL", 5)]
    replies = [m for m in model.requests[2].messages if isinstance(m, ToolMessage)]
    assert "filings" in text_of(replies[0].content)
    assert text_of(replies[1].content).startswith("Already called with the same arguments")


async def test_calls_beyond_the_per_turn_cap_are_dropped_and_the_model_told() -> None:
    calls = [("get_filings", {"symbol": f"S{i}"}) for i in range(12)]
    model = ScriptedModel([tool_calls(*calls), json_answer({"symbol": "AAPL", "score": 0.5})])
    deps: dict[str, Any] = {}
    await run(model, deps, max_tool_calls=3)
    assert [s for s, _ in deps["calls"]] == ["S0", "S1", "S2"]
    history = model.requests[1].messages
    assert len(tool_call_arguments(history)) == 3
    assert "9 call(s) beyond the limit of 3 per turn were not run" in model.requests[1].last_text


# -- 2. invalid arguments never go back verbatim ----------------------------------------


async def test_invalid_arguments_are_replaced_in_the_history_and_explained() -> None:
    runaway = '{"symbol": "AAPL", "note": "' + "x" * 12_000  # unterminated, 12 KB
    model = ScriptedModel(
        [
            tool_calls(("get_filings", runaway), ("get_filings", '{"symbol": ')),
            json_answer({"symbol": "AAPL", "score": 0.5}),
        ]
    )
    deps: dict[str, Any] = {}
    result = await run(model, deps)
    assert isinstance(result.outcome, Completed)
    assert "calls" not in deps  # neither was run
    sent = tool_call_arguments(model.requests[1].messages)
    assert sent == ["{}", "{}"]
    for arguments in sent:
        assert isinstance(json.loads(arguments), dict)
    replies = [text_of(m.content) for m in model.requests[1].messages if isinstance(m, ToolMessage)]
    assert f"at most {MAX_ARGUMENT_CHARS:,}" in replies[0]
    assert "not valid JSON" in replies[1]
    assert all(len(r) < 400 for r in replies)


async def test_endless_invalid_calls_end_the_run_typed() -> None:
    model = ScriptedModel([tool_calls(("get_filings", "{oops")) for _ in range(6)])
    result = await run(model)
    assert result.outcome.kind == "tool_retries"
    assert len(model.requests) <= 4


# -- 3. a refused request goes back to the model once, then fails typed --------------------


def refusing(times: int) -> FunctionModel:
    state = {"refused": 0}

    def respond(
        messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> AssistantMessage:
        if state["refused"] < times:
            state["refused"] += 1
            raise RequestRejected("the context is too long", kind="context_overflow")
        return json_answer({"symbol": "AAPL", "score": 0.5})

    return FunctionModel(respond)


async def test_a_refused_request_is_explained_to_the_model_once() -> None:
    model = refusing(1)
    result = await run(model)
    assert isinstance(result.outcome, Completed)
    assert len(model.requests) == 2
    note = model.requests[1].last_text
    assert "refused the last request: the context is too long" in note


async def test_a_request_refused_twice_fails_typed_without_a_third_try() -> None:
    model = refusing(5)
    result = await run(model)
    assert isinstance(result.outcome, ModelFailed)
    assert result.outcome.error_type == "RequestRejected"
    assert len(model.requests) == 2


# -- 4. failed answers quoted short, retry phrased by mode --------------------------------


async def test_a_failed_answer_is_quoted_short_in_the_retry() -> None:
    ramble = "Let me think about this. " * 400  # ~10k characters, no JSON
    model = ScriptedModel([ramble, ramble, json_answer({"symbol": "AAPL", "score": 0.5})])
    result = await run(model)
    assert isinstance(result.outcome, Completed)
    sizes = [sum(len(text_of(m.content)) for m in r.messages) for r in model.requests]
    assert sizes[1] - sizes[0] < 1_000 and sizes[2] - sizes[1] < 1_000
    quoted = [m for m in model.requests[1].messages if isinstance(m, AssistantMessage)]
    assert text_of(quoted[0].content).endswith("more characters cut]")


async def test_the_retry_speaks_of_a_json_block_only_without_native_structured_output() -> None:
    native = ScriptedModel(
        ["no json here", json_answer({"symbol": "AAPL", "score": 0.5}, fenced=False)],
        capabilities={"tools", "json_schema"},
    )
    await run(native)
    assert "```json" not in native.requests[1].last_text
    assert "response format" in native.requests[1].last_text
    assert native.requests[0].settings.output_schema is not None

    fenced = ScriptedModel(["no json here", json_answer({"symbol": "AAPL", "score": 0.5})])
    await run(fenced)
    assert "```json block" in fenced.requests[1].last_text


async def test_retries_exhausted_keep_a_typed_outcome() -> None:
    model = ScriptedModel(["x" * 5_000] * 3)
    result = await run(model)
    assert isinstance(result.outcome, NoValidOutput)


# -- 5/6. per-agent wall time and max_tokens ------------------------------------------------


async def test_an_agent_past_its_wall_time_ends_typed() -> None:
    async def slow(
        messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> str:
        await asyncio.sleep(5)
        return "late"

    result = await run(FunctionModel(slow), limits=UsageLimits(agent_wall_time_s=0.2))
    assert isinstance(result.outcome, UsageLimitReached)
    assert result.outcome.limit.limit == "agent_wall_time_s"
    assert "agent_wall_time_s=0.2" in result.outcome.reason


async def test_each_agent_asks_for_its_own_max_tokens() -> None:
    model = ScriptedModel([json_answer({"symbol": "AAPL", "score": 0.5})])
    await run(model, max_tokens=700)
    assert model.requests[0].settings.max_tokens == 700
    default = ScriptedModel([json_answer({"symbol": "AAPL", "score": 0.5})])
    await run(default)
    assert default.requests[0].settings.max_tokens == 1024


async def test_a_note_is_a_user_message_after_the_tool_replies() -> None:
    same = [("get_filings", {"symbol": "AAPL"})] * 3
    model = ScriptedModel([tool_calls(*same), json_answer({"symbol": "AAPL", "score": 0.5})])
    await run(model)
    history = model.requests[1].messages
    assert isinstance(history[-1], UserMessage)
    assert isinstance(history[-2], ToolMessage)
