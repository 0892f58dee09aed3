"""The desk's LLM path with scripted models: each conversation ends as specified."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.testing import FunctionModel, ScriptedModel, json_answer, tool_calls
from alphadesk.pipelines.base import PipelineRun, run_graph
from alphadesk.pipelines.csp.models import CspRequest, CspResult
from alphadesk.pipelines.csp.pipeline import CspPipeline
from tests.pipelines.conftest import Facts, close_of, facts_for

SYMBOL, DAY = "NVDA", "2024-11-29"


@pytest.fixture
def facts(market: MarketData) -> Facts:
    return facts_for(market, SYMBOL, close_of(DAY))


async def run_desk(
    settings: Settings,
    market: MarketData,
    models: dict[str, ScriptedModel],
    depth: str = "standard",
) -> CspResult:
    desk = CspPipeline(settings, market, models=models)
    request = CspRequest(symbol=SYMBOL, as_of=close_of(DAY), depth=depth)  # type: ignore[arg-type]
    result = await run_graph(desk, request, PipelineRun(run_id="scripted"))
    assert result is not None
    return result


def scripted(*script: Any) -> ScriptedModel:
    return ScriptedModel(list(script), name="scripted/llm")


async def test_a_good_run(settings: Settings, market: MarketData, facts: Facts) -> None:
    chart = scripted(
        tool_calls(
            ("get_price_history", {"symbol": SYMBOL, "period": "6mo"}),
            ("find_support_resistance", {"symbol": SYMBOL}),
        ),
        json_answer(facts.chart_answer()),
    )
    options = scripted(
        tool_calls(("filter_options", {"symbol": SYMBOL, "option_type": "put"})),
        json_answer(facts.options_answer()),
    )
    research = scripted(
        tool_calls(("get_news", {"symbol": SYMBOL})), json_answer(facts.research_answer())
    )
    orchestrator = scripted("Sell the 2-week put under support; roll below it.")
    models = {
        "chart": chart,
        "options": options,
        "research": research,
        "orchestrator": orchestrator,
    }
    result = await run_desk(settings, market, models)

    assert result.decision == "select"
    assert result.synthesis is not None
    assert result.synthesis.suggested_position.strike == facts.put.strike
    # The options analyst saw the chart's context in its task.
    task = options.requests[0].messages[1].content
    assert str(round(facts.last * 0.93, 2)) in str(task)
    # The tools really ran: the chart model saw bounded, as-of facts.
    history = chart.requests[1].messages[3].content
    assert '"current_price"' in str(history) and len(str(history)) < 6000
    assert [a.model for a in result.agents] == ["scripted/llm"] * 4
    assert result.synthesis.narrative == "Sell the 2-week put under support; roll below it."
    assert str(facts.put.strike) in orchestrator.requests[0].last_text  # it saw the decision
    for model in (chart, options, research, orchestrator):
        model.assert_consumed()


async def test_invalid_json_then_a_valid_answer(
    settings: Settings, market: MarketData, facts: Facts
) -> None:
    chart = scripted("The trend is up, buy the dip!", json_answer(facts.chart_answer()))
    options = scripted(
        json_answer(
            facts.options_answer(
                recommendation="reject", best_strike=None, rationale="Premiums too thin."
            )
        )
    )
    result = await run_desk(settings, market, {"chart": chart, "options": options})
    assert "holds no JSON object" in chart.requests[1].last_text
    assert result.decision == "reject" and result.stage == "options"
    assert result.reason == "options: Premiums too thin."
    assert result.research is None  # rejected before research


async def test_a_hallucinated_strike_is_caught_and_corrected(
    settings: Settings, market: MarketData, facts: Facts
) -> None:
    invented = facts.put.strike + 0.37
    options = scripted(
        json_answer(facts.options_answer(best_strike=invented)),
        json_answer(facts.options_answer()),
    )
    models = {
        "chart": scripted(json_answer(facts.chart_answer())),
        "options": options,
        "research": scripted(json_answer(facts.research_answer())),
    }
    result = await run_desk(settings, market, models)
    feedback = options.requests[1].last_text
    assert f"no {facts.put.expiration} {invented:g} put in the chain" in feedback
    assert f"{facts.put.strike:g}" in feedback  # the nearest listed strikes are offered
    assert result.decision == "select"
    assert result.options is not None and result.options.best_strike == facts.put.strike


async def test_a_tool_error_goes_back_to_the_model(
    settings: Settings, market: MarketData, facts: Facts
) -> None:
    chart = scripted(
        tool_calls(("get_price_history", {"symbol": "NVDAX"})),
        tool_calls(("get_price_history", {"symbol": SYMBOL, "period": "10y"})),
        json_answer(facts.chart_answer(recommendation="reject", chart_notes="Too extended.")),
    )
    result = await run_desk(settings, market, {"chart": chart})
    unknown = chart.requests[1].last_text
    assert "NVDAX" in unknown and "NVDA" in unknown.replace("NVDAX", "")
    assert "period" in chart.requests[2].last_text  # invalid argument explained
    assert result.decision == "reject" and result.reason == "chart: Too extended."


async def test_an_exhausted_turn_budget_fails_visibly(
    settings: Settings, market: MarketData
) -> None:
    looping = [tool_calls(("get_price_history", {"symbol": SYMBOL})) for _ in range(5)]
    chart = scripted(*looping)
    result = await run_desk(settings, market, {"chart": chart}, depth="quick")
    assert result.decision == "failed"
    assert result.stage == "chart"
    assert result.reason is not None and "turn limit 4 reached" in result.reason
    assert result.options is None and result.synthesis is None
    assert result.agents[0].outcome == "max_turns"
    chart.assert_consumed()


async def test_a_chart_step_past_its_wall_time_ends_the_run_typed(
    settings: Settings, market: MarketData
) -> None:
    async def stalls(*_: Any) -> str:
        await asyncio.sleep(300)
        return "never"

    tight = settings.model_copy(
        update={"limits": settings.limits.model_copy(update={"agent_wall_time_s": 0.5})}
    )
    stalled = FunctionModel(stalls, name="stalled/llm")
    started = time.monotonic()
    result = await run_desk(tight, market, {"chart": stalled})  # type: ignore[dict-item]
    assert time.monotonic() - started < 150  # margin: half the 300 s stall
    assert result.decision == "failed" and result.stage == "chart"
    assert result.reason is not None and "agent_wall_time_s=0.5" in result.reason
    assert result.agents[0].outcome == "usage_limit"
