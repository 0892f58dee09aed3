"""The built-in strategies: each is one pure, causal signal function.

A signal function maps OHLCV bars and parameters to the target position after each
bar's close (−1 short, 0 flat, 1 long) using only that bar and earlier ones. Both
engines trade that one series, so a strategy is defined once. In a long/flat run a −1
means flat. Indicators come from :mod:`alphadesk.analytics` (TA-Lib).

=============  ======================================================================
``buy_hold``   Long from the first bar.
``sma_cross``  Long while SMA(fast) > SMA(slow), short (or flat) while below (20/50).
``macd``       Long while the MACD line is above its signal line, short below
               (12, 26, 9).
``kdj_rsi``    KDJ (9, 3, 3) with RSI (14, 30/70): long when K crosses above D with
               the RSI below its midline, or the RSI drops under ``oversold``; short
               (or flat) when K crosses below D with the RSI above its midline, or the
               RSI rises over ``overbought``; otherwise hold.
``zmr``        Zero-mean reversion: z = (close − SMA(window)) / std(window); long at
               z ≤ −entry, short (or flat) at z ≥ entry, flat once |z| ≤ exit;
               otherwise hold (20, 2.0, 0.5).
=============  ======================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from alphadesk.analytics import kdj, macd, rsi, sma

__all__ = ["STRATEGIES", "StrategySpec", "UnknownStrategy", "get_strategy"]

Params = Mapping[str, Any]


class UnknownStrategy(KeyError):
    """No built-in strategy of that name."""

    def __str__(self) -> str:
        return str(self.args[0])


def _hold(events: pd.Series) -> pd.Series:
    """Positions from events (NaN = no event): each event holds until the next."""
    return events.ffill().fillna(0.0)


def buy_hold(bars: pd.DataFrame) -> pd.Series:
    """Long from the first bar."""
    return pd.Series(1.0, index=bars.index, name="target")


def sma_cross(bars: pd.DataFrame, fast: int = 20, slow: int = 50) -> pd.Series:
    """Long while the fast SMA is above the slow one, short while below."""
    if fast >= slow:
        raise ValueError(f"fast ({fast}) must be shorter than slow ({slow})")
    spread = sma(bars, fast) - sma(bars, slow)
    return np.sign(spread).fillna(0.0).rename("target")


def macd_cross(bars: pd.DataFrame, fast: int = 12, slow: int = 26, signal: int = 9) -> pd.Series:
    """Long while the MACD line is above its signal line, short while below."""
    lines = macd(bars, fast, slow, signal)
    return np.sign(lines["macd"] - lines["signal"]).fillna(0.0).rename("target")


def kdj_rsi(
    bars: pd.DataFrame,
    n: int = 9,
    m1: int = 3,
    m2: int = 3,
    rsi_period: int = 14,
    oversold: float = 30.0,
    overbought: float = 70.0,
) -> pd.Series:
    """KDJ crosses confirmed by the RSI, or RSI extremes (see the module table)."""
    if not 0 < oversold < overbought < 100:
        raise ValueError(f"need 0 < oversold < overbought < 100, got {oversold}, {overbought}")
    lines = kdj(bars, n, m1, m2)
    strength = rsi(bars, rsi_period)
    k, d = lines["k"], lines["d"]
    above = k > d
    was_above = (k.shift(1) > d.shift(1)).fillna(False).astype(bool)
    was_below = (k.shift(1) < d.shift(1)).fillna(False).astype(bool)
    middle = (oversold + overbought) / 2
    long_ = (above & was_below & (strength < middle)) | (strength < oversold)
    short = ((k < d) & was_above & (strength > middle)) | (strength > overbought)
    events = pd.Series(np.nan, index=bars.index)
    events[long_ & ~short] = 1.0
    events[short & ~long_] = -1.0
    return _hold(events).rename("target")


def zmr(bars: pd.DataFrame, window: int = 20, entry: float = 2.0, exit: float = 0.5) -> pd.Series:
    """Zero-mean reversion of the close's z-score against its rolling mean."""
    if not isinstance(window, int) or window < 2:
        raise ValueError(f"window must be an integer of at least 2, got {window!r}")
    if not 0 <= exit < entry:
        raise ValueError(f"need 0 <= exit < entry, got exit={exit}, entry={entry}")
    close = bars["close"]
    mean = close.rolling(window).mean()
    std = close.rolling(window).std(ddof=0)
    z = (close - mean) / std.where(std > 0)
    events = pd.Series(np.nan, index=bars.index)
    events[z.abs() <= exit] = 0.0
    events[z <= -entry] = 1.0
    events[z >= entry] = -1.0
    return _hold(events).rename("target")


@dataclass(frozen=True)
class StrategySpec:
    """A built-in strategy: its signal, its usual parameters and a default sweep grid.

    Attributes:
        name: Registry name (used on the command line).
        summary: One line for tables and help.
        signal: ``signal(bars, **params) -> Series`` of targets in {−1, 0, 1}.
        defaults: The usual parameters.
        grid: Values per parameter for :func:`alphadesk.backtest.run.sweep`.
    """

    name: str
    summary: str
    signal: Callable[..., pd.Series]
    defaults: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)

    def params(self, overrides: Params | None = None) -> dict[str, Any]:
        """The defaults with ``overrides`` applied, each cast to its default's type.

        Raises:
            ValueError: A parameter the strategy does not have, or a bad value.
        """
        params = dict(self.defaults)
        for key, value in (overrides or {}).items():
            if key not in self.defaults:
                known = ", ".join(self.defaults) or "none"
                raise ValueError(f"{self.name} has no parameter {key!r}; its parameters: {known}")
            kind = type(self.defaults[key])
            try:
                params[key] = kind(value) if kind is not int else int(str(value))
            except ValueError:
                what = "an integer" if kind is int else "a number"
                raise ValueError(f"{self.name}: {key} must be {what}, got {value!r}") from None
        return params

    def targets(self, bars: pd.DataFrame, params: Params | None = None) -> pd.Series:
        """The target series of ``bars`` under ``params`` (defaults for the rest)."""
        return self.signal(bars, **self.params(params))


STRATEGIES: dict[str, StrategySpec] = {
    spec.name: spec
    for spec in (
        StrategySpec("buy_hold", "Buy and hold from the first bar", buy_hold),
        StrategySpec(
            "sma_cross",
            "SMA crossover: long above, short/flat below",
            sma_cross,
            {"fast": 20, "slow": 50},
            {"fast": [5, 10, 20, 30, 50], "slow": [50, 100, 150, 200]},
        ),
        StrategySpec(
            "macd",
            "MACD line vs signal line",
            macd_cross,
            {"fast": 12, "slow": 26, "signal": 9},
            {"fast": [8, 12, 16], "slow": [26, 34], "signal": [5, 9, 13]},
        ),
        StrategySpec(
            "kdj_rsi",
            "KDJ crosses with RSI confirmation and extremes",
            kdj_rsi,
            {"n": 9, "m1": 3, "m2": 3, "rsi_period": 14, "oversold": 30.0, "overbought": 70.0},
            {
                "n": [9, 14],
                "rsi_period": [9, 14],
                "oversold": [20.0, 30.0],
                "overbought": [70.0, 80.0],
            },
        ),
        StrategySpec(
            "zmr",
            "Zero-mean reversion on the close's z-score",
            zmr,
            {"window": 20, "entry": 2.0, "exit": 0.5},
            {"window": [10, 20, 40], "entry": [1.5, 2.0, 2.5], "exit": [0.0, 0.5]},
        ),
    )
}


def get_strategy(name: str) -> StrategySpec:
    """The built-in strategy called ``name``.

    Raises:
        UnknownStrategy: No such strategy; the message lists the built-in ones (a file
            name is not one: files run through :func:`~.sandbox.run_in_sandbox`).
    """
    spec = STRATEGIES.get(name.strip().lower())
    if spec is not None:
        return spec
    known = ", ".join(STRATEGIES)
    if name.endswith(".py") or "/" in name or "\\" in name:
        raise UnknownStrategy(
            f"{name!r} is a strategy file, not a built-in strategy: strategy code runs only "
            f"in the sandbox (alphadesk.backtest.sandbox.run_in_sandbox); built-in: {known}"
        )
    raise UnknownStrategy(f"unknown strategy {name!r}; the built-in strategies are: {known}")
