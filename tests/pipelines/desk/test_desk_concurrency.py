"""Critical path only: speakers that need nothing of each other speak at the same time,
and a stage starts only when what it needs is there. Checked by overlap, not a stopwatch."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import pytest

from alphadesk.agents.desk import default_agents
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec
from alphadesk.llm.rules import RulesModel
from alphadesk.llm.testing import ScriptedModel
from alphadesk.llm.wrapper import ModelWrapper
from tests.pipelines.desk.conftest import decide

Span = tuple[float, float]


class Timed(ModelWrapper):
    """A rules model whose calls take a little while, recording when each ran."""

    def __init__(self, inner: RulesModel, spans: list[Span]) -> None:
        super().__init__(inner)
        self.spans = spans

    @property
    def name(self) -> str:
        return "timed-rules"

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        started = time.monotonic()
        await asyncio.sleep(0.15)
        response = await self.inner.request(messages, tools, settings)
        self.spans.append((started, time.monotonic()))
        return response


def overlap(*spans: Span) -> bool:
    return max(s for s, _ in spans) < min(e for _, e in spans)


@pytest.mark.slow
async def test_speakers_of_a_stage_overlap_and_stages_follow_each_other(
    settings: Settings, market: MarketData
) -> None:
    spans: dict[str, list[Span]] = {}
    models: dict[str, Any] = {}
    for spec in default_agents().all:
        spans[spec.name] = []
        models[spec.name] = Timed(RulesModel(spec.policy), spans[spec.name])
    result = await decide(settings, market, "AAPL", "2012-03-30", models=models, rounds=2)
    assert result.decision == "BUY"
    first = {name: calls[0] for name, calls in spans.items()}
    assert overlap(*(first[a] for a in ("market", "sentiment", "news", "fundamentals")))
    bull, bear = spans["bull"], spans["bear"]
    assert len(bull) == len(bear) == 4  # two exchanges of an argument and a rebuttal
    for turn in range(4):  # arguments at once, then rebuttals at once
        assert overlap(bull[turn], bear[turn])
    risk = [spans[p] for p in ("risky", "safe", "neutral")]
    assert overlap(*(calls[0] for calls in risk)) and overlap(*(calls[1] for calls in risk))
    # Each step waits for the one it needs, and only for it.
    analysts_done = max(
        calls[-1][1]
        for n, calls in spans.items()
        if n in ("market", "sentiment", "news", "fundamentals")
    )
    assert analysts_done <= min(bull[0][0], bear[0][0])
    for turn in range(3):  # a rebuttal answers both arguments, an argument both rebuttals
        assert max(bull[turn][1], bear[turn][1]) <= min(bull[turn + 1][0], bear[turn + 1][0])
    assert max(bull[3][1], bear[3][1]) <= first["manager"][0]
    assert first["manager"][1] <= first["trader"][0]
    assert first["trader"][1] <= min(calls[0][0] for calls in risk)
    assert max(calls[0][1] for calls in risk) <= min(calls[1][0] for calls in risk)
    assert max(calls[1][1] for calls in risk) <= first["judge"][0]


async def test_a_failed_analyst_stops_the_desk_but_not_the_other_analysts(
    settings: Settings, market: MarketData
) -> None:
    events: list[Any] = []
    broken = ScriptedModel([], name="scripted/llm")  # answers nothing: ScriptExhausted
    result = await decide(
        settings, market, "AAPL", "2012-03-30", models={"news": broken}, events=events
    )
    assert result.decision == "failed" and result.stage == "news"
    assert result.reason is not None and "ScriptExhausted" in result.reason
    assert result.market is not None and result.sentiment is not None  # they finished
    assert result.debate == [] and result.final is None
    started = [e.agent for e in events if e.kind == "step_started"]
    assert sorted(started) == ["fundamentals", "market", "news", "sentiment"]
