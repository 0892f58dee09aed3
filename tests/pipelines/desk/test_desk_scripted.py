"""The desk's LLM path with scripted models: a good run, a malformed proposal retried, a
model that keeps failing ends in a typed failure, invented facts sent back."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.testing import FunctionModel, ScriptedModel, json_answer, tool_calls
from alphadesk.pipelines.desk.report import render_report
from tests.pipelines.desk.answers import (
    absent,
    filed,
    indicators_of,
    market_answer,
    position,
    turn,
    view,
)
from tests.pipelines.desk.conftest import decide

SYMBOL, DAY = "NVDA", "2024-11-29"


@pytest.fixture
async def indicators(market: MarketData) -> dict[str, Any]:
    return await indicators_of(market, SYMBOL, DAY)


def scripted(*script: Any) -> ScriptedModel:
    return ScriptedModel(list(script), name="scripted/llm")


def desk_models(ind: dict[str, Any], trader: ScriptedModel | None = None) -> dict[str, Any]:
    price = ind["current_price"]
    return {
        "market": scripted(
            tool_calls(("get_technical_indicators", {"symbol": SYMBOL})),
            json_answer(market_answer(ind)),
        ),
        "sentiment": scripted(json_answer(absent("social_available"))),
        "news": scripted(json_answer(absent("news_available"))),
        "fundamentals": scripted(json_answer(filed())),
        "bull": scripted(
            json_answer(turn(price, 0.7)), json_answer(turn(price, 0.7, "The bear sees no risk."))
        ),
        "bear": scripted(
            json_answer(turn(price, 0.4)), json_answer(turn(price, 0.4, "The bull overpays."))
        ),
        "manager": scripted(
            json_answer(
                {
                    "recommendation": "BUY",
                    "confidence": 0.6,
                    "winning_side": "bull",
                    "rationale": "The bull case holds.",
                }
            )
        ),
        "trader": trader or scripted(json_answer(position(price))),
        "risky": scripted(
            json_answer(view("adjust", 0.3)), json_answer(view("adjust", 0.3, "Too timid."))
        ),
        "safe": scripted(
            json_answer(view("adjust", 0.1)), json_answer(view("adjust", 0.1, "Too bold."))
        ),
        "neutral": scripted(
            json_answer(view("support", 0.2)), json_answer(view("support", 0.2, "Both extremes."))
        ),
        "judge": scripted(json_answer(position(price) | {"risk_notes": ["stop under support"]})),
    }


async def test_a_good_run(
    settings: Settings, market: MarketData, indicators: dict[str, Any]
) -> None:
    models = desk_models(indicators)
    events: list[Any] = []
    result = await decide(settings, market, SYMBOL, DAY, models=models, events=events)
    assert result.decision == "BUY", result.reason
    assert result.final is not None and result.final.entry == indicators["current_price"]
    assert result.final.risk_notes == ["stop under support"]
    assert result.facts["market.rsi_14"] == indicators["rsi_14"]
    assert {a.model for a in result.agents} == {"scripted/llm"}
    for model in models.values():
        model.assert_consumed()
    # Each stage saw what it needs: the bull the analysts and the fact sheet, the trader
    # the plan, the judge the risk discussion.
    bull_task = models["bull"].requests[0].messages[1].content
    assert "Uptrend above the 200-day average." in bull_task and '"market.rsi_14"' in bull_task
    assert "The bull case holds." in models["trader"].requests[0].messages[1].content
    judge_task = models["judge"].requests[0].messages[1].content
    assert all(f'"speaker": "{p}"' in judge_task for p in ("risky", "safe", "neutral"))
    spoken = {(e.debate, e.agent) for e in events if e.kind == "debate_message"}
    assert spoken == {
        ("investment", "bull"),
        ("investment", "bear"),
        ("risk", "risky"),
        ("risk", "safe"),
        ("risk", "neutral"),
    }


async def test_a_malformed_proposal_is_retried(
    settings: Settings, market: MarketData, indicators: dict[str, Any]
) -> None:
    price = indicators["current_price"]
    trader = scripted(
        json_answer(position(price, stop=price + 5)),  # a stop above a BUY's entry
        json_answer(position(price, target=price * 3)),  # a target nowhere near the data
        json_answer(position(price)),
    )
    result = await decide(settings, market, SYMBOL, DAY, models=desk_models(indicators, trader))
    assert result.decision == "BUY"
    assert "must lie below the entry" in trader.requests[1].last_text
    assert "lies outside the traded range" in trader.requests[2].last_text
    assert result.proposal is not None and result.proposal.target == round(price * 1.05, 2)
    trader.assert_consumed()


async def test_a_model_that_keeps_failing_ends_in_a_typed_failure(
    settings: Settings, market: MarketData, indicators: dict[str, Any]
) -> None:
    price = indicators["current_price"]
    bad = json_answer(position(price, stop=price + 5))
    trader = scripted(bad, bad, bad)
    models = desk_models(indicators, trader)
    events: list[Any] = []
    result = await decide(settings, market, SYMBOL, DAY, models=models, events=events)
    assert result.decision == "failed" and result.stage == "trader"
    assert result.reason is not None and result.reason.startswith("trader:")
    assert result.final is None and result.proposal is None and result.risk_debate == []
    assert result.plan is not None  # what was decided before the failure is kept
    started = {e.agent for e in events if e.kind == "step_started"}
    assert not started & {"risky", "safe", "neutral", "judge"}
    assert models["judge"].requests == []
    report = render_report(result)
    assert "# NVDA: FAILED" in report and "No decision was made." in report
    assert "HOLD" not in report.split("## Analysts")[0]  # no silent hold


async def test_invented_numbers_and_news_go_back_to_the_analyst(
    settings: Settings, market: MarketData, indicators: dict[str, Any]
) -> None:
    rsi = indicators["rsi_14"]
    wrong = market_answer(
        indicators, figures={"current_price": indicators["current_price"], "rsi_14": rsi + 9}
    )
    wrong["evidence"] = []
    invented = {
        "signal": "bullish",
        "score": 0.5,
        "confidence": 0.8,
        "summary": "Great news.",
        "news_available": True,
        "figures": {"headline_count": 12},
    }
    models = desk_models(indicators)
    models["market"] = scripted(json_answer(wrong), json_answer(market_answer(indicators)))
    models["news"] = scripted(json_answer(invented), json_answer(absent("news_available")))
    bull = scripted(
        json_answer(turn(indicators["current_price"] * 1.2, 0.7)),  # a price nobody measured
        json_answer(turn(indicators["current_price"], 0.7)),
        json_answer(turn(indicators["current_price"], 0.7, "The bear overlooks the trend.")),
    )
    models["bull"] = bull
    result = await decide(settings, market, SYMBOL, DAY, models=models)
    assert result.decision == "BUY"
    assert f"rsi_14 is {rsi:g}, not {rsi + 9:g}" in models["market"].requests[1].last_text
    news_feedback = models["news"].requests[1].last_text
    assert "there is no news data" in news_feedback and "news_available is false" in news_feedback
    assert f"market.current_price is {indicators['current_price']:g}" in bull.requests[1].last_text
    assert result.news is not None and result.news.figures == {}


async def test_a_step_past_its_wall_time_stops_the_desk_naming_it(
    settings: Settings, market: MarketData, indicators: dict[str, Any]
) -> None:
    async def stalls(*_: Any) -> str:
        await asyncio.sleep(300)
        return "never"

    models = desk_models(indicators)
    models["market"] = FunctionModel(stalls, name="stalled/llm")
    tight = settings.model_copy(
        update={"limits": settings.limits.model_copy(update={"agent_wall_time_s": 0.5})}
    )
    started = time.monotonic()
    result = await decide(tight, market, SYMBOL, DAY, models=models)
    assert time.monotonic() - started < 150  # margin: half the 300 s stall
    assert result.decision == "failed" and result.stage == "market"
    assert result.reason is not None and "agent_wall_time_s=0.5" in result.reason
    assert models["bull"].requests == [] and models["judge"].requests == []
