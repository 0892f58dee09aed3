"""Helpers for whole-pipeline tests: session closes, and facts read from the bundled data to
script answers that a validator should accept (``settings`` and ``market`` are shared
fixtures, in ``tests/support/fixtures.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from alphadesk.data.base import MarketData
from alphadesk.data.calendar import session_close
from alphadesk.data.models import OptionContract


def close_of(day: str) -> datetime:
    return session_close(date.fromisoformat(day))


@dataclass(frozen=True)
class Facts:
    """What the data says for one symbol at one instant."""

    last: float
    low: float
    high: float
    put: OptionContract

    def chart_answer(self, **overrides: Any) -> dict[str, Any]:
        answer = {
            "recommendation": "bullish",
            "trend_direction": "up",
            "trend_quality": "moderate",
            "current_price": self.last,
            "support_levels": [
                {"price": round(self.last * 0.93, 2), "strength": "strong", "type": "swing_low"}
            ],
            "resistance_levels": [],
            "fib_confluence_zones": [],
            "extension_risk": "low",
            "chart_notes": "Uptrend holding above support.",
        }
        return answer | overrides

    def options_answer(self, **overrides: Any) -> dict[str, Any]:
        put = self.put
        answer = {
            "recommendation": "select",
            "best_strike": put.strike,
            "best_expiration": put.expiration.isoformat(),
            "dte": put.dte,
            "premium": round(put.mid or 0.0, 2),
            "delta": put.delta,
            "iv": put.iv,
            "weekly_roc": 0.6,
            "annualized_roc": 31.0,
            "liquidity_score": "fair",
            "rationale": "Strike below support with a rich premium.",
        }
        return answer | overrides

    @staticmethod
    def research_answer(**overrides: Any) -> dict[str, Any]:
        answer = {
            "recommendation": "pass",
            "news_risk": "low",
            "earnings_risk": "low",
            "short_interest_risk": "low",
            "research_notes": "No red flags found.",
        }
        return answer | overrides


def facts_for(market: MarketData, symbol: str, as_of: datetime) -> Facts:
    bars = market.daily_bars(symbol, as_of, start=(as_of - timedelta(days=730)).date())
    closes = bars.prices()
    chain = market.option_chain(symbol, as_of, min_dte=14, max_dte=45)
    puts = [
        c
        for c in chain.select("put")
        if c.delta is not None and 0.17 <= abs(c.delta) <= 0.28 and c.mid
    ]
    return Facts(
        last=round(float(closes.iloc[-1]), 2),
        low=float(bars.frame["low"].min()),
        high=float(bars.frame["high"].max()),
        put=puts[0],
    )
