"""The market analyst: trend, indicators, support and resistance, chart patterns."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from alphadesk.agent import Agent, Toolset
from alphadesk.agents.desk.deps import DeskDeps
from alphadesk.agents.desk.figures import market_figures
from alphadesk.agents.desk.models import MarketReport
from alphadesk.agents.desk.scoring import Tally, collect_missing, signal_of
from alphadesk.agents.desk.tasks import MarketTask
from alphadesk.agents.desk.validators import market_matches_data
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import PlannedCall, RulesPolicy, Transcript
from alphadesk.tools.chart import CHART_TOOLS

__all__ = ["MARKET", "market_policy"]

_TREND_WEIGHT = {"strong": 0.4, "moderate": 0.25, "weak": 0.1}
_RECENT_PATTERN = timedelta(days=30)  # an older breakout has already played out
_LEVELS = 3

_TOOLS = Toolset.of(
    "desk_market",
    CHART_TOOLS.only(
        "get_price_history",
        "get_technical_indicators",
        "find_support_resistance",
        "detect_chart_patterns",
        "calculate_fib_levels",
        "render_chart",
    ),
)


def _gather(t: Transcript) -> list[PlannedCall]:
    symbol = t.task_as(MarketTask).symbol
    return [
        ("get_technical_indicators", {"symbol": symbol}),
        ("find_support_resistance", {"symbol": symbol, "period": "1y"}),
        ("detect_chart_patterns", {"symbol": symbol, "period": "6mo"}),
    ]  # the policy reads numbers; the desk draws the report's chart alongside


def _weigh(tally: Tally, ind: dict[str, Any], direction: str, quality: str) -> None:
    sign = {"up": 1, "down": -1}.get(direction, 0)
    tally.add("trend_score", sign * _TREND_WEIGHT[quality], f"{quality} {direction}trend")
    if "sma_200" in tally.figures:
        above = ind["current_price"] > ind["sma_200"]
        tally.add(
            "sma_200",
            0.1 if above else -0.1,
            f"price {'above' if above else 'below'} its 200-day average",
        )
    if "macd_histogram" in tally.figures:
        rising = ind["macd_histogram"] > 0
        tally.add(
            "macd_histogram",
            0.1 if rising else -0.1,
            f"MACD {'above' if rising else 'below'} its signal line",
        )
    rsi = ind.get("rsi_14")
    if rsi is not None:
        weight = -0.15 if rsi >= 70 else 0.15 if rsi <= 30 else 0.0
        state = "overbought" if rsi >= 70 else "oversold" if rsi <= 30 else "neutral"
        tally.add("rsi_14", weight, f"RSI {state}")


def _recent_patterns(patterns: dict[str, Any], today: date) -> list[tuple[str, float]]:
    """Patterns still in play (forming, or confirmed in the last month), signed."""
    found = []
    for p in patterns.get("patterns") or []:
        when = date.fromisoformat(p.get("confirmed_date") or p["end_date"])
        if p["status"] == "forming" or today - when <= _RECENT_PATTERN:
            sign = {"bullish": 1, "bearish": -1}.get(p["direction"], 0)
            found.append((f"{p['name']} ({p['direction']}, {p['status']})", sign * p["confidence"]))
    return found


def _decide(t: Transcript) -> MarketReport:
    ind = t.facts("get_technical_indicators")
    levels = t.facts("find_support_resistance")
    trend = ind.get("trend") or {"direction": "sideways", "quality": "weak"}
    tally = Tally(market_figures(ind))
    _weigh(tally, ind, trend["direction"], trend["quality"])
    found = t.last("detect_chart_patterns")
    day = t.task_as(MarketTask).as_of.date()
    patterns = _recent_patterns(found, day) if isinstance(found, dict) else []
    pattern_push = 0.1 * sum(weight for _, weight in patterns)
    score = round(max(-1.0, min(1.0, tally.score + pattern_push)), 2)
    price = ind["current_price"]
    supports = [z["price"] for z in levels["support"] if z["price"] < price][:_LEVELS]
    resistances = [z["price"] for z in levels["resistance"] if z["price"] > price][:_LEVELS]
    summary = (
        f"Last close {price:g}; "
        + "; ".join(e.reading for e in tally.evidence if e.lean != "neutral")
        + (f"; patterns in play: {', '.join(name for name, _ in patterns)}" if patterns else "")
        + (f"; nearest support {supports[0]:g}" if supports else "; no support below")
        + (f", resistance {resistances[0]:g}." if resistances else ", no resistance above.")
    )
    return MarketReport(
        signal=signal_of(score),
        score=score,
        confidence=round(min(1.0, 0.3 + abs(score)), 2),
        figures=tally.figures,
        evidence=tally.evidence,
        summary=summary,
        missing=collect_missing(ind, levels, found),
        current_price=price,
        trend_direction=trend["direction"],
        trend_quality=trend["quality"],
        support_levels=supports,
        resistance_levels=resistances,
        patterns=[name for name, _ in patterns],
    )


market_policy = RulesPolicy(plan=[_gather], decide=_decide, name="market")

MARKET: AgentSpec[DeskDeps, MarketReport] = AgentSpec(
    agent=Agent(
        name="market",
        max_tokens=1200,
        instructions=load_prompt("alphadesk.agents.desk", "market_system").template,
        output_type=MarketReport,
        toolset=_TOOLS,
        output_validators=(market_matches_data,),
    ),
    policy=market_policy,
    turns={"quick": 3, "standard": 6, "deep": 10},
)
