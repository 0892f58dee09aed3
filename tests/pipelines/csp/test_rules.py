"""The whole desk offline: bundled real data, each agent's rules policy, the real graph."""

from __future__ import annotations

from typing import Any

import pytest

from alphadesk.agents.csp import default_agents
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.rules import RulesModel
from alphadesk.llm.testing import FunctionModel
from alphadesk.pipelines.base import PipelineRun, run_graph
from alphadesk.pipelines.csp.models import CspRequest, CspResult
from alphadesk.pipelines.csp.pipeline import CspPipeline
from alphadesk.tools.chart.levels import find_support_resistance
from tests.pipelines.conftest import close_of


async def analyze(
    settings: Settings,
    market: MarketData,
    symbol: str,
    day: str,
    models: dict[str, Any] | None = None,
    **kwargs: Any,
) -> tuple[CspResult, list[Any]]:
    events: list[Any] = []
    request = CspRequest(symbol=symbol, as_of=close_of(day), **kwargs)
    session = PipelineRun(run_id=f"{symbol}-{day}", emit=events.append)
    result = await run_graph(CspPipeline(settings, market, models=models), request, session)
    assert result is not None
    return result, events


@pytest.mark.parametrize(
    ("symbol", "day"), [("NVDA", "2024-11-29"), ("AMZN", "2019-06-28"), ("AAPL", "2012-03-30")]
)
async def test_selected_put_exists_in_the_chain_and_agrees_with_the_chart(
    settings: Settings, market: MarketData, symbol: str, day: str
) -> None:
    result, _ = await analyze(settings, market, symbol, day)
    assert result.decision == "select", result.reason
    chart, options, synthesis = result.chart, result.options, result.synthesis
    assert chart is not None and options is not None and synthesis is not None
    as_of = close_of(day)

    # The price and levels are the data's, as of the analysis instant.
    closes = market.daily_bars(symbol, as_of).prices()
    assert chart.current_price == pytest.approx(float(closes.iloc[-1]), rel=1e-3)
    assert all(s.price < chart.current_price for s in chart.support_levels)
    assert all(r.price > chart.current_price for r in chart.resistance_levels)
    levels = await find_support_resistance.function(_ctx(market, as_of), symbol, "1y")
    zone_prices = {z.price for z in levels.support}
    assert zone_prices & {s.price for s in chart.support_levels}

    # The chosen put is listed, inside the constraints, and priced from its quote.
    chain = market.option_chain(symbol, as_of, min_dte=0, max_dte=60)
    listed = {(c.expiration, c.strike): c for c in chain.select("put")}
    put = listed[(options.best_expiration, options.best_strike)]
    rules = CspRequest(symbol=symbol, as_of=as_of).constraints
    assert rules.dte_min <= put.dte <= rules.dte_max
    assert put.delta is not None and rules.delta_min <= abs(put.delta) <= rules.delta_max
    assert put.bid is not None and put.ask is not None
    assert put.bid <= options.premium <= put.ask
    for alt in options.alternative_strikes:
        assert (alt.expiration, alt.strike) in listed

    position = synthesis.suggested_position
    assert position.strike == options.best_strike
    assert position.capital_required == pytest.approx(options.best_strike * 100)
    assert position.breakeven == pytest.approx(options.best_strike - options.premium, abs=0.01)
    assert {a.agent for a in result.agents} == {"chart", "options", "research"}
    assert all(a.model == "rules" and a.outcome == "completed" for a in result.agents)
    assert any("news" in item for item in result.data_missing)  # offline: said, not hidden


async def test_chart_rejection_stops_the_graph_and_says_why(
    settings: Settings, market: MarketData
) -> None:
    result, events = await analyze(settings, market, "AMZN", "2008-11-28")
    assert result.decision == "reject"
    assert result.stage == "chart"
    assert result.reason is not None and "downtrend" in result.reason
    assert result.options is None and result.research is None and result.synthesis is None
    started = [e.agent for e in events if e.kind == "step_started"]
    assert started == ["chart"]


@pytest.mark.slow
async def test_parallel_research_reaches_the_same_decision_and_is_cancelled_on_reject(
    settings: Settings, market: MarketData
) -> None:
    sequential, _ = await analyze(settings, market, "NVDA", "2024-11-29")
    parallel, _ = await analyze(settings, market, "NVDA", "2024-11-29", parallel_research=True)
    assert parallel.decision == sequential.decision == "select"
    assert parallel.options == sequential.options
    assert parallel.research is not None

    # A research analyst still thinking when the chart rejects is cancelled.
    slow = FunctionModel(_rules_reply("research"), name="rules", latency_s=30)
    rejected, events = await analyze(
        settings, market, "AMZN", "2008-11-28", parallel_research=True, models={"research": slow}
    )
    assert rejected.decision == "reject" and rejected.research is None
    finished = {e.agent: e.status for e in events if e.kind == "step_finished"}
    assert finished == {"chart": "rejected", "research": "cancelled"}
    assert len(slow.requests) == 1  # asked once, never answered


def _rules_reply(agent: str) -> Any:
    rules = RulesModel(default_agents().by_name(agent).policy)

    async def reply(messages: Any, tools: Any, settings: Any) -> Any:
        return (await rules.request(messages, tools, settings)).message

    return reply


@pytest.mark.slow
async def test_the_run_is_reproducible(settings: Settings, market: MarketData) -> None:
    first, _ = await analyze(settings, market, "AMZN", "2019-06-28")
    second, _ = await analyze(settings, market, "AMZN", "2019-06-28")
    assert first.model_dump(exclude={"agents"}) == second.model_dump(exclude={"agents"})


def _ctx(market: MarketData, as_of: Any) -> Any:
    from alphadesk.agent import RunContext
    from alphadesk.tools.deps import ToolDeps

    return RunContext(deps=ToolDeps(market=market), as_of=as_of, run_id="t", agent="test")
