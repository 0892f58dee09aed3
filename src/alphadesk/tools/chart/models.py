"""Output models of the chart toolset (:mod:`alphadesk.tools.chart`).

Every model extends :class:`~alphadesk.tools.common.ToolOutput` (``symbol``, ``as_of``,
``source``, ``missing``) and is small and bounded: prices are rounded for display,
percentages are percent (``-3.2`` means −3.2 %), lists are capped. Field names are a
contract: deterministic policies read these outputs as JSON.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from alphadesk.tools.common import ToolOutput

__all__ = [
    "CandleOut",
    "ChartImage",
    "ChartPatterns",
    "ConfluenceOut",
    "ExtensionOut",
    "FibLevelOut",
    "FibLevelsOut",
    "LevelOut",
    "MajorSwing",
    "PatternOut",
    "PatternPoint",
    "PriceBar",
    "PriceHistory",
    "SupportResistanceOut",
    "SwingPointOut",
    "SwingPointsOut",
    "TechnicalIndicators",
    "TrendOut",
    "TrendlineOut",
]

PriceBasis = Literal["high_low", "close"]
Strength = Literal["strong", "moderate", "weak"]


class PriceBar(BaseModel):
    """One bar of the tail of a price history (fields the source lacks are omitted)."""

    date: date
    open: float | None = None
    high: float | None = None
    low: float | None = None
    close: float
    volume: int | None = None


class PriceHistory(ToolOutput):
    """Summary of a period of bars and its most recent rows."""

    period: str
    interval: Literal["1d", "1wk"]
    bars: int = Field(description="Daily bars in the period.")
    first_date: date
    last_date: date = Field(description="Date of the last bar (at or before as_of).")
    current_price: float = Field(description="Last close.")
    period_high: float
    period_high_date: date
    period_low: float
    period_low_date: date
    change_pct: float = Field(description="Last close vs first close of the period, percent.")
    avg_volume: int | None = Field(None, description="Mean daily volume; None without volume.")
    tail: list[PriceBar] = Field(description="The most recent bars (at most 20), oldest first.")


class SwingPointOut(BaseModel):
    """A confirmed swing high or low."""

    kind: Literal["high", "low"]
    date: date
    price: float


class MajorSwing(BaseModel):
    """The most significant swing: between the period's highest high and lowest low."""

    high: float
    high_date: date
    low: float
    low_date: date
    direction: Literal["up", "down"] = Field(description="up when the low came first.")
    range_pct: float = Field(description="(high − low) / low, percent.")


class SwingPointsOut(ToolOutput):
    """Swing highs and lows of a period."""

    period: str
    lookback: int
    price_basis: PriceBasis = Field(description="high_low, or close on a close-only series.")
    current_price: float
    swing_highs: int = Field(description="Number of swing highs found.")
    swing_lows: int = Field(description="Number of swing lows found.")
    points: list[SwingPointOut] = Field(
        description="Alternating high/low sequence, the latest 20 at most, oldest first."
    )
    last_swing_high: SwingPointOut | None = None
    last_swing_low: SwingPointOut | None = None
    structure: (
        Literal[
            "higher_highs_higher_lows",
            "lower_highs_lower_lows",
            "higher_highs_lower_lows",
            "lower_highs_higher_lows",
        ]
        | None
    ) = Field(None, description="Last two swing highs and lows compared.")
    major_swing: MajorSwing | None = None


class FibLevelOut(BaseModel):
    """One Fibonacci level."""

    label: str = Field(description='Percent label, e.g. "61.8%".')
    ratio: float
    price: float
    kind: Literal["retracement", "extension"]
    distance_pct: float = Field(description="(price − current price) / current price, percent.")


class FibLevelsOut(ToolOutput):
    """Fibonacci retracements and extensions of one swing."""

    period: str
    swing_source: Literal["detected", "given"]
    direction: Literal["up", "down"] = Field(
        description="up: low then high (retracements below the high); down: the mirror."
    )
    swing_high: float
    swing_high_date: date | None = None
    swing_low: float
    swing_low_date: date | None = None
    current_price: float
    retraced_pct: float = Field(
        description="How much of the swing the current price has given back, percent."
    )
    retracements: list[FibLevelOut] = Field(description="0% (swing end) to 100% (swing start).")
    extensions: list[FibLevelOut] = Field(description="Beyond the swing's start, nearest first.")
    nearest_below: FibLevelOut | None = Field(None, description="Nearest level below price.")
    nearest_above: FibLevelOut | None = Field(None, description="Nearest level above price.")


class LevelOut(BaseModel):
    """A support or resistance zone from clustered swing points."""

    kind: Literal["support", "resistance"]
    price: float = Field(description="Zone centre.")
    low: float
    high: float
    strength: Strength
    score: float = Field(description="0..1 from touches and recency.")
    touches: int
    last_touch: date
    distance_pct: float = Field(description="(price − current price) / current price, percent.")
    distance_atr: float = Field(description="(price − current price) / ATR.")


class ExtensionOut(BaseModel):
    """How far the last close stands above support, in ATR multiples."""

    support: float
    support_source: Literal["given", "zone", "recent_low"]
    atr_multiple: float = Field(description="(close − support) / ATR.")
    risk: Literal["low", "moderate", "high"] = Field(description="< 1.5 ATR low, < 3 moderate.")
    sma20: float
    sma20_atr_multiple: float


class ConfluenceOut(BaseModel):
    """A price area where levels of different families agree."""

    kind: Literal["support", "resistance"]
    price: float
    low: float
    high: float
    sources: list[str] = Field(description='e.g. ["fib_61.8%", "support", "sma_50"].')
    families: list[str] = Field(description="fib, sr, ma.")
    distance_pct: float


class SupportResistanceOut(ToolOutput):
    """Support below and resistance above the current price, extension and confluence."""

    period: str
    price_basis: PriceBasis
    current_price: float
    atr: float | None = Field(None, description="ATR(14), or its close-only proxy.")
    period_high: float
    period_low: float
    support: list[LevelOut] = Field(description="Below the current price, nearest first.")
    resistance: list[LevelOut] = Field(description="At or above it, nearest first.")
    nearest_support: float | None = None
    nearest_resistance: float | None = None
    extension: ExtensionOut | None = None
    confluence: list[ConfluenceOut] = Field(description="Nearest first, at most 5.")


class TrendlineOut(ToolOutput):
    """A trendline fitted through recent swing lows (support) or highs (resistance)."""

    period: str
    kind: Literal["support", "resistance"]
    price_basis: PriceBasis
    current_price: float
    found: bool = Field(description="False when there were fewer than two swing points.")
    direction: Literal["rising", "falling", "flat"] | None = None
    slope_per_bar: float | None = None
    slope_pct_per_bar: float | None = Field(None, description="Percent of the line per bar.")
    r2: float | None = None
    pivots: int | None = None
    touches: int | None = None
    start_date: date | None = None
    start_price: float | None = None
    value_now: float | None = Field(None, description="Line value at the last bar.")
    distance_pct: float | None = Field(None, description="Close vs line now, percent.")
    distance_atr: float | None = None
    broken: bool | None = Field(None, description="Close beyond the line by > 0.5 ATR.")


class PatternPoint(BaseModel):
    """One defining point of a pattern (a swing high or low)."""

    date: date
    price: float


class PatternOut(BaseModel):
    """A chart pattern, its key prices, its points and whether it still stands."""

    name: str
    direction: Literal["bullish", "bearish", "neutral"]
    status: Literal["forming", "confirmed"] = Field(
        description="confirmed once a close crossed the breakout level, else forming."
    )
    state: Literal["standing", "invalidated", "expired"] = Field(
        "standing",
        description="At as_of: standing (in force), invalidated (a close crossed the "
        "invalidation level) or expired (a close reached the target, or 60 sessions passed "
        "since confirmation, or since the last point while forming).",
    )
    ended_date: date | None = Field(None, description="When it was invalidated or expired.")
    ended_reason: str = ""
    confidence: float
    start_date: date
    end_date: date
    points: list[PatternPoint] = Field(default_factory=list, description="Its swing points.")
    breakout_level: float
    target: float
    invalidation: float
    neckline: float | None = None
    confirmed_date: date | None = None


class CandleOut(BaseModel):
    """A candlestick pattern completed in the last bars."""

    date: date
    pattern: str
    direction: Literal["bullish", "bearish", "neutral"]
    bars_ago: int


class ChartPatterns(ToolOutput):
    """Chart patterns of a period and candlestick signals of the last bars."""

    period: str
    lookback: int
    price_basis: PriceBasis
    current_price: float
    patterns_found: int = Field(description="Patterns standing at as_of.")
    patterns: list[PatternOut] = Field(
        description="Patterns standing at as_of (the current ones), most confident first, "
        "at most 8."
    )
    ended: list[PatternOut] = Field(
        default_factory=list,
        description="Patterns of the period no longer in force at as_of (invalidated or "
        "expired, with the date), latest ended first, at most 3, without their points: "
        "history, not signals.",
    )
    candlesticks: list[CandleOut] = Field(description="Last 5 bars, most recent first.")


class TrendOut(BaseModel):
    """Trend direction and quality from moving averages, their slope, ADX and r²."""

    direction: Literal["up", "down", "sideways"]
    quality: Strength
    score: float = Field(description="-1..1.")
    sma_fast: float
    sma_mid: float
    sma_slow: float | None = None
    mid_slope_pct: float = Field(description="Slope of the 50-bar SMA per bar, percent.")
    adx: float | None = None
    r2: float
    basis: list[str]


class TechnicalIndicators(ToolOutput):
    """Latest indicator values at the last bar, and the trend."""

    last_date: date
    current_price: float
    trend: TrendOut | None = None
    sma_20: float | None = None
    sma_50: float | None = None
    sma_200: float | None = None
    ema_20: float | None = None
    rsi_14: float | None = None
    rsi_state: Literal["overbought", "oversold", "neutral"] | None = None
    macd: float | None = None
    macd_signal: float | None = None
    macd_histogram: float | None = None
    bb_upper: float | None = None
    bb_lower: float | None = None
    bb_percent_b: float | None = None
    atr_14: float | None = None
    atr_pct: float | None = Field(None, description="ATR(14) / close, percent.")
    adx_14: float | None = None
    plus_di: float | None = None
    minus_di: float | None = None
    stoch_k: float | None = None
    stoch_d: float | None = None
    obv: int | None = None
    vwap_20: float | None = None
    hv_20: float | None = Field(None, description="20-day historical volatility, percent.")
    above_sma_50: bool | None = None
    above_sma_200: bool | None = None


class ChartImage(ToolOutput):
    """What a rendered chart shows, in numbers (the PNG is attached to the result)."""

    period: str
    bars: int
    current_price: float
    file: str | None = Field(None, description="File name in the run directory, if saved.")
    support_levels: list[float]
    resistance_levels: list[float]
    fib_levels: dict[str, float] = Field(description="Retracement label -> price.")
    trendline: dict[str, float] | None = Field(None, description="start_price, value_now.")
