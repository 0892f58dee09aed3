"""Swing highs and lows (fractals), the alternating swing sequence, Fibonacci levels."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from ._bars import _validated, has_columns, require_bars
from ._memo import shared
from .errors import AnalyticsError, InsufficientData, InvalidInput

__all__ = [
    "EXTENSION_RATIOS",
    "RETRACEMENT_RATIOS",
    "FibLevel",
    "FibLevels",
    "SwingPoint",
    "SwingPoints",
    "fibonacci_from_bars",
    "fibonacci_levels",
    "price_columns",
    "swing_points",
    "zigzag",
]

RETRACEMENT_RATIOS = (0.0, 0.236, 0.382, 0.5, 0.618, 0.786, 1.0)
EXTENSION_RATIOS = (1.272, 1.414, 1.618, 2.0, 2.618)

PriceSource = Literal["high_low", "close"]
_HLC = pd.Index(["high", "low", "close"], dtype=object)


@dataclass(frozen=True, slots=True)
class SwingPoint:
    """A confirmed swing (fractal) high or low.

    Attributes:
        kind: ``high`` or ``low``.
        price: The bar's high (or low; the close on a close-only series).
        index: Position of the bar in the frame.
        date: Date of the bar.
    """

    kind: Literal["high", "low"]
    price: float
    index: int
    date: pd.Timestamp


@dataclass(frozen=True, slots=True)
class SwingPoints:
    """Swing highs and lows of a series.

    Attributes:
        highs: Swing highs in date order.
        lows: Swing lows in date order.
        lookback: Bars on each side that a swing must dominate.
        source: ``high_low`` when bar highs and lows were used, ``close`` on a
            close-only series.
    """

    highs: tuple[SwingPoint, ...]
    lows: tuple[SwingPoint, ...]
    lookback: int
    source: PriceSource

    def ordered(self) -> list[SwingPoint]:
        """Highs and lows merged in date order."""
        return sorted((*self.highs, *self.lows), key=lambda p: (p.index, p.kind))


def price_columns(bars: pd.DataFrame, what: str, min_bars: int) -> tuple[pd.DataFrame, PriceSource]:
    """Validated ``high``, ``low``, ``close``; on a close-only series the close three times.

    Args:
        bars: Daily bars.
        what: Computation name for error messages.
        min_bars: Minimum number of bars.

    Returns:
        The frame (shared: do not change it) and which prices it holds.
    """
    try:
        frame, source = _shared_prices(bars)
    except AnalyticsError:
        return _prices(bars, what, min_bars)  # the same error, in the caller's words
    if len(frame) < min_bars:
        raise InsufficientData(what, min_bars, len(frame))
    return frame, source


@shared
def _shared_prices(bars: pd.DataFrame) -> tuple[pd.DataFrame, PriceSource]:
    """``price_columns`` at any length, once per frame: every level, pattern and trend
    computation over a frame starts from it."""
    return _prices(bars, "prices", 0)


def _prices(bars: pd.DataFrame, what: str, min_bars: int) -> tuple[pd.DataFrame, PriceSource]:
    if has_columns(bars, ["high", "low"]):
        return require_bars(
            bars, ["high", "low", "close"], min_bars=min_bars, what=what
        ), "high_low"
    close = _validated(bars, ["close"], min_bars=min_bars, what=what)[:, 0]
    # One block from an array: building the frame from a dict of series costs much more.
    values = np.column_stack([close, close, close])
    return pd.DataFrame(values, index=bars.index, columns=_HLC), "close"


def _fractals(values: np.ndarray, lookback: int, highs: bool) -> np.ndarray:
    """Positions where the value strictly beats the ``lookback`` bars before it and is at
    least as extreme as the ``lookback`` bars after it (the first bar of a plateau)."""
    v = values * (1.0 if highs else -1.0)
    n = len(v)
    if n <= 2 * lookback:
        return np.flatnonzero(np.zeros(n, dtype=bool))
    # window[j] = max(v[j : j + lookback]); a NaN in it makes it NaN, which beats nothing.
    window = np.lib.stride_tricks.sliding_window_view(v, lookback).max(axis=1)
    inner = v[lookback : n - lookback]
    beats = (inner > window[: n - 2 * lookback]) & (inner >= window[lookback + 1 :])
    return np.flatnonzero(beats) + lookback


@shared
def swing_points(bars: pd.DataFrame, lookback: int = 5) -> SwingPoints:
    """Swing highs and lows: bars whose high (low) dominates ``lookback`` bars on each side.

    A swing high beats the ``lookback`` previous highs strictly and is not exceeded by the
    ``lookback`` following highs, so a flat plateau yields at most one swing and a flat
    series none. The last ``lookback`` bars cannot be confirmed and never hold a swing.
    A close-only series uses the close (reported as ``source="close"``).

    Args:
        bars: Daily bars (``high``/``low`` if present, else ``close``).
        lookback: Bars on each side (>= 1).

    Returns:
        The swing highs and lows.

    Raises:
        InsufficientData: Fewer than ``2 * lookback + 1`` bars.
    """
    if not isinstance(lookback, int) or lookback < 1:
        raise InvalidInput(f"lookback must be a positive integer, got {lookback!r}")
    frame, source = price_columns(bars, f"swing points (lookback {lookback})", 2 * lookback + 1)
    dates = frame.index

    def points(kind: Literal["high", "low"]) -> tuple[SwingPoint, ...]:
        values = frame[kind].to_numpy()
        idx = _fractals(values, lookback, highs=kind == "high")
        prices = values[idx].tolist()
        return tuple(
            SwingPoint(kind, p, i, d)
            for p, i, d in zip(prices, idx.tolist(), dates[idx], strict=True)
        )

    return SwingPoints(points("high"), points("low"), lookback, source)


def zigzag(swings: SwingPoints) -> list[SwingPoint]:
    """Alternating high/low sequence: of consecutive swings of one kind keep the extreme.

    Args:
        swings: Output of :func:`swing_points`.

    Returns:
        Swing points in date order, alternating between highs and lows.
    """
    out: list[SwingPoint] = []
    for p in swings.ordered():
        if out and out[-1].kind == p.kind:
            better = p.price > out[-1].price if p.kind == "high" else p.price < out[-1].price
            if better:
                out[-1] = p
        else:
            out.append(p)
    return out


@dataclass(frozen=True, slots=True)
class FibLevel:
    """One Fibonacci level.

    Attributes:
        ratio: Fraction of the swing (0.618, 1.618...).
        label: Percentage label, e.g. ``"61.8%"``.
        price: Price of the level.
        kind: ``retracement`` (inside the swing) or ``extension`` (beyond its end).
    """

    ratio: float
    label: str
    price: float
    kind: Literal["retracement", "extension"]


@dataclass(frozen=True, slots=True)
class FibLevels:
    """Fibonacci retracements and extensions of one swing.

    Attributes:
        swing_high: Top of the swing.
        swing_low: Bottom of the swing.
        direction: ``up`` (low then high: retracements measured down from the high,
            extensions above it) or ``down`` (high then low: retracements up from the low,
            extensions below it).
        retracements: Levels at :data:`RETRACEMENT_RATIOS`, from 0 % (the swing's end)
            to 100 % (its start).
        extensions: Levels at :data:`EXTENSION_RATIOS` beyond the swing's end (only those
            above zero).
        high_date: Date of the swing high when measured from bars.
        low_date: Date of the swing low when measured from bars.
    """

    swing_high: float
    swing_low: float
    direction: Literal["up", "down"]
    retracements: tuple[FibLevel, ...]
    extensions: tuple[FibLevel, ...]
    high_date: pd.Timestamp | None = None
    low_date: pd.Timestamp | None = None


def _label(ratio: float) -> str:
    return f"{ratio * 100:.1f}%".replace(".0%", "%")


def fibonacci_levels(
    swing_high: float, swing_low: float, direction: Literal["up", "down"]
) -> FibLevels:
    """Fibonacci retracement and extension levels of a swing.

    Args:
        swing_high: Swing high price.
        swing_low: Swing low price (below the high).
        direction: ``up`` for a move from the low to the high, ``down`` for high to low.

    Returns:
        The levels; for ``up`` retracement ``r`` is ``high − r·range`` and extension ``e``
        is ``low + e·range``; for ``down`` the mirror image.

    Raises:
        InvalidInput: Non-finite prices, a high not above the low, or a bad direction.
    """
    if direction not in ("up", "down"):
        raise InvalidInput(f"direction must be 'up' or 'down', got {direction!r}")
    if not (math.isfinite(swing_high) and math.isfinite(swing_low) and swing_low > 0):
        raise InvalidInput("swing prices must be positive and finite")
    if swing_high <= swing_low:
        raise InvalidInput(
            f"swing_high ({swing_high}) must be above swing_low ({swing_low}); "
            "a swing without range has no Fibonacci levels"
        )
    span = swing_high - swing_low
    end, start, step = (
        (swing_high, swing_low, -span) if direction == "up" else (swing_low, swing_high, span)
    )
    # Weighted, not end + step * r: 0 % and 100 % are then the swing's own prices exactly.
    retr = tuple(
        FibLevel(r, _label(r), end * (1 - r) + start * r, "retracement") for r in RETRACEMENT_RATIOS
    )
    ext = tuple(
        FibLevel(e, _label(e), start - step * e, "extension")
        for e in EXTENSION_RATIOS
        if start - step * e > 0
    )
    return FibLevels(float(swing_high), float(swing_low), direction, retr, ext)


def fibonacci_from_bars(bars: pd.DataFrame, window: int | None = None) -> FibLevels:
    """Fibonacci levels of the most significant swing in the bars.

    The most significant swing runs between the highest high and the lowest low of the
    last ``window`` bars (all bars by default); it is ``up`` when the low came first.

    Args:
        bars: Daily bars (``high``/``low`` if present, else ``close``).
        window: Number of most recent bars to search; ``None`` for all.

    Returns:
        The levels, with the dates of the swing's high and low.

    Raises:
        InsufficientData: Fewer than 2 bars, or a window without any price range.
    """
    if window is not None and (not isinstance(window, int) or window < 2):
        raise InvalidInput(f"window must be an integer of at least 2 bars, got {window!r}")
    frame, _ = price_columns(bars, "Fibonacci levels", 2)
    if window is not None:
        frame = frame.iloc[-window:]
    hi_i, lo_i = int(np.argmax(frame["high"].to_numpy())), int(np.argmin(frame["low"].to_numpy()))
    high, low = float(frame["high"].iloc[hi_i]), float(frame["low"].iloc[lo_i])
    if high <= low:
        raise InsufficientData("Fibonacci levels", 1, 0, unit="swing with a price range")
    levels = fibonacci_levels(high, low, "up" if lo_i < hi_i else "down")
    return FibLevels(
        levels.swing_high,
        levels.swing_low,
        levels.direction,
        levels.retracements,
        levels.extensions,
        frame.index[hi_i],
        frame.index[lo_i],
    )
