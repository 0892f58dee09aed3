"""Candlestick pattern recognition with TA-Lib's ``CDL*`` functions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from ._bars import require_bars
from ._talib import talib
from .errors import InvalidInput
from .indicators import min_bars

__all__ = ["CANDLE_PATTERNS", "CandleSignal", "candlestick_patterns"]

#: The patterns recognised by default: TA-Lib function -> name.
CANDLE_PATTERNS: dict[str, str] = {
    "CDLENGULFING": "engulfing",
    "CDLHAMMER": "hammer",
    "CDLINVERTEDHAMMER": "inverted_hammer",
    "CDLHANGINGMAN": "hanging_man",
    "CDLSHOOTINGSTAR": "shooting_star",
    "CDLDOJI": "doji",
    "CDLMORNINGSTAR": "morning_star",
    "CDLEVENINGSTAR": "evening_star",
    "CDLHARAMI": "harami",
    "CDLPIERCING": "piercing",
    "CDLDARKCLOUDCOVER": "dark_cloud_cover",
    "CDL3WHITESOLDIERS": "three_white_soldiers",
    "CDL3BLACKCROWS": "three_black_crows",
}


@dataclass(frozen=True, slots=True)
class CandleSignal:
    """One candlestick pattern completed on one bar.

    Attributes:
        date: Date of the bar that completes the pattern.
        pattern: Pattern name, e.g. ``"engulfing"``.
        function: The TA-Lib function that recognised it.
        direction: ``bullish`` (TA-Lib > 0), ``bearish`` (< 0); doji-like patterns that
            carry no direction are reported as ``neutral``.
        strength: TA-Lib's raw value: ±100, or ±200 for a confirmed pattern.
        bars_ago: 0 for the last bar, 1 for the one before, and so on.
    """

    date: pd.Timestamp
    pattern: str
    function: str
    direction: Literal["bullish", "bearish", "neutral"]
    strength: int
    bars_ago: int


_NEUTRAL = {"CDLDOJI"}


def candlestick_patterns(
    bars: pd.DataFrame, lookback: int = 10, patterns: Sequence[str] | None = None
) -> list[CandleSignal]:
    """Candlestick patterns completed within the last ``lookback`` bars.

    Args:
        bars: Daily OHLC bars (open, high, low and close are all needed).
        lookback: How many of the most recent bars to report (>= 1).
        patterns: TA-Lib function names (e.g. ``["CDLENGULFING"]``); default
            :data:`CANDLE_PATTERNS`.

    Returns:
        Signals, most recent first, then by pattern name.

    Raises:
        InvalidInput: Unknown pattern function or bad lookback.
        MissingColumns: A close-only series.
        InsufficientData: Too few bars for the patterns' own look-backs.
    """
    if not isinstance(lookback, int) or lookback < 1:
        raise InvalidInput(f"lookback must be a positive integer, got {lookback!r}")
    names = list(CANDLE_PATTERNS if patterns is None else patterns)
    known = set(talib.get_function_groups()["Pattern Recognition"])
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InvalidInput(f"unknown TA-Lib candlestick functions {unknown}; use CDL* names")
    need = max(min_bars(n) for n in names) if names else 1
    f = require_bars(
        bars,
        ["open", "high", "low", "close"],
        min_bars=need,
        what="candlestick patterns",
        hint="candlestick patterns need open, high, low and close",
    )
    o, h, low, c = (f[k].to_numpy() for k in ("open", "high", "low", "close"))
    start = max(len(f) - lookback, 0)
    signals: list[CandleSignal] = []
    for name in names:
        values = getattr(talib, name)(o, h, low, c)[start:]
        for offset in values.nonzero()[0]:
            value = int(values[offset])
            i = start + int(offset)
            direction: Literal["bullish", "bearish", "neutral"] = (
                "neutral" if name in _NEUTRAL else "bullish" if value > 0 else "bearish"
            )
            signals.append(
                CandleSignal(
                    f.index[i],
                    CANDLE_PATTERNS.get(name, name.lower()),
                    name,
                    direction,
                    value,
                    len(f) - 1 - i,
                )
            )
    return sorted(signals, key=lambda s: (s.bars_ago, s.pattern))
