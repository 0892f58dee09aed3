"""Every path through the agent loop, driven by scripted models."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel

from alphadesk.agent import (
    Agent,
    Completed,
    MaxTurnsReached,
    ModelFailed,
    ModelRetry,
    NoValidOutput,
    RunContext,
    RunNotCompleted,
    RunScope,
    ToolCrashed,
    ToolRetriesExhausted,
    ToolReturn,
    Toolset,
    UsageLedger,
    UsageLimitReached,
    UsageLimits,
    tool,
)
from alphadesk.agent import events as ev
from alphadesk.llm.base import AuthenticationFailed
from alphadesk.llm.messages import ImagePart, ToolMessage, Usage, UserMessage, text_of
from alphadesk.llm.testing import FunctionModel, ScriptedModel, json_answer, tool_calls

AS_OF = datetime(2021, 6, 30, 20, tzinfo=UTC)
PNG = b"\x89PNG\r\n\x1a\n fake image bytes"


class Verdict(BaseModel):
    symbol: str
    score: float


@tool
async def slow_square(ctx: RunContext[dict[str, Any]], x: int) -> dict[str, int]:
    """Square a number slowly.

    Args:
        x: The number.
    """
    ctx.deps.setdefault("seen", []).append((ctx.tool_name, ctx.as_of, x))
    ctx.deps.setdefault("log", []).append(("start", x))
    await asyncio.sleep(0.05)
    ctx.deps["log"].append(("end", x))
    return {"x": x, "square": x * x}


@tool(retries=1)
async def picky(x: int) -> str:
    """Accept only even numbers.

    Args:
        x: The number.
    """
    if x % 2:
        raise ModelRetry("x must be even; try x + 1")
    return "ok"


@tool
async def broken(x: int) -> str:
    """Always fails.

    Args:
        x: Anything.
    """
    raise ZeroDivisionError("boom")


@tool(report_errors=True)
async def flaky(x: int) -> str:
    """Fails, but tells the model.

    Args:
        x: Anything.
    """
    raise ConnectionError("upstream timed out")


@tool
async def chart(symbol: str) -> ToolReturn:
    """Draw a chart.

    Args:
        symbol: Ticker.
    """
    return ToolReturn({"symbol": symbol, "bars": 120}, images=[ImagePart(data=PNG)])


TOOLS = Toolset.of("test", [slow_square, picky, broken, flaky, chart])


def make_agent(**overrides: Any) -> Agent[dict[str, Any], Verdict]:
    fields: dict[str, Any] = dict(
        name="tester", instructions="Be precise.", output_type=Verdict, toolset=TOOLS, max_turns=4
    )
    return Agent(**(fields | overrides))


async def run(model: Any, *, agent: Any = None, deps: Any = None, **scope: Any) -> Any:
    """Run ``agent`` (the test agent by default) on MSFT; ``scope`` overrides the run's
    defaults (ledger, limits, on_event)."""
    agent = agent or make_agent()
    deps = {} if deps is None else deps
    return await agent.run(model, "Analyse MSFT", deps=deps, scope=RunScope(as_of=AS_OF, **scope))


async def test_concurrent_tool_calls_then_valid_output() -> None:
    deps: dict[str, Any] = {}
    model = ScriptedModel(
        [
            tool_calls(
                ("slow_square", {"x": 2}), ("slow_square", {"x": 3}), ("slow_square", {"x": 4})
            ),
            json_answer({"symbol": "MSFT", "score": 0.7}),
        ]
    )
    result = await run(model, deps=deps)
    assert result.output == Verdict(symbol="MSFT", score=0.7)
    # Concurrent: every call started before any finished.
    assert [event for event, _ in deps["log"]] == ["start"] * 3 + ["end"] * 3
    assert [x for _, _, x in deps["seen"]] and all(t == "slow_square" for t, _, _ in deps["seen"])
    assert all(seen_as_of == AS_OF for _, seen_as_of, _ in deps["seen"])
    replies = [m for m in model.requests[1].messages if isinstance(m, ToolMessage)]
    assert [r.content for r in replies] == [
        '{"x": 2, "square": 4}',
        '{"x": 3, "square": 9}',
        '{"x": 4, "square": 16}',
    ]
    assert result.tool_calls == 3
    assert result.usage.requests == 2
    model.assert_consumed()


async def test_invalid_arguments_go_back_as_a_retry() -> None:
    model = ScriptedModel(
        [
            tool_calls(("slow_square", {"x": "not a number"})),
            tool_calls(("slow_square", '{"x": 5')),
            tool_calls(("slow_square", {"x": 5})),
            json_answer({"symbol": "MSFT", "score": 1}),
        ]
    )
    result = await run(model)
    assert result.ok
    first_error = text_of(model.requests[1].messages[-1].content)
    assert "Invalid arguments for slow_square" in first_error and "- x:" in first_error
    assert "not valid JSON" in text_of(model.requests[2].messages[-1].content)


async def test_model_retry_within_budget_then_exhausted() -> None:
    ok = await run(
        ScriptedModel(
            [
                tool_calls(("picky", {"x": 3})),
                tool_calls(("picky", {"x": 4})),
                json_answer({"symbol": "MSFT", "score": 0}),
            ]
        )
    )
    assert ok.ok
    assert "x must be even" in text_of(ok.messages[3].content)

    exhausted = await run(
        ScriptedModel(
            [
                tool_calls(("picky", {"x": 3})),
                tool_calls(("picky", {"x": 5})),
            ]
        )
    )
    assert isinstance(exhausted.outcome, ToolRetriesExhausted)
    assert exhausted.outcome.tool == "picky"
    with pytest.raises(RunNotCompleted, match="too many invalid calls"):
        _ = exhausted.output


async def test_unknown_tool_is_a_retry_naming_the_real_tools() -> None:
    model = ScriptedModel(
        [
            tool_calls(("get_weather", {"city": "Paris"})),
            json_answer({"symbol": "MSFT", "score": 0.1}),
        ]
    )
    result = await run(model)
    assert result.ok
    reply = text_of(model.requests[1].messages[-1].content)
    assert "Unknown tool 'get_weather'" in reply and "slow_square" in reply


async def test_unexpected_exception_fails_the_run() -> None:
    model = ScriptedModel([tool_calls(("broken", {"x": 1}))])
    result = await run(model)
    assert result.outcome == ToolCrashed("broken", "ZeroDivisionError: boom")
    model.assert_consumed()


async def test_opted_in_exception_is_reported_to_the_model() -> None:
    model = ScriptedModel(
        [
            tool_calls(("flaky", {"x": 1})),
            json_answer({"symbol": "MSFT", "score": 0.2}),
        ]
    )
    result = await run(model)
    assert result.ok
    assert "ConnectionError: upstream timed out" in text_of(model.requests[1].messages[-1].content)


async def test_image_results_reach_the_model_as_image_parts() -> None:
    model = ScriptedModel(
        [tool_calls(("chart", {"symbol": "MSFT"})), json_answer({"symbol": "MSFT", "score": 1})]
    )
    events: list[Any] = []
    result = await run(model, on_event=events.append)
    assert result.ok
    reply = model.requests[1].messages[-1]
    assert isinstance(reply, ToolMessage) and isinstance(reply.content, list)
    assert reply.content[1] == ImagePart(data=PNG)
    assert '"bars": 120' in text_of(reply.content)
    finished = [e for e in events if isinstance(e, ev.ToolFinished)]
    assert finished[0].images == 1


async def test_max_turns_asks_once_for_a_final_answer() -> None:
    looping = [tool_calls(("slow_square", {"x": i})) for i in range(2)]
    model = ScriptedModel([*looping, json_answer({"symbol": "MSFT", "score": 0.3})])
    result = await run(model, agent=make_agent(max_turns=2))
    assert isinstance(result.outcome, Completed) and result.outcome.forced_final
    final_request = model.requests[-1]
    assert final_request.tools == ()  # no tools offered any more
    assert "turn limit" in final_request.last_text

    model = ScriptedModel([*looping, tool_calls(("slow_square", {"x": 9}))])
    result = await run(model, agent=make_agent(max_turns=2))
    assert isinstance(result.outcome, MaxTurnsReached)
    assert result.outcome.max_turns == 2
    model.assert_consumed()


async def test_output_retry_then_success_and_then_failure() -> None:
    model = ScriptedModel(
        [
            "Here you go: {not json",
            json_answer({"symbol": "MSFT"}),  # missing score
            json_answer({"symbol": "MSFT", "score": 0.9}),
        ]
    )
    events: list[Any] = []
    result = await run(model, on_event=events.append)
    assert result.output.score == 0.9
    assert "holds no JSON object" in model.requests[1].last_text
    assert "score: Field required" in model.requests[2].last_text
    assert [e.attempt for e in events if isinstance(e, ev.OutputRetry)] == [1, 2]

    model = ScriptedModel(["nope", "still nope", "never"])
    result = await run(model)
    assert isinstance(result.outcome, NoValidOutput)
    assert result.outcome.raw_text == "never"
    model.assert_consumed()


async def test_output_validators_can_demand_a_retry() -> None:
    def score_in_range(ctx: RunContext[Any], out: Verdict) -> Verdict:
        if not 0 <= out.score <= 1:
            raise ModelRetry(f"score {out.score} must be between 0 and 1")
        return out

    agent = make_agent(output_validators=(score_in_range,))
    model = ScriptedModel(
        [json_answer({"symbol": "MSFT", "score": 7}), json_answer({"symbol": "MSFT", "score": 0.5})]
    )
    result = await run(model, agent=agent)
    assert result.output.score == 0.5
    assert "score 7.0 must be between 0 and 1" in model.requests[1].last_text


async def test_request_limit_stops_before_the_extra_call() -> None:
    model = ScriptedModel([tool_calls(("slow_square", {"x": i})) for i in range(5)])
    result = await run(model, limits=UsageLimits(requests=2))
    assert isinstance(result.outcome, UsageLimitReached)
    assert result.outcome.limit.limit == "requests"
    assert len(model.requests) == 2


async def test_token_and_cost_limits() -> None:
    costly = Usage(requests=1, input_tokens=600, output_tokens=100, cost_usd=0.4)
    script = [tool_calls(("slow_square", {"x": i})) for i in range(5)]
    result = await run(ScriptedModel(script, usage=costly), limits=UsageLimits(total_tokens=1000))
    assert result.outcome.limit.limit == "total_tokens"
    result = await run(ScriptedModel(script, usage=costly), limits=UsageLimits(cost_usd=1.0))
    assert result.outcome.limit.limit == "cost_usd"
    assert result.usage.cost_usd == pytest.approx(1.2)


async def test_wall_time_limit_interrupts_a_slow_call() -> None:
    model = ScriptedModel(["late"], latency_s=120)
    started = time.perf_counter()
    result = await run(model, limits=UsageLimits(wall_time_s=0.2))
    assert isinstance(result.outcome, UsageLimitReached)
    assert result.outcome.limit.limit == "wall_time_s"
    # Margin: the 0.2 s limit against a 120 s call; a busy machine is late by seconds, not 60.
    assert time.perf_counter() - started < 60


async def test_shared_ledger_applies_budget_across_agents() -> None:
    ledger = UsageLedger()
    await run(ScriptedModel([json_answer({"symbol": "A", "score": 0})]), ledger=ledger)
    second = await run(
        ScriptedModel([json_answer({"symbol": "B", "score": 0})]),
        ledger=ledger,
        limits=UsageLimits(requests=1),
    )
    assert isinstance(second.outcome, UsageLimitReached)
    assert [e.agent for e in ledger.entries] == ["tester"]


async def test_model_failure_is_a_typed_outcome() -> None:
    def refuse(*_: Any) -> str:
        raise AuthenticationFailed("set OPENAI_API_KEY", model="openai/x")

    result = await run(FunctionModel(refuse))
    assert result.outcome == ModelFailed("AuthenticationFailed", "set OPENAI_API_KEY")


async def test_events_stream_in_order() -> None:
    model = ScriptedModel(
        [tool_calls(("slow_square", {"x": 2})), json_answer({"symbol": "MSFT", "score": 1})]
    )
    agent_run = make_agent().iter(model, "go", deps={}, scope=RunScope(as_of=AS_OF, run_id="r1"))
    kinds = [event.kind async for event in agent_run]
    assert kinds == [
        "run_started",
        "model_request",
        "model_response",
        "usage",
        "tool_started",
        "tool_finished",
        "model_request",
        "model_response",
        "usage",
        "final_output",
        "run_finished",
    ]
    result = await agent_run.result()  # available after iteration, not run again
    assert result.ok and result.run_id == "r1" and len(model.requests) == 2


async def test_native_json_schema_when_supported_and_fenced_instructions_otherwise() -> None:
    native = ScriptedModel(
        ['{"symbol": "MSFT", "score": 0.4}'], capabilities={"tools", "json_schema"}
    )
    assert (await run(native)).ok
    sent = native.requests[0].settings.output_schema
    assert sent is not None and sent["required"] == ["symbol", "score"]
    assert sent["properties"]["score"] == {"type": "number"}  # no title repeating the name
    assert "```json" not in native.requests[0].messages[0].content

    plain = ScriptedModel([json_answer({"symbol": "MSFT", "score": 0.4})], capabilities={"tools"})
    assert (await run(plain)).ok
    assert plain.requests[0].settings.output_schema is None
    assert '"score"' in plain.requests[0].messages[0].content


async def test_text_output_and_image_prompt() -> None:
    agent: Agent[None, str] = Agent(name="writer", instructions="Write.", output_type=str)
    model = ScriptedModel(["A short note."])
    prompt = [ImagePart(data=PNG)]
    result = await agent.run(model, prompt, deps=None, scope=RunScope(as_of=AS_OF))  # type: ignore[arg-type]
    assert result.output == "A short note."
    assert isinstance(model.requests[0].messages[1], UserMessage)


def test_naive_as_of_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        make_agent().iter(
            ScriptedModel([]), "x", deps={}, scope=RunScope(as_of=datetime(2021, 1, 1))
        )


async def test_an_agent_run_from_a_tool_shares_the_runs_id_ledger_and_events() -> None:
    inner = Agent(name="inner", instructions="Say ok.", output_type=str)

    @tool
    async def ask_inner(ctx: RunContext[Any]) -> str:
        """Ask the inner agent."""
        result = await inner.run(ScriptedModel(["ok"]), "go", deps=None, scope=ctx.subrun())
        return result.output

    outer = Agent(
        name="outer", instructions="Ask.", output_type=str, toolset=Toolset.of("t", [ask_inner])
    )
    ledger, events = UsageLedger(), []
    scope = RunScope(as_of=AS_OF, run_id="r9", ledger=ledger, on_event=events.append)
    result = await outer.run(
        ScriptedModel([tool_calls(("ask_inner", {})), "done"]), "go", deps=None, scope=scope
    )
    assert result.ok and result.output == "done"
    assert [e.agent for e in ledger.entries] == ["outer", "inner", "outer"]
    inner_events = [e for e in events if e.agent == "inner"]
    assert inner_events and {e.run_id for e in inner_events} == {"r9"}
