"""Chart levels: swing points, Fibonacci levels, support and resistance, trendlines.

Tools of the chart toolset (see :mod:`alphadesk.tools.chart`). The builders
(``fib_output``, ``sr_output``, ``trendline_output``) are shared with ``render_chart`` so
that a chart draws exactly the levels these tools report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from alphadesk.agent import ModelRetry, RunContext, tool
from alphadesk.analytics import (
    AnalyticsError,
    InsufficientData,
    confluence_zones,
    extension_from_support,
    fibonacci_from_bars,
    fibonacci_levels,
    support_resistance,
    swing_points,
    trendline,
    zigzag,
)
from alphadesk.analytics.swings import FibLevel, FibLevels
from alphadesk.tools.chart.models import (
    ConfluenceOut,
    ExtensionOut,
    FibLevelOut,
    FibLevelsOut,
    LevelOut,
    MajorSwing,
    SupportResistanceOut,
    SwingPointOut,
    SwingPointsOut,
    TrendlineOut,
)
from alphadesk.tools.chart.series import ChartSeries, day, load_series, pct, price
from alphadesk.tools.common import Period, round_price
from alphadesk.tools.deps import ToolDeps

if TYPE_CHECKING:
    from alphadesk.analytics.levels import Zone
    from alphadesk.analytics.swings import SwingPoint

__all__ = [
    "calculate_fib_levels",
    "calculate_swing_points",
    "calculate_trendline",
    "fib_output",
    "find_support_resistance",
    "sr_output",
    "trendline_output",
]

_MAX_POINTS = 20
_MAX_CONFLUENCE = 5
_TRENDLINE_TOLERANCE_ATR = 0.5


# -- calculate_swing_points -------------------------------------------------------------


def _point(p: SwingPoint) -> SwingPointOut:
    return SwingPointOut(kind=p.kind, date=day(p.date), price=price(p.price))


def _structure(highs: tuple[SwingPoint, ...], lows: tuple[SwingPoint, ...]) -> Any:
    if len(highs) < 2 or len(lows) < 2:
        return None
    hh = "higher_highs" if highs[-1].price > highs[-2].price else "lower_highs"
    hl = "higher_lows" if lows[-1].price > lows[-2].price else "lower_lows"
    return f"{hh}_{hl}"


def _major_swing(fib: FibLevels) -> MajorSwing:
    assert fib.high_date is not None and fib.low_date is not None
    return MajorSwing(
        high=price(fib.swing_high),
        high_date=day(fib.high_date),
        low=price(fib.swing_low),
        low_date=day(fib.low_date),
        direction=fib.direction,
        range_pct=pct(fib.swing_high - fib.swing_low, fib.swing_low),
    )


@tool
async def calculate_swing_points(
    ctx: RunContext[ToolDeps],
    symbol: str,
    period: Period = "6mo",
    lookback: Annotated[int, Field(ge=1, le=20)] = 5,
) -> SwingPointsOut:
    """Swing highs and lows of a symbol over a period.

    A swing high is a bar whose high beats the `lookback` bars on each side (a swing low
    the mirror). Returns the alternating high/low sequence (latest 20), the last swing
    high and low, the structure of the last two of each (higher highs and higher lows...)
    and the most significant swing (period high and low), which calculate_fib_levels uses.

    Args:
        symbol: Ticker, e.g. "MSFT".
        period: How far back to look.
        lookback: Bars on each side a swing must dominate (larger finds fewer, bigger swings).
    """
    s = await load_series(ctx, symbol, period)
    missing: list[str] = []
    points: list[SwingPointOut] = []
    highs: tuple[SwingPoint, ...] = ()
    lows: tuple[SwingPoint, ...] = ()
    try:
        swings = s.computed(swing_points, lookback)
        highs, lows = swings.highs, swings.lows
        points = [_point(p) for p in zigzag(swings)[-_MAX_POINTS:]]
    except InsufficientData as exc:
        missing.append(s.not_enough(exc))
    if not missing and not points:
        missing.append("swing points: none in the period (no price movement)")
    try:
        major: MajorSwing | None = _major_swing(s.computed(fibonacci_from_bars))
    except InsufficientData:
        major = None
    return SwingPointsOut(
        **s.envelope(ctx, "swing points use closes", *missing),
        period=period,
        lookback=lookback,
        price_basis=s.basis,
        current_price=price(s.close),
        swing_highs=len(highs),
        swing_lows=len(lows),
        points=points,
        last_swing_high=_point(highs[-1]) if highs else None,
        last_swing_low=_point(lows[-1]) if lows else None,
        structure=_structure(highs, lows),
        major_swing=major,
    )


# -- calculate_fib_levels ---------------------------------------------------------------


def _fib_level(level: FibLevel, close: float) -> FibLevelOut:
    return FibLevelOut(
        label=level.label,
        ratio=level.ratio,
        price=price(level.price),
        kind=level.kind,
        distance_pct=pct(level.price - close, close),
    )


def _given_swing(s: ChartSeries, high: float, low: float) -> None:
    """Refuse swing prices the symbol never traded in the period (invented numbers)."""
    top, bottom = float(s.highs.max()), float(s.lows.min())
    if not high > low:
        raise ModelRetry(f"swing_high ({high}) must be above swing_low ({low})")
    if high > top * 1.01 or low < bottom * 0.99:
        raise ModelRetry(
            f"{s.symbol} traded between {price(bottom)} and {price(top)} over {s.period}; "
            "swing prices must lie in that range. Use calculate_swing_points for real swing "
            "prices, or omit swing_high and swing_low to use the most significant swing."
        )


def _fib_levels(
    s: ChartSeries, high: float | None, low: float | None, direction: Literal["up", "down"] | None
) -> tuple[FibLevels, Literal["detected", "given"]]:
    if (high is None) != (low is None):
        raise ModelRetry(
            "pass both swing_high and swing_low, or neither to use the most "
            "significant swing of the period"
        )
    if high is not None and low is not None:
        _given_swing(s, high, low)
        if direction is None:
            raise ModelRetry(
                "with swing_high and swing_low also pass direction: 'up' when "
                "the low came first, 'down' when the high came first"
            )
        return fibonacci_levels(high, low, direction), "given"
    try:
        fib = s.computed(fibonacci_from_bars)
    except InsufficientData as exc:
        note = s.not_enough(exc)  # raises a retry when a longer period would help
        raise ModelRetry(
            f"{note}; {s.symbol} has no Fibonacci levels here, go on without them"
        ) from exc
    if direction is not None and direction != fib.direction:
        redone = fibonacci_levels(fib.swing_high, fib.swing_low, direction)
        fib = FibLevels(
            redone.swing_high,
            redone.swing_low,
            direction,
            redone.retracements,
            redone.extensions,
            fib.high_date,
            fib.low_date,
        )
    return fib, "detected"


def fib_output(
    ctx: RunContext[ToolDeps],
    s: ChartSeries,
    high: float | None = None,
    low: float | None = None,
    direction: Literal["up", "down"] | None = None,
) -> FibLevelsOut:
    fib, origin = _fib_levels(s, high, low, direction)
    close, span = s.close, fib.swing_high - fib.swing_low
    given_back = fib.swing_high - close if fib.direction == "up" else close - fib.swing_low
    levels = [_fib_level(lv, close) for lv in (*fib.retracements, *fib.extensions)]
    below = [lv for lv in levels if lv.price < close]
    above = [lv for lv in levels if lv.price > close]
    return FibLevelsOut(
        **s.envelope(ctx, "the swing uses closes"),
        period=s.period,
        swing_source=origin,
        direction=fib.direction,
        swing_high=price(fib.swing_high),
        swing_high_date=day(fib.high_date) if fib.high_date is not None else None,
        swing_low=price(fib.swing_low),
        swing_low_date=day(fib.low_date) if fib.low_date is not None else None,
        current_price=price(close),
        retraced_pct=pct(given_back, span),
        retracements=levels[: len(fib.retracements)],
        extensions=levels[len(fib.retracements) :],
        nearest_below=max(below, key=lambda lv: lv.price) if below else None,
        nearest_above=min(above, key=lambda lv: lv.price) if above else None,
    )


@tool
async def calculate_fib_levels(
    ctx: RunContext[ToolDeps],
    symbol: str,
    period: Period = "6mo",
    swing_high: float | None = None,
    swing_low: float | None = None,
    direction: Literal["up", "down"] | None = None,
) -> FibLevelsOut:
    """Fibonacci retracement and extension levels of the most significant swing.

    By default the swing runs between the period's highest high and lowest low ("up" when
    the low came first). Returns the levels with their distance from the current price
    and the nearest level below and above it.

    Args:
        symbol: Ticker, e.g. "MSFT".
        period: How far back to look for the swing.
        swing_high: Explicit swing high (with swing_low and direction), from
            calculate_swing_points; omit to use the detected swing.
        swing_low: Explicit swing low (with swing_high and direction).
        direction: "up" for a move from the low to the high, "down" for high to low;
            overrides the detected direction when given alone.
    """
    s = await load_series(ctx, symbol, period)
    return fib_output(ctx, s, swing_high, swing_low, direction)


# -- find_support_resistance ------------------------------------------------------------


def _level(zone: Zone, close: float, atr: float) -> LevelOut:
    return LevelOut(
        kind=zone.kind,
        price=price(zone.price),
        low=price(zone.low),
        high=price(zone.high),
        strength=zone.label,
        score=round(zone.strength, 2),
        touches=zone.touches,
        last_touch=day(zone.last_touch),
        distance_pct=pct(zone.price - close, close),
        distance_atr=round((zone.price - close) / atr, 2) if atr > 0 else 0.0,
    )


def _extension(s: ChartSeries, support: float | None) -> ExtensionOut:
    ext = s.computed(extension_from_support, support)
    return ExtensionOut(
        support=price(ext.support),
        support_source="zone" if ext.support_source == "given" else ext.support_source,
        atr_multiple=round(ext.atr_multiple, 2),
        risk=ext.risk,
        sma20=price(ext.sma20),
        sma20_atr_multiple=round(ext.sma20_atr_multiple, 2),
    )


def _confluence(s: ChartSeries) -> list[ConfluenceOut]:
    zones = s.computed(confluence_zones)[:_MAX_CONFLUENCE]
    return [
        ConfluenceOut(
            kind=z.kind,
            price=price(z.price),
            low=price(z.low),
            high=price(z.high),
            sources=list(z.sources),
            families=list(z.families),
            distance_pct=round(100 * z.distance_pct, 2),
        )
        for z in zones
    ]


def sr_output(ctx: RunContext[ToolDeps], s: ChartSeries, num_levels: int) -> SupportResistanceOut:
    missing: list[str] = []
    close = s.close
    fields: dict[str, Any] = {"support": [], "resistance": [], "confluence": []}
    try:
        sr = s.computed(support_resistance, num_levels=num_levels)
    except InsufficientData as exc:
        missing.append(s.not_enough(exc))
    else:
        fields["atr"] = round_price(sr.atr)
        fields["support"] = [_level(z, close, sr.atr) for z in sr.support]
        fields["resistance"] = [_level(z, close, sr.atr) for z in sr.resistance]
        try:
            fields["extension"] = _extension(s, sr.support[0].price if sr.support else None)
            fields["confluence"] = _confluence(s)
        except AnalyticsError as exc:  # e.g. a flat series: no range to measure in ATRs
            missing.append(f"extension/confluence: {exc}")
    support, resistance = fields["support"], fields["resistance"]
    return SupportResistanceOut(
        **s.envelope(ctx, "levels and ATR use closes", *missing),
        period=s.period,
        price_basis=s.basis,
        current_price=price(close),
        period_high=price(float(s.highs.max())),
        period_low=price(float(s.lows.min())),
        nearest_support=support[0].price if support else None,
        nearest_resistance=resistance[0].price if resistance else None,
        **fields,
    )


@tool
async def find_support_resistance(
    ctx: RunContext[ToolDeps],
    symbol: str,
    period: Period = "6mo",
    num_levels: Annotated[int, Field(ge=1, le=5)] = 5,
) -> SupportResistanceOut:
    """Support zones below and resistance zones above the current price.

    Zones are clusters of swing highs and lows within half an ATR, scored by touches and
    recency (strong, moderate, weak). Also returns the extension of the price above the
    nearest support in ATR multiples (with a risk label) and confluence zones where
    Fibonacci levels, support/resistance and moving averages agree.

    Args:
        symbol: Ticker, e.g. "MSFT".
        period: How far back to look for swing points.
        num_levels: Strongest zones kept on each side.
    """
    s = await load_series(ctx, symbol, period)
    return sr_output(ctx, s, num_levels)


# -- calculate_trendline ----------------------------------------------------------------


def trendline_output(
    ctx: RunContext[ToolDeps],
    s: ChartSeries,
    kind: Literal["support", "resistance"],
    lookback: int,
) -> TrendlineOut:
    common: dict[str, Any] = {
        **s.envelope(ctx, "swing points use closes"),
        "period": s.period,
        "kind": kind,
        "price_basis": s.basis,
        "current_price": price(s.close),
    }
    try:
        line = s.computed(
            trendline, kind, lookback=lookback, tolerance_atr=_TRENDLINE_TOLERANCE_ATR
        )
    except InsufficientData as exc:
        common["missing"].append(s.not_enough(exc))
        return TrendlineOut(**common, found=False)
    atr = line.tolerance / _TRENDLINE_TOLERANCE_ATR
    span = len(s.frame) - 1 - int(s.frame.index.get_loc(line.start_date))
    # Flat: the line moves less than its own touch tolerance over its whole span.
    direction: Literal["rising", "falling", "flat"] = (
        "flat"
        if abs(line.slope) * span <= line.tolerance
        else "rising"
        if line.slope > 0
        else "falling"
    )
    gap = s.close - line.value_now
    return TrendlineOut(
        **common,
        found=True,
        direction=direction,
        slope_per_bar=round_price(line.slope),
        slope_pct_per_bar=round(100 * line.slope_pct, 3),
        r2=round(line.r2, 3),
        pivots=line.pivots,
        touches=line.touches,
        start_date=day(line.start_date),
        start_price=price(line.start_price),
        value_now=price(line.value_now),
        distance_pct=pct(gap, line.value_now),
        distance_atr=round(gap / atr, 2) if atr > 0 else None,
        broken=line.broken,
    )


@tool
async def calculate_trendline(
    ctx: RunContext[ToolDeps],
    symbol: str,
    kind: Literal["support", "resistance"] = "support",
    period: Period = "6mo",
    lookback: Annotated[int, Field(ge=1, le=20)] = 5,
) -> TrendlineOut:
    """Fit a trendline through the most recent swing lows (support) or highs (resistance).

    Returns its direction (rising, falling, flat), slope per bar, fit quality (r2),
    touches, its value at the last bar, the current price's distance from it (percent and
    ATRs) and whether the price has broken through it.

    Args:
        symbol: Ticker, e.g. "MSFT".
        kind: "support" (through swing lows) or "resistance" (through swing highs).
        period: How far back to look for swing points.
        lookback: Bars on each side a swing point must dominate.
    """
    s = await load_series(ctx, symbol, period)
    return trendline_output(ctx, s, kind, lookback)
