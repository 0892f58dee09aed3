"""Answers a model would give, built from what the tools say at the analysis instant."""

from __future__ import annotations

from typing import Any

from alphadesk.agent import RunContext
from alphadesk.data.base import MarketData
from alphadesk.tools.chart.signals import get_technical_indicators
from alphadesk.tools.deps import ToolDeps
from tests.pipelines.conftest import close_of

OFFLINE = "no configured provider serves it"


async def indicators_of(market: MarketData, symbol: str, day: str) -> dict[str, Any]:
    """get_technical_indicators at the day's close, as a model reads it."""
    ctx = RunContext(deps=ToolDeps(market=market), as_of=close_of(day), run_id="t", agent="t")
    found = await get_technical_indicators.function(ctx, symbol)
    return found.model_dump(mode="json")


def market_answer(ind: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    answer = {
        "signal": "bullish",
        "score": 0.4,
        "confidence": 0.7,
        "figures": {"current_price": ind["current_price"], "rsi_14": ind["rsi_14"]},
        "evidence": [
            {"fact": "rsi_14", "value": ind["rsi_14"], "lean": "bullish", "reading": "room to run"}
        ],
        "summary": "Uptrend above the 200-day average.",
        "current_price": ind["current_price"],
        "trend_direction": ind["trend"]["direction"],
        "trend_quality": ind["trend"]["quality"],
        "support_levels": [round(ind["current_price"] * 0.95, 2)],
        "resistance_levels": [],
    }
    return answer | overrides


def absent(flag: str, **extra: Any) -> dict[str, Any]:
    return {
        "signal": "neutral",
        "score": 0.0,
        "confidence": 0.0,
        "summary": "No data.",
        "missing": [OFFLINE],
        flag: False,
        **extra,
    }


def filed() -> dict[str, Any]:
    """A fundamentals answer that weighs no figure (the statements exist: SEC archive)."""
    return {
        "signal": "neutral",
        "score": 0.0,
        "confidence": 0.2,
        "summary": "Statements are filed; no figure weighed.",
        "fundamentals_available": True,
    }


def turn(price: float, conviction: float, rebuttal: str | None = None) -> dict[str, Any]:
    """A researcher's answer: its argument, or (with ``rebuttal``) its answer to the other."""
    cite = {"fact": "market.current_price", "value": price, "lean": "neutral", "reading": "price"}
    answer = {"argument": "The case.", "evidence": [cite], "conviction": conviction}
    return answer | ({"rebuttal": rebuttal} if rebuttal else {})


def position(price: float, **overrides: Any) -> dict[str, Any]:
    answer = {
        "action": "BUY",
        "size_fraction": 0.2,
        "entry": price,
        "stop": round(price * 0.95, 2),
        "target": round(price * 1.05, 2),
        "horizon_days": 10,
        "conviction": 0.6,
        "rationale": "Buy the trend with a stop under support.",
    }
    return answer | overrides


def view(stance: str, size: float, rebuttal: str | None = None) -> dict[str, Any]:
    """A risk analyst's answer: its view, or (with ``rebuttal``) its answer to the others."""
    answer = {"stance": stance, "recommended_size": size, "argument": f"{stance} it."}
    return answer | ({"rebuttal": rebuttal} if rebuttal else {})
