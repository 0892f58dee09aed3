"""The Chart Analyst: trend, support and resistance, Fibonacci confluence, extension."""

from __future__ import annotations

from typing import Any

from alphadesk.agent import Agent
from alphadesk.agents.csp.deps import CspDeps
from alphadesk.agents.csp.models import ChartAnalysis, ConfluenceZone, PriceLevel
from alphadesk.agents.csp.tasks import ChartTask
from alphadesk.agents.csp.validators import chart_matches_prices
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import PlannedCall, RulesPolicy, Transcript
from alphadesk.tools.chart import CHART_TOOLS

__all__ = ["CHART", "chart_policy"]

_PERIOD = "6mo"
_LEVEL_PERIOD = "1y"
_MIN_FIB_GAP = 0.01


def _gather(t: Transcript) -> list[PlannedCall]:
    symbol = t.task_as(ChartTask).symbol
    return [
        ("get_price_history", {"symbol": symbol, "period": _PERIOD}),
        ("get_technical_indicators", {"symbol": symbol}),
        ("calculate_fib_levels", {"symbol": symbol, "period": _PERIOD}),
        ("find_support_resistance", {"symbol": symbol, "period": _LEVEL_PERIOD}),
    ]


def _decide(t: Transcript) -> ChartAnalysis:
    levels: dict[str, Any] = t.facts("find_support_resistance")
    price = float(levels["current_price"])
    indicators = t.last("get_technical_indicators")
    trend = (indicators.get("trend") if isinstance(indicators, dict) else None) or {}
    direction, quality = trend.get("direction", "sideways"), trend.get("quality", "weak")
    supports = [
        PriceLevel(price=z["price"], strength=z["strength"], type=f"zone_{z['touches']}_touches")
        for z in levels["support"]
        if z["price"] < price
    ]
    fib = t.last("calculate_fib_levels")  # optional: a flat series has no swing
    nearest_fib = fib.get("nearest_below") if isinstance(fib, dict) else None
    # A retracement a hair under the price is not a floor to sell a put against.
    if (
        nearest_fib
        and nearest_fib["price"] < price * (1 - _MIN_FIB_GAP)
        and all(abs(s.price - nearest_fib["price"]) > 0.005 * price for s in supports)
    ):
        supports.append(
            PriceLevel(
                price=nearest_fib["price"], strength="moderate", type=f"fib_{nearest_fib['label']}"
            )
        )
    supports.sort(key=lambda s: -s.price)
    resistances = [
        PriceLevel(price=z["price"], strength=z["strength"], type=f"zone_{z['touches']}_touches")
        for z in levels["resistance"]
        if z["price"] > price
    ]
    zones = [
        ConfluenceZone(price=z["price"], levels=z["sources"])
        for z in levels.get("confluence", [])
        if z["kind"] == "support" and z["price"] < price
    ]
    extension = (levels.get("extension") or {}).get("risk", "moderate")
    recommendation, why = _verdict(direction, quality, supports, extension)
    notes = (
        f"{quality.capitalize()} {direction}trend; price {price:.2f}; "
        f"{len(supports)} support level(s) below"
        + (f", nearest {supports[0].price:.2f}" if supports else "")
        + f"; extension risk {extension}. {why}"
    )
    return ChartAnalysis(
        recommendation=recommendation,
        trend_direction=direction,
        trend_quality=quality,
        current_price=price,
        support_levels=supports[:5],
        resistance_levels=resistances[:3],
        fib_confluence_zones=zones[:3],
        extension_risk=extension,
        chart_notes=notes,
    )


def _verdict(
    direction: str, quality: str, supports: list[PriceLevel], extension: str
) -> tuple[Any, str]:
    if direction == "down" and quality != "weak":
        return "reject", f"Rejected: a {quality} downtrend makes assignment likely."
    if not supports:
        return "reject", "Rejected: no support below the price to sell a put against."
    if direction == "up":
        return "bullish", "Uptrend with support below: suitable for selling puts."
    if direction == "sideways":
        return "neutral", "Range-bound: sell below the range's support."
    return "bearish", "Weak downtrend: only deep out-of-the-money strikes."


# The policy reads numbers, not pixels: it never asks for render_chart (the run's report
# gets its chart drawn once at the end when one is wanted).
chart_policy = RulesPolicy(plan=[_gather], decide=_decide, name="chart")

CHART: AgentSpec[CspDeps, ChartAnalysis] = AgentSpec(
    agent=Agent(
        name="chart",
        max_tokens=1200,
        instructions=load_prompt("alphadesk.agents.csp", "chart_system").template,
        output_type=ChartAnalysis,
        toolset=CHART_TOOLS,
        output_validators=(chart_matches_prices,),
    ),
    policy=chart_policy,
    turns={"quick": 4, "standard": 8, "deep": 15},
)
