"""The named figures each analyst may report, read from its tools' outputs.

One function per analyst turns tool outputs (as JSON objects, the way a model and a rules
policy see them) into ``name -> number``. The policies fill ``figures`` with it and the
validators recompute it at the run's instant to check what an analyst reported.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "fundamentals_figures",
    "market_figures",
    "news_figures",
    "sentiment_figures",
]

# Indicator fields worth quoting (OBV is a running total with no meaning on its own).
_INDICATORS = (
    "current_price",
    "sma_20",
    "sma_50",
    "sma_200",
    "ema_20",
    "rsi_14",
    "macd",
    "macd_signal",
    "macd_histogram",
    "bb_upper",
    "bb_lower",
    "bb_percent_b",
    "atr_14",
    "atr_pct",
    "adx_14",
    "plus_di",
    "minus_di",
    "stoch_k",
    "stoch_d",
    "vwap_20",
    "hv_20",
)
_NEWS = ("sentiment_score", "positive_headlines", "negative_headlines", "neutral_headlines")
_RATIOS = (
    "gross_margin_pct",
    "operating_margin_pct",
    "net_margin_pct",
    "fcf_margin_pct",
    "revenue_growth_pct",
    "eps_growth_pct",
    "current_ratio",
    "debt_to_equity",
    "pe_ratio",
    "ps_ratio",
    "pb_ratio",
    "ev_to_ebitda",
    "fcf_yield_pct",
)


def _numbers(source: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, float]:
    found: dict[str, float] = {}
    for name in names:
        value = source.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            found[name] = float(value)
    return found


def market_figures(indicators: Mapping[str, Any]) -> dict[str, float]:
    """From ``get_technical_indicators``: the indicators and the trend score."""
    found = _numbers(indicators, _INDICATORS)
    trend = indicators.get("trend") or {}
    if isinstance(trend.get("score"), int | float):
        found["trend_score"] = float(trend["score"])
    return found


def news_figures(news: Mapping[str, Any]) -> dict[str, float]:
    """From ``get_news``: the headline count and tone (nothing when it has no news)."""
    if not news.get("available"):
        return {}
    return {"headline_count": float(news.get("count", 0)), **_numbers(news, _NEWS)}


def fundamentals_figures(report: Mapping[str, Any]) -> dict[str, float]:
    """From ``get_fundamentals``: each key figure (``revenue_annual``, ``revenue_ttm``...),
    its change over a year (``revenue_annual_change_pct``), the ratios and the valuation."""
    if not report.get("available"):
        return {}
    found: dict[str, float] = {}
    for figure in report.get("figures") or []:
        suffix = "" if figure["period"] == "instant" else f"_{figure['period']}"
        name = f"{figure['name']}{suffix}"
        found[name] = float(figure["value"])
        if figure.get("change_pct") is not None:
            found[f"{name}_change_pct"] = float(figure["change_pct"])
    return found | _numbers(report, _RATIOS)


def sentiment_figures(
    market: Mapping[str, Any], short: Mapping[str, Any], ratings: Mapping[str, Any]
) -> dict[str, float]:
    """From ``get_market_data``, ``get_short_interest`` and ``get_analyst_ratings``."""
    found: dict[str, float] = {}
    level = market.get("volatility_level")
    if isinstance(level, int | float):
        vix = market.get("volatility_source") == "vix"
        found["vix" if vix else "sp500_realized_vol_20d"] = float(level)
    found |= {f"index_{k}": v for k, v in _numbers(market, ("change_pct",)).items()}
    found |= {f"vix_{k}": v for k, v in _numbers(market, ("volatility_change",)).items()}
    if short.get("available"):
        found |= _numbers(short, ("short_pct_of_float", "days_to_cover"))
    if ratings.get("available"):
        found |= _numbers(ratings, ("upgrades", "downgrades", "net_upgrades"))
    return found
