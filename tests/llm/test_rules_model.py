"""A deterministic policy runs through the same loop as an LLM."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from pydantic import BaseModel

from alphadesk.agent import Agent, NoValidOutput, RunScope, Toolset, tool
from alphadesk.llm.rules import RulesModel, RulesPolicy, Transcript
from alphadesk.llm.testing import add_rules_latency

AS_OF = datetime(2021, 6, 30, tzinfo=UTC)


class Total(BaseModel):
    total: int
    parts: list[int]


@tool
async def count(word: str) -> dict[str, int]:
    """Count letters.

    Args:
        word: The word.
    """
    return {"letters": len(word)}


@tool
async def double(n: int) -> dict[str, int]:
    """Double a number.

    Args:
        n: The number.
    """
    return {"value": 2 * n}


def first_turn(t: Transcript) -> list[tuple[str, dict[str, object]]]:
    return [("count", {"word": w}) for w in t.prompt.split()]


def second_turn(t: Transcript) -> list[tuple[str, dict[str, object]]]:
    return [("double", {"n": sum(r["letters"] for r in t.results["count"])})]


def decide(t: Transcript) -> Total:
    parts = [r["letters"] for r in t.results["count"]]
    return Total(total=t.last("double")["value"], parts=parts)


POLICY = RulesPolicy(plan=[first_turn, second_turn], decide=decide)
AGENT: Agent[None, Total] = Agent(
    name="counter",
    instructions="Count.",
    output_type=Total,
    toolset=Toolset.of("t", [count, double]),
)


async def test_policy_plans_tools_then_decides_from_their_results() -> None:
    events: list[str] = []
    result = await AGENT.run(
        RulesModel(POLICY),
        "alpha desk",
        deps=None,
        scope=RunScope(as_of=AS_OF, on_event=lambda e: events.append(e.kind)),
    )
    assert result.output == Total(total=18, parts=[5, 4])
    assert result.model == "rules"
    assert result.tool_calls == 3
    assert result.usage.requests == 3 and result.usage.cost_usd == 0
    assert events.count("tool_finished") == 3


async def test_a_policy_that_cannot_satisfy_the_validator_fails_visibly() -> None:
    bad = RulesPolicy(plan=[], decide=lambda t: {"total": "many"})
    result = await AGENT.run(RulesModel(bad), "x", deps=None, scope=RunScope(as_of=AS_OF))
    assert isinstance(result.outcome, NoValidOutput)
    assert "total" in result.outcome.error


async def test_turn_limit_makes_the_policy_decide_early() -> None:
    short = Agent(
        name="counter",
        instructions="Count.",
        output_type=Total,
        toolset=AGENT.toolset,
        max_turns=1,
    )
    result = await short.run(RulesModel(POLICY), "ab", deps=None, scope=RunScope(as_of=AS_OF))
    # After one turn no tools are offered: the policy must decide, and it needs `double`.
    assert not result.ok
    assert result.outcome.kind == "model_failed"
    assert "needs a result of 'double'" in result.outcome.reason


async def test_added_latency_delays_every_call_the_same_answers_and_is_taken_away() -> None:
    answer = RulesModel.request
    restore = add_rules_latency(0.2)
    try:
        started = time.monotonic()
        slowed = await AGENT.run(
            RulesModel(POLICY), "alpha desk", deps=None, scope=RunScope(as_of=AS_OF)
        )
        waited = time.monotonic() - started
    finally:
        restore()
    assert waited >= 3 * 0.2  # three model calls, each held back
    assert slowed.output == Total(total=18, parts=[5, 4])
    assert RulesModel.request is answer  # no call is held back any more
