"""Fitted trendlines through swing points, and trend direction and quality."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from ._bars import has_columns
from ._talib import talib
from .errors import InsufficientData, InvalidInput
from .levels import last_atr
from .swings import PriceSource, price_columns, swing_points

__all__ = ["TrendAssessment", "Trendline", "fit_line", "trend_assessment", "trendline"]


def fit_line(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Least-squares line ``y = slope·x + intercept`` and its r².

    Args:
        x: Abscissae (at least two distinct values).
        y: Ordinates.

    Returns:
        ``(slope, intercept, r2)``; r² is 1 for a perfect fit, including a flat one.
    """
    slope, intercept = np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)
    resid = y - (slope * x + intercept)
    ss_res, ss_tot = float(resid @ resid), float(((y - y.mean()) ** 2).sum())
    scale = max(float(np.abs(y).max()), 1.0) ** 2 * 1e-20
    r2 = 1.0 if ss_tot <= scale else max(0.0, 1.0 - ss_res / ss_tot)
    return float(slope), float(intercept), r2


@dataclass(frozen=True, slots=True)
class Trendline:
    """A straight line fitted through recent swing lows (support) or highs (resistance).

    Attributes:
        kind: ``support`` (through swing lows) or ``resistance`` (through swing highs).
        slope: Price change per bar.
        slope_pct: ``slope / value_now``: the fractional change per bar.
        r2: Coefficient of determination of the fit, in [0, 1].
        pivots: Swing points fitted.
        touches: Fitted swing points within the tolerance of the line.
        start_date: Date of the first fitted swing point.
        start_price: Line value there.
        end_date: Date of the last bar.
        value_now: Line value at the last bar.
        tolerance: Touch tolerance in price units (``tolerance_atr · ATR``).
        broken: The last close lies beyond the line (below support, above resistance) by
            more than the tolerance.
        source: ``high_low`` or ``close``.
    """

    kind: Literal["support", "resistance"]
    slope: float
    slope_pct: float
    r2: float
    pivots: int
    touches: int
    start_date: pd.Timestamp
    start_price: float
    end_date: pd.Timestamp
    value_now: float
    tolerance: float
    broken: bool
    source: PriceSource


def trendline(
    bars: pd.DataFrame,
    kind: Literal["support", "resistance"] = "support",
    lookback: int = 5,
    max_pivots: int = 5,
    tolerance_atr: float = 0.5,
) -> Trendline:
    """Fit a support or resistance trendline through the most recent swing points.

    Args:
        bars: Daily bars (``high``/``low`` if present, else ``close``; at least 15).
        kind: ``support`` (swing lows) or ``resistance`` (swing highs).
        lookback: Swing-point lookback in bars on each side.
        max_pivots: Most recent swing points fitted (>= 2).
        tolerance_atr: Touch tolerance in ATRs.

    Returns:
        The fitted line.

    Raises:
        InsufficientData: Fewer than two swing points of the kind.
    """
    if kind not in ("support", "resistance"):
        raise InvalidInput(f"kind must be 'support' or 'resistance', got {kind!r}")
    if not isinstance(max_pivots, int) or max_pivots < 2 or not tolerance_atr > 0:
        raise InvalidInput("max_pivots must be an integer >= 2 and tolerance_atr positive")
    atr_value, source = last_atr(bars)
    swings = swing_points(bars, lookback)
    pivots = (swings.lows if kind == "support" else swings.highs)[-max_pivots:]
    unit = "swing lows" if kind == "support" else "swing highs"
    if len(pivots) < 2:
        raise InsufficientData(f"{kind} trendline", 2, len(pivots), unit=unit)
    x = np.array([p.index for p in pivots], dtype=np.float64)
    y = np.array([p.price for p in pivots])
    slope, intercept, r2 = fit_line(x, y)
    frame, _ = price_columns(bars, "trendline", 1)
    n, close, tol = len(frame), float(frame["close"].iloc[-1]), tolerance_atr * atr_value
    value_now = slope * (n - 1) + intercept
    gap = close - value_now
    return Trendline(
        kind=kind,
        slope=slope,
        slope_pct=slope / value_now if value_now > 0 else math.nan,
        r2=r2,
        pivots=len(pivots),
        touches=int((np.abs(y - (slope * x + intercept)) <= tol).sum()),
        start_date=pivots[0].date,
        start_price=slope * x[0] + intercept,
        end_date=frame.index[-1],
        value_now=value_now,
        tolerance=tol,
        broken=bool(gap < -tol) if kind == "support" else bool(gap > tol),
        source=source,
    )


@dataclass(frozen=True, slots=True)
class TrendAssessment:
    """Trend direction and quality from moving averages, their slope, ADX and linearity.

    Attributes:
        direction: ``up``, ``down`` or ``sideways``.
        quality: ``strong``, ``moderate`` or ``weak``.
        score: Direction score in [−1, 1]: the mean of the moving-average alignment
            (close > fast > mid > slow scores +1 per pair, the reverse −1) and the
            mid-average slope (tanh of its slope per bar over 0.1 %).
        close: Last close.
        sma_fast: Fast simple moving average.
        sma_mid: Mid simple moving average.
        sma_slow: Slow simple moving average, ``None`` when the history is shorter.
        mid_slope_pct: Slope of the mid average per bar, as a fraction, over the last
            ``slope_bars`` bars.
        adx: ADX(14), ``None`` on a close-only series.
        r2: r² of a straight-line fit of log close over the last ``mid`` bars.
        basis: What the assessment used, e.g. ``("sma_20", "sma_50", "adx_14", "r2_50")``.
    """

    direction: Literal["up", "down", "sideways"]
    quality: Literal["strong", "moderate", "weak"]
    score: float
    close: float
    sma_fast: float
    sma_mid: float
    sma_slow: float | None
    mid_slope_pct: float
    adx: float | None
    r2: float
    basis: tuple[str, ...]


def _alignment(values: list[float]) -> float:
    return float(np.mean([np.sign(a - b) for a, b in itertools.pairwise(values)]))


def _quality(score: float, adx: float | None, r2: float) -> Literal["strong", "moderate", "weak"]:
    strength = adx >= 25 if adx is not None else r2 >= 0.7
    some = adx >= 18 if adx is not None else r2 >= 0.4
    if abs(score) >= 0.6 and strength:
        return "strong"
    return "moderate" if abs(score) >= 0.3 and some else "weak"


def trend_assessment(
    bars: pd.DataFrame, fast: int = 20, mid: int = 50, slow: int = 200, slope_bars: int = 10
) -> TrendAssessment:
    """Trend direction and quality.

    Direction is ``up`` when the score exceeds 0.3, ``down`` below −0.3, else
    ``sideways``. Quality is ``strong`` when ``|score| >= 0.6`` and ADX >= 25, ``moderate``
    when ``|score| >= 0.3`` and ADX >= 18, else ``weak``; on a close-only series the r² of
    the log-price fit (>= 0.7, >= 0.4) stands in for ADX.

    Args:
        bars: Daily bars (at least ``mid + slope_bars`` of them).
        fast: Fast SMA period.
        mid: Mid SMA period.
        slow: Slow SMA period (used only when the history is long enough).
        slope_bars: Bars over which the mid SMA's slope is measured.

    Returns:
        The assessment.

    Raises:
        InsufficientData: Fewer than ``mid + slope_bars`` bars.
    """
    if not 2 <= fast < mid < slow or slope_bars < 1:
        raise InvalidInput("periods must satisfy 2 <= fast < mid < slow and slope_bars >= 1")
    frame, source = price_columns(bars, f"trend ({fast}/{mid}/{slow})", mid + slope_bars)
    close = frame["close"].to_numpy()
    sma_mid_series = talib.SMA(close, timeperiod=mid)
    sma_f, sma_m = float(close[-fast:].mean()), float(sma_mid_series[-1])
    sma_s = float(close[-slow:].mean()) if len(close) >= slow else None
    basis = [f"sma_{fast}", f"sma_{mid}"] + ([f"sma_{slow}"] if sma_s is not None else [])
    mid_slope = (sma_m - float(sma_mid_series[-1 - slope_bars])) / slope_bars / sma_m
    chain = [float(close[-1]), sma_f, sma_m] + ([sma_s] if sma_s is not None else [])
    score = 0.5 * _alignment(chain) + 0.5 * math.tanh(mid_slope / 0.001)
    adx_value = None
    if source == "high_low" and has_columns(bars, ["high", "low"]) and len(close) >= 28:
        adx_value = float(
            talib.ADX(frame["high"].to_numpy(), frame["low"].to_numpy(), close, timeperiod=14)[-1]
        )
        basis.append("adx_14")
    _, _, r2 = fit_line(np.arange(mid, dtype=np.float64), np.log(close[-mid:]))
    basis.append(f"r2_{mid}")
    direction: Literal["up", "down", "sideways"] = (
        "up" if score > 0.3 else "down" if score < -0.3 else "sideways"
    )
    return TrendAssessment(
        direction,
        _quality(score, adx_value, r2),
        round(score, 6),
        float(close[-1]),
        sma_f,
        sma_m,
        sma_s,
        mid_slope,
        adx_value,
        r2,
        tuple(basis),
    )
