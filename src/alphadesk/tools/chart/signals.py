"""Chart signals: chart and candlestick patterns, technical indicators and the trend.

Tools of the chart toolset (see :mod:`alphadesk.tools.chart`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from alphadesk.agent import RunContext, tool
from alphadesk.analytics import (
    AnalyticsError,
    InsufficientData,
    candlestick_patterns,
    detect_patterns,
    indicator_snapshot,
    trend_assessment,
)
from alphadesk.tools.chart.models import (
    CandleOut,
    ChartPatterns,
    PatternOut,
    PatternPoint,
    TechnicalIndicators,
    TrendOut,
)
from alphadesk.tools.chart.series import ChartSeries, day, load_series, price
from alphadesk.tools.common import Period
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.once import once_per_step

if TYPE_CHECKING:
    from alphadesk.analytics import ChartPattern, IndicatorSnapshot

__all__ = ["INDICATOR_GROUPS", "IndicatorName", "detect_chart_patterns", "get_technical_indicators"]

_MAX_PATTERNS = 8
_MAX_ENDED = 3  # the latest to end: enough to say what no longer holds
_MAX_CANDLES = 10
_CANDLE_BARS = 5
# Indicators read a year plus the history a 200-bar average and its slope need.
_INDICATOR_PERIOD = "1y"
_INDICATOR_WARMUP = 60
_NOTE_CHARS = 160

IndicatorName = Literal[
    "sma", "ema", "rsi", "macd", "bollinger", "atr", "adx", "stochastic", "obv", "vwap", "hv"
]
#: Indicator group -> the output fields it fills.
INDICATOR_GROUPS: dict[str, tuple[str, ...]] = {
    "sma": ("sma_20", "sma_50", "sma_200", "above_sma_50", "above_sma_200"),
    "ema": ("ema_20",),
    "rsi": ("rsi_14", "rsi_state"),
    "macd": ("macd", "macd_signal", "macd_histogram"),
    "bollinger": ("bb_upper", "bb_lower", "bb_percent_b"),
    "atr": ("atr_14", "atr_pct"),
    "adx": ("adx_14", "plus_di", "minus_di"),
    "stochastic": ("stoch_k", "stoch_d"),
    "obv": ("obv",),
    "vwap": ("vwap_20",),
    "hv": ("hv_20",),
}
_PRICE_LIKE = ("sma_20", "sma_50", "sma_200", "ema_20", "bb_upper", "bb_lower", "atr_14", "vwap_20")
_OSCILLATORS = ("rsi_14", "adx_14", "plus_di", "minus_di", "stoch_k", "stoch_d")


# -- detect_chart_patterns --------------------------------------------------------------


def _pattern(p: ChartPattern, *, points: bool = True) -> PatternOut:
    return PatternOut(
        name=p.name,
        direction=p.direction,
        status=p.status,
        confidence=round(p.confidence, 2),
        start_date=day(p.start_date),
        end_date=day(p.end_date),
        state=p.state,
        ended_date=day(p.ended_date) if p.ended_date is not None else None,
        ended_reason=p.ended_reason,
        points=[PatternPoint(date=day(d), price=price(v)) for d, v in p.points] if points else [],
        breakout_level=price(p.breakout_level),
        target=price(p.target),
        invalidation=price(p.invalidation),
        neckline=price(p.neckline) if p.neckline is not None else None,
        confirmed_date=day(p.confirmed_date) if p.confirmed_date is not None else None,
    )


def _candles(s: ChartSeries, missing: list[str]) -> list[CandleOut]:
    if not {"open", "high", "low"} <= set(s.frame.columns):
        missing.append("candlesticks: need open, high, low and close")
        return []
    try:
        signals = s.computed(candlestick_patterns, lookback=_CANDLE_BARS)
    except InsufficientData as exc:
        missing.append(f"candlesticks: {exc}")
        return []
    return [
        CandleOut(date=day(c.date), pattern=c.pattern, direction=c.direction, bars_ago=c.bars_ago)
        for c in signals[:_MAX_CANDLES]
    ]


@tool
async def detect_chart_patterns(
    ctx: RunContext[ToolDeps],
    symbol: str,
    period: Period = "6mo",
    lookback: Annotated[int, Field(ge=2, le=10)] = 5,
) -> ChartPatterns:
    """Chart patterns over a period and candlestick patterns of the last 5 bars.

    Chart patterns: double tops and bottoms, head and shoulders (and inverse), triangles,
    channels and flags, each with its status (forming or confirmed, and when), confidence
    (0-1), the dates and prices of its points, breakout level, target and invalidation
    price; the most confident first. Only patterns still standing at the run's instant
    are listed in patterns; those invalidated (a close crossed the invalidation level) or
    expired (target reached, or too old) are in ended, with the date and reason.

    Args:
        symbol: Ticker, e.g. "MSFT".
        period: How far back to look.
        lookback: Bars on each side a swing point must dominate.
    """
    s = await load_series(ctx, symbol, period)
    missing: list[str] = []
    try:
        found = s.computed(detect_patterns, lookback)
    except InsufficientData as exc:
        missing.append(s.not_enough(exc))
        found = []
    candles = _candles(s, missing)
    standing = [p for p in found if p.state == "standing"]
    ended = sorted((p for p in found if p.state != "standing"),
                   key=lambda p: p.ended_date or p.end_date, reverse=True)  # fmt: skip
    return ChartPatterns(
        **s.envelope(ctx, "patterns use closes", *missing),
        period=period,
        lookback=lookback,
        price_basis=s.basis,
        current_price=price(s.close),
        patterns_found=len(standing),
        patterns=[_pattern(p) for p in standing[:_MAX_PATTERNS]],
        ended=[_pattern(p, points=False) for p in ended[:_MAX_ENDED]],
        candlesticks=candles,
    )


# -- get_technical_indicators -----------------------------------------------------------


def _round_value(name: str, value: float) -> float:
    if name in _PRICE_LIKE:
        return price(value)
    if name in _OSCILLATORS:
        return round(value, 1)
    if name.startswith("macd"):  # oscillates around zero: a fixed 4 decimals reads best
        return round(value, 4)
    if name == "obv":
        return round(value)
    return round(value, 3)  # bb_percent_b


def _values(snap: IndicatorSnapshot, groups: list[str]) -> dict[str, Any]:
    close = snap.close
    out: dict[str, Any] = {}
    for group in groups:
        for name in INDICATOR_GROUPS[group]:
            value = getattr(snap, name, None)
            if isinstance(value, float) and math.isfinite(value):
                out[name] = _round_value(name, value)
    if "rsi_14" in out:
        rsi = out["rsi_14"]
        out["rsi_state"] = "overbought" if rsi >= 70 else "oversold" if rsi <= 30 else "neutral"
    if "atr_14" in out and snap.atr_14 is not None:
        out["atr_pct"] = round(100 * snap.atr_14 / close, 2)
    if "hv" in groups and snap.hv_20 is not None:
        out["hv_20"] = round(100 * snap.hv_20, 2)
    for ma in ("sma_50", "sma_200"):
        if "sma" in groups and getattr(snap, ma) is not None:
            out[f"above_{ma}"] = close > getattr(snap, ma)
    return out


def _unavailable(snap: IndicatorSnapshot, groups: list[str]) -> list[str]:
    wanted = {n for g in groups for n in (g, *INDICATOR_GROUPS[g])}
    return [
        f"{name}: {reason}"[:_NOTE_CHARS]
        for name, reason in snap.unavailable.items()
        if name in wanted
    ]


def _trend(s: ChartSeries, missing: list[str]) -> TrendOut | None:
    try:
        t = s.computed(trend_assessment)
    except InsufficientData as exc:
        missing.append(f"trend: not enough data: {exc}")
        return None
    return TrendOut(
        direction=t.direction,
        quality=t.quality,
        score=round(t.score, 2),
        sma_fast=price(t.sma_fast),
        sma_mid=price(t.sma_mid),
        sma_slow=price(t.sma_slow) if t.sma_slow is not None else None,
        mid_slope_pct=round(100 * t.mid_slope_pct, 3),
        adx=round(t.adx, 1) if t.adx is not None else None,
        r2=round(t.r2, 3),
        basis=list(t.basis),
    )


@tool
@once_per_step
async def get_technical_indicators(
    ctx: RunContext[ToolDeps],
    symbol: str,
    indicators: list[IndicatorName] | None = None,
) -> TechnicalIndicators:
    """Latest technical indicators and the trend (direction and quality) of a symbol.

    Values at the last daily bar: SMA 20/50/200, EMA 20, RSI 14, MACD (12, 26, 9),
    Bollinger Bands (20, 2), ATR 14, ADX 14 with +DI/-DI, slow stochastic, OBV, 20-bar
    VWAP and 20-day historical volatility (percent). The trend is always included: up,
    down or sideways; strong, moderate or weak (moving-average alignment and slope, ADX).

    Args:
        symbol: Ticker, e.g. "MSFT".
        indicators: Which indicators to return; all when omitted.
    """
    s = await load_series(ctx, symbol, _INDICATOR_PERIOD, warmup_bars=_INDICATOR_WARMUP)
    groups: list[str] = list(dict.fromkeys(indicators or INDICATOR_GROUPS))
    missing: list[str] = []
    trend = _trend(s, missing)
    try:
        snap = s.computed(indicator_snapshot)
    except AnalyticsError as exc:
        missing.append(f"indicators: {exc}"[:_NOTE_CHARS])
        values: dict[str, Any] = {}
    else:
        values = _values(snap, groups)
        missing += _unavailable(snap, groups)
    return TechnicalIndicators(
        **s.envelope(ctx, "ATR and trend use closes", *missing),
        last_date=day(s.frame.index[-1]),
        current_price=price(s.close),
        trend=trend,
        **values,
    )
