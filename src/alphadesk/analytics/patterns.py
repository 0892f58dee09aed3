"""Chart patterns from swing points: double tops and bottoms, head and shoulders (and
inverse), triangles, channels and flags.

Every detector works on the alternating swing sequence
(:func:`~alphadesk.analytics.swings.zigzag`) and measures sizes in ATRs, so the same
thresholds fit a $5 and a $500 stock. Each pattern carries its key prices and a
confidence in [0, 1]: a weighted sum of how cleanly its geometry matches the textbook
shape plus a fixed share (0.3–0.35) granted only once the breakout has happened
(``status="confirmed"``).

A pattern also has a life (:func:`pattern_life`): it stands until a close crosses its
invalidation level (``invalidated``), reaches its target, or it grows older than
:data:`MAX_AGE_BARS` sessions after its last point or its confirmation (``expired``),
each with the date it ended. A pattern that ended is history, not a signal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import pandas as pd

from ._memo import shared
from ._talib import talib
from .errors import InvalidInput
from .levels import ATR_PERIOD
from .swings import PriceSource, SwingPoint, price_columns, swing_points, zigzag
from .trend import fit_line

__all__ = [
    "MAX_AGE_BARS",
    "ChartPattern",
    "detect_patterns",
    "double_tops_bottoms",
    "flags",
    "head_and_shoulders",
    "pattern_life",
    "triangles_channels",
]

Direction = Literal["bullish", "bearish", "neutral"]
State = Literal["standing", "invalidated", "expired"]

MAX_AGE_BARS = 60
"""Sessions (about three months) a pattern stays in force after its confirmation, or
after its last point while it forms; older, it has expired."""


@dataclass(frozen=True, slots=True)
class ChartPattern:
    """A chart pattern with its key prices.

    Attributes:
        name: ``double_top``, ``double_bottom``, ``head_and_shoulders``,
            ``inverse_head_and_shoulders``, ``ascending_triangle``, ``descending_triangle``,
            ``symmetric_triangle``, ``ascending_channel``, ``descending_channel``,
            ``horizontal_channel``, ``bull_flag`` or ``bear_flag``.
        direction: The move the pattern anticipates on a breakout.
        status: ``confirmed`` once a close crossed ``breakout_level``, else ``forming``.
            Doubles and head and shoulders must break out within as many bars as the
            pattern spans (at least 10); one that has not by then is dropped as expired.
        confidence: Score in [0, 1].
        start_date: First defining point.
        end_date: Last defining point (the last bar for triangles, channels and flags).
        breakout_level: Price whose crossing confirms the pattern: the neckline (at the
            confirming bar, or at the last bar while forming) for doubles and head and
            shoulders, the boundary line's value at the last bar otherwise.
        target: Measured-move price objective.
        invalidation: Price beyond which the pattern is void (the doubled extreme, the
            right shoulder, the opposite boundary, the flag's extreme).
        neckline: Neckline at the pattern's last point (doubles, head and shoulders),
            else ``None``.
        confirmed_date: Date of the confirming close, ``None`` while forming.
        points: The defining swing points as (date, price).
        source: ``high_low`` or ``close`` (close-only series).
        state: ``standing`` while it is in force at the last bar; ``invalidated`` once a
            close crossed ``invalidation`` (after its last point); ``expired`` once a
            close reached ``target`` after confirmation, or after :data:`MAX_AGE_BARS`.
        ended_date: When it was invalidated or expired, ``None`` while standing.
        ended_reason: Why it ended, in words (``""`` while standing).
    """

    name: str
    direction: Direction
    status: Literal["forming", "confirmed"]
    confidence: float
    start_date: pd.Timestamp
    end_date: pd.Timestamp
    breakout_level: float
    target: float
    invalidation: float
    neckline: float | None
    confirmed_date: pd.Timestamp | None
    points: tuple[tuple[pd.Timestamp, float], ...]
    source: PriceSource
    state: State = "standing"
    ended_date: pd.Timestamp | None = None
    ended_reason: str = ""


@dataclass(frozen=True, slots=True)
class _Ctx:
    frame: pd.DataFrame
    atrs: np.ndarray  # ATR at each bar (the first valid value before it is defined)
    zz: list[SwingPoint]
    source: PriceSource
    # The frame's columns as arrays, read once: every candidate pattern reads them.
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray

    @property
    def atr(self) -> float:
        return float(self.atrs[-1])

    def window(self, after: int, horizon: int) -> tuple[np.ndarray, bool]:
        """Closes in the ``horizon`` bars after ``after``; whether that span has passed."""
        closes = self.close[after + 1 : after + 1 + horizon]
        return closes, len(self.frame) - 1 - after > horizon


def _backfilled(values: np.ndarray) -> np.ndarray:
    """Each NaN replaced by the next valid value (trailing NaNs stay)."""
    n = len(values)
    at = np.where(np.isnan(values), n, np.arange(n))
    following = np.minimum.accumulate(at[::-1])[::-1]
    return np.where(following < n, values[np.minimum(following, n - 1)], np.nan)


@shared
def _context(bars: pd.DataFrame, lookback: int) -> _Ctx:
    frame, source = price_columns(bars, "chart patterns", max(2 * lookback + 1, 15))
    high, low, close = (frame[c].to_numpy() for c in ("high", "low", "close"))
    atrs = _backfilled(talib.ATR(high, low, close, timeperiod=ATR_PERIOD))
    zz = zigzag(swing_points(bars, lookback)) if atrs[-1] > 0 else []
    return _Ctx(frame, atrs, zz, source, high, low, close)


def _clip(x: float) -> float:
    return float(min(max(x, 0.0), 1.0))


def _first_cross(values: np.ndarray, level: np.ndarray | float, s: float) -> int | None:
    """First position where ``s·(value − level) > 0``."""
    hits = np.flatnonzero(s * (values - level) > 0)
    return int(hits[0]) if hits.size else None


def _points(*pts: SwingPoint) -> tuple[tuple[pd.Timestamp, float], ...]:
    return tuple((p.date, p.price) for p in pts)


def _double(ctx: _Ctx, trio: list[SwingPoint], prior: SwingPoint | None) -> ChartPattern | None:
    first, middle, second = trio
    bottom = first.kind == "low"
    s = 1.0 if bottom else -1.0  # s·price rises out of the pattern
    atr = float(ctx.atrs[second.index])
    extreme = min(first.price, second.price) if bottom else max(first.price, second.price)
    gap = abs(first.price - second.price)
    depth = abs(middle.price - (first.price + second.price) / 2)
    if not atr > 0 or gap > 1.0 * atr or depth < 2.0 * atr:
        return None
    after, expired = ctx.window(second.index, max(second.index - first.index, 10))
    hit = _first_cross(after, middle.price, s)
    broke = _first_cross(after[:hit], extreme - s * 0.5 * atr, -s)
    if broke is not None or (hit is None and expired):
        return None  # ran through the doubled extreme, or never broke out in time
    prior_trend = prior is not None and s * (prior.price - middle.price) > 0
    confidence = (
        0.3 * (1 - gap / atr)
        + 0.2 * _clip(depth / (6 * atr))
        + 0.15 * prior_trend
        + 0.35 * (hit is not None)
    )
    dates = ctx.frame.index
    return ChartPattern(
        name="double_bottom" if bottom else "double_top",
        direction="bullish" if bottom else "bearish",
        status="forming" if hit is None else "confirmed",
        confidence=_clip(confidence),
        start_date=first.date,
        end_date=second.date,
        breakout_level=middle.price,
        target=middle.price + s * depth,
        invalidation=extreme,
        neckline=middle.price,
        confirmed_date=None if hit is None else dates[second.index + 1 + hit],
        points=_points(first, middle, second),
        source=ctx.source,
    )


def _recent(patterns: list[ChartPattern], ctx: _Ctx, within_bars: int | None) -> list[ChartPattern]:
    if within_bars is None:
        return patterns
    cutoff = ctx.frame.index[max(len(ctx.frame) - within_bars, 0)]
    return [p for p in patterns if p.end_date >= cutoff]


def double_tops_bottoms(
    bars: pd.DataFrame, lookback: int = 5, within_bars: int | None = None
) -> list[ChartPattern]:
    """Double tops and double bottoms.

    Two swing lows (highs) within 1 ATR of each other, separated by a swing high (low) at
    least 2 ATRs away; the neckline is that middle swing, the target the neckline plus
    the pattern's depth. A close more than half an ATR through the doubled extreme before
    the breakout voids the pattern.

    Args:
        bars: Daily bars (at least 15).
        lookback: Swing-point lookback.
        within_bars: Keep only patterns completed within this many recent bars.

    Returns:
        The patterns found, in date order.
    """
    ctx = _context(bars, lookback)
    found = []
    for i in range(len(ctx.zz) - 2):
        p = _double(ctx, ctx.zz[i : i + 3], ctx.zz[i - 1] if i > 0 else None)
        if p is not None:
            found.append(p)
    return _recent(found, ctx, within_bars)


def _head_shoulders(ctx: _Ctx, five: list[SwingPoint]) -> ChartPattern | None:
    ls, n1, head, n2, rs = five
    top = head.kind == "high"
    s = 1.0 if top else -1.0  # s·price is highest at the head
    atr = float(ctx.atrs[rs.index])
    slope = (n2.price - n1.price) / (n2.index - n1.index)

    def neck(i: float | np.ndarray) -> Any:
        return n1.price + slope * (i - n1.index)

    prominence = s * head.price - max(s * ls.price, s * rs.price)
    height = s * (head.price - neck(head.index))
    asym = abs(ls.price - rs.price)
    shoulders_out = min(s * (ls.price - neck(ls.index)), s * (rs.price - neck(rs.index)))
    if (
        not atr > 0
        or prominence < 0.5 * atr
        or height < 2 * atr
        or asym > 1.5 * atr
        or shoulders_out <= 0
    ):
        return None
    after, expired = ctx.window(rs.index, max(rs.index - ls.index, 10))
    hit = _first_cross(after, neck(np.arange(rs.index + 1, rs.index + 1 + after.size)), -s)
    if hit is None and expired:
        return None
    at = (len(ctx.frame) - 1) if hit is None else rs.index + 1 + hit
    tilt = abs(slope) * (n2.index - n1.index) / height
    confidence = (
        0.25 * (1 - asym / (1.5 * atr))
        + 0.2 * _clip(prominence / (2 * atr))
        + 0.2 * (1 - _clip(tilt))
        + 0.35 * (hit is not None)
    )
    return ChartPattern(
        name="head_and_shoulders" if top else "inverse_head_and_shoulders",
        direction="bearish" if top else "bullish",
        status="forming" if hit is None else "confirmed",
        confidence=_clip(confidence),
        start_date=ls.date,
        end_date=rs.date,
        breakout_level=float(neck(at)),
        target=float(neck(at) - s * height),
        invalidation=rs.price,
        neckline=float(neck(rs.index)),
        confirmed_date=None if hit is None else ctx.frame.index[at],
        points=_points(*five),
        source=ctx.source,
    )


def head_and_shoulders(
    bars: pd.DataFrame, lookback: int = 5, within_bars: int | None = None
) -> list[ChartPattern]:
    """Head and shoulders tops and inverse (bottom) head and shoulders.

    Five alternating swings: a head at least half an ATR beyond both shoulders and 2
    ATRs from the neckline (the line through the two intervening swings), shoulders
    within 1.5 ATRs of each other and on the outer side of the neckline. The target is
    the neckline at the breakout minus (plus) the head's height above (below) it.

    Args:
        bars: Daily bars (at least 15).
        lookback: Swing-point lookback.
        within_bars: Keep only patterns completed within this many recent bars.

    Returns:
        The patterns found, in date order.
    """
    ctx = _context(bars, lookback)
    found = [
        p
        for i in range(len(ctx.zz) - 4)
        if (p := _head_shoulders(ctx, ctx.zz[i : i + 5])) is not None
    ]
    return _recent(found, ctx, within_bars)


@dataclass(frozen=True, slots=True)
class _Lines:
    upper: tuple[float, float]  # slope, intercept
    lower: tuple[float, float]
    fit: float  # mean absolute residual in ATRs
    start: int
    pivots: list[SwingPoint]

    def at(self, line: tuple[float, float], i: float) -> float:
        return line[0] * i + line[1]


def _boundary_lines(ctx: _Ctx, count: int) -> _Lines | None:
    pivots = ctx.zz[-count:]
    highs = [p for p in pivots if p.kind == "high"]
    lows = [p for p in pivots if p.kind == "low"]
    if len(highs) < 2 or len(lows) < 2:
        return None
    fits = []
    resid = []
    for group in (highs, lows):
        x = np.array([p.index for p in group], dtype=np.float64)
        y = np.array([p.price for p in group])
        slope, intercept, _ = fit_line(x, y)
        fits.append((slope, intercept))
        resid.append(np.abs(y - (slope * x + intercept)))
    fit = float(np.concatenate(resid).mean()) / ctx.atr
    return _Lines(fits[0], fits[1], fit, pivots[0].index, pivots)


def _classify(up: float, low: float, flat: float) -> tuple[str, Direction] | None:
    """Name a two-line structure from each line's total change in ATRs."""
    up_flat, low_flat = abs(up) <= flat, abs(low) <= flat
    if up_flat and low > flat:
        return "ascending_triangle", "bullish"
    if low_flat and up < -flat:
        return "descending_triangle", "bearish"
    if up < -flat and low > flat:
        return "symmetric_triangle", "neutral"
    if abs(up - low) <= flat:
        if up_flat and low_flat:
            return "horizontal_channel", "neutral"
        return ("ascending_channel", "bullish") if up > 0 else ("descending_channel", "bearish")
    return None


def triangles_channels(
    bars: pd.DataFrame, lookback: int = 5, pivots: int = 6, flat_atr: float = 1.0
) -> list[ChartPattern]:
    """The triangle or channel formed by the most recent swings, if any.

    Lines are fitted through the last ``pivots`` swing highs and lows (at least two of
    each). A line is flat when it moves less than ``flat_atr`` ATRs over the pattern;
    ascending triangle: flat top, rising bottom; descending: flat bottom, falling top;
    symmetric: falling top, rising bottom; channel: parallel lines (changes within
    ``flat_atr`` of each other). The swings must lie within 0.75 ATR of their lines on
    average, and triangles must still converge at the last bar. A
    symmetric triangle takes the direction of the move that preceded it.

    Args:
        bars: Daily bars (at least 15).
        lookback: Swing-point lookback.
        pivots: Most recent alternating swing points used (>= 4).
        flat_atr: Flatness threshold in ATRs.

    Returns:
        A list with the pattern, or empty.
    """
    if not isinstance(pivots, int) or pivots < 4 or not flat_atr > 0:
        raise InvalidInput("pivots must be an integer >= 4 and flat_atr positive")
    ctx = _context(bars, lookback)
    lines = _boundary_lines(ctx, pivots)
    if lines is None or lines.fit > 0.75:  # swings too scattered to draw two lines
        return []
    last = len(ctx.frame) - 1
    span = last - lines.start
    kind = _classify(lines.upper[0] * span / ctx.atr, lines.lower[0] * span / ctx.atr, flat_atr)
    width0 = lines.at(lines.upper, lines.start) - lines.at(lines.lower, lines.start)
    width_now = lines.at(lines.upper, last) - lines.at(lines.lower, last)
    if kind is None or width0 <= 0 or width_now <= 0:
        return []
    name, direction = kind
    if name == "symmetric_triangle":
        before = ctx.close[max(lines.start - span, 0) : lines.start + 1]
        direction = "bullish" if before[-1] >= before[0] else "bearish"
    s = -1.0 if direction == "bearish" else 1.0
    breakout = lines.at(lines.upper if s > 0 else lines.lower, last)
    opposite = lines.at(lines.lower if s > 0 else lines.upper, last)
    confirmed = s * (ctx.close[-1] - breakout) > 0
    confidence = (
        0.4 * (1 - _clip(lines.fit)) + 0.3 * _clip((len(lines.pivots) - 3) / 3) + 0.3 * confirmed
    )
    return [
        ChartPattern(
            name=name,
            direction=direction,
            status="confirmed" if confirmed else "forming",
            confidence=_clip(confidence),
            start_date=lines.pivots[0].date,
            end_date=ctx.frame.index[-1],
            breakout_level=breakout,
            target=breakout + s * width0,
            invalidation=opposite,
            neckline=None,
            confirmed_date=ctx.frame.index[-1] if confirmed else None,
            points=_points(*lines.pivots),
            source=ctx.source,
        )
    ]


def _oriented(ctx: _Ctx, bull: bool) -> tuple[np.ndarray, np.ndarray]:
    """Highs and lows oriented so that the pole always rises (a bear flag's negated)."""
    hi = ctx.high if bull else -ctx.low
    lo = ctx.low if bull else -ctx.high
    return hi, lo


def _flag(
    ctx: _Ctx,
    oriented: tuple[np.ndarray, np.ndarray],
    length: int,
    bull: bool,
    pole_atr: float,
    max_pole_bars: int,
) -> ChartPattern | None:
    s = 1.0 if bull else -1.0  # oriented prices: the pole always rises
    hi, lo = oriented
    n, top = len(hi), len(hi) - length - 1
    start = max(top - max_pole_bars, 0)
    base = start + int(np.argmin(lo[start : top + 1]))
    pole = hi[top] - lo[base]
    flag_hi, flag_lo = hi[top + 1 :], lo[top + 1 :]
    if (
        top - base < 2
        or pole < pole_atr * ctx.atr
        or hi[start : top + 1].max() > hi[top]
        or flag_hi.max() > hi[top] + 0.25 * ctx.atr
    ):
        return None
    retrace = (hi[top] - flag_lo.min()) / pole
    x = np.arange(top + 1, n, dtype=np.float64)
    slope, intercept, _ = fit_line(x, flag_hi)
    drift = slope * length / ctx.atr
    if retrace > 0.5 or drift > 0.5:
        return None
    breakout = slope * (n - 1) + intercept
    close = s * ctx.close[-1]
    confirmed = bool(close > breakout)
    confidence = 0.35 * _clip(pole / (8 * ctx.atr)) + 0.3 * (1 - retrace / 0.5) + 0.35 * confirmed
    dates = ctx.frame.index
    return ChartPattern(
        name="bull_flag" if bull else "bear_flag",
        direction="bullish" if bull else "bearish",
        status="confirmed" if confirmed else "forming",
        confidence=_clip(confidence),
        start_date=dates[base],
        end_date=dates[-1],
        breakout_level=s * breakout,
        target=s * (breakout + pole),
        invalidation=s * float(flag_lo.min()),
        neckline=None,
        confirmed_date=dates[-1] if confirmed else None,
        points=((dates[base], s * lo[base]), (dates[top], s * hi[top])),
        source=ctx.source,
    )


def flags(
    bars: pd.DataFrame,
    pole_atr: float = 4.0,
    max_pole_bars: int = 15,
    flag_bars: tuple[int, int] = (5, 20),
) -> list[ChartPattern]:
    """A bull or bear flag ending at the last bar, if any.

    A pole of at least ``pole_atr`` ATRs within ``max_pole_bars`` bars, then a
    consolidation of ``flag_bars`` bars that retraces at most half the pole, stays below
    the pole's top (above its bottom for a bear flag) and drifts against the pole or
    sideways. The breakout level is the consolidation's upper (lower) line at the last
    bar; the target adds the pole's height. Of the candidate lengths the most confident
    flag of each direction is kept.

    Args:
        bars: Daily bars.
        pole_atr: Minimum pole height in ATRs.
        max_pole_bars: Longest pole in bars.
        flag_bars: Shortest and longest consolidation in bars.

    Returns:
        Zero, one or two patterns (bull and bear).
    """
    lo_len, hi_len = flag_bars
    if not 3 <= lo_len <= hi_len or max_pole_bars < 3 or not pole_atr > 0:
        raise InvalidInput(
            "flag_bars must be (min, max) with 3 <= min <= max; "
            "max_pole_bars >= 3; pole_atr positive"
        )
    ctx = _context(bars, 2)
    found = []
    for bull in (True, False):
        oriented = _oriented(ctx, bull)  # once for every candidate length
        cands = [
            f
            for length in range(lo_len, hi_len + 1)
            if length + 3 < len(ctx.frame)
            and ctx.atr > 0
            and (f := _flag(ctx, oriented, length, bull, pole_atr, max_pole_bars)) is not None
        ]
        if cands:
            found.append(max(cands, key=lambda p: p.confidence))
    return found


def pattern_life(pattern: ChartPattern, close: pd.Series) -> ChartPattern:
    """``pattern`` with its state at the last bar of ``close`` (see :class:`ChartPattern`).

    From the bar after its last point, the first close beyond the invalidation level
    invalidates it; after its confirmation, the first close at or beyond the target
    fulfils it (expired: the move it announced is done). With neither, it expires
    :data:`MAX_AGE_BARS` sessions after its confirmation (or its last point while it is
    still forming).
    """
    s = -1.0 if pattern.direction == "bearish" else 1.0  # s·price rises on the breakout
    dates = close.index
    values = close.to_numpy(dtype=np.float64)
    end = int(dates.searchsorted(pattern.end_date, side="right"))
    invalid = _first_cross(values[end:], pattern.invalidation, -s)
    ends: list[tuple[int, State, str]] = []
    if invalid is not None:
        crossed = f"closed beyond the invalidation level {pattern.invalidation:.2f}"
        ends.append((end + invalid, "invalidated", crossed))
    start = end
    if pattern.confirmed_date is not None:
        start = int(dates.searchsorted(pattern.confirmed_date, side="left"))
        reached = np.flatnonzero(s * (values[start:] - pattern.target) >= 0)
        if reached.size:
            done = f"reached its target {pattern.target:.2f}"
            ends.append((start + int(reached[0]), "expired", done))
    if len(values) - 1 - start > MAX_AGE_BARS:
        ends.append((start + MAX_AGE_BARS, "expired", f"older than {MAX_AGE_BARS} sessions"))
    if not ends:
        return pattern
    at, state, reason = min(ends, key=lambda item: item[0])
    return replace(pattern, state=state, ended_date=dates[at], ended_reason=reason)


def detect_patterns(
    bars: pd.DataFrame, lookback: int = 5, within_bars: int | None = None
) -> list[ChartPattern]:
    """Every chart pattern this module recognises, most confident first, each with its
    life at the last bar (:func:`pattern_life`).

    Args:
        bars: Daily bars (at least 15).
        lookback: Swing-point lookback.
        within_bars: Keep only double and head-and-shoulders patterns completed within
            this many recent bars (triangles, channels and flags always end at the last
            bar).

    Returns:
        Patterns sorted by confidence, highest first.
    """
    found = [
        *double_tops_bottoms(bars, lookback, within_bars),
        *head_and_shoulders(bars, lookback, within_bars),
        *triangles_channels(bars, lookback),
        *flags(bars),
    ]
    close = _context(bars, lookback).frame["close"]
    return sorted((pattern_life(p, close) for p in found), key=lambda p: -p.confidence)
