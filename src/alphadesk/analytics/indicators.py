"""Technical indicators computed with TA-Lib, returned as pandas objects aligned to the bars.

Close-only indicators (SMA, EMA, RSI, MACD, Bollinger) accept bars or a Series of closes.
Indicators that need the intraday range (ATR, ADX, stochastic, KDJ, VWAP) or volume (OBV,
VWAP) raise :class:`~alphadesk.analytics.errors.MissingColumns` on a series without them.
Each raises :class:`~alphadesk.analytics.errors.InsufficientData` when the history is
shorter than TA-Lib's lookback plus one bar; the warm-up values are NaN.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

from ._bars import as_close, require_bars
from ._talib import abstract, talib
from .errors import InvalidInput

__all__ = [
    "adx",
    "atr",
    "bollinger",
    "ema",
    "kdj",
    "macd",
    "min_bars",
    "obv",
    "rsi",
    "sma",
    "stochastic",
    "vwap",
]

_HLC = ["high", "low", "close"]


def min_bars(function: str, **params: Any) -> int:
    """Fewest bars for which a TA-Lib function yields at least one value.

    Args:
        function: TA-Lib function name, e.g. ``"RSI"``.
        **params: Its parameters, e.g. ``timeperiod=14``.

    Returns:
        TA-Lib's lookback for those parameters plus one.
    """
    return _lookback(function, tuple(sorted(params.items()))) + 1


@functools.cache
def _lookback(function: str, params: tuple[tuple[str, Any], ...]) -> int:
    # Building TA-Lib's function object costs more than most indicators: once per setting.
    fn = abstract.Function(function)  # type: ignore[attr-defined]  # missing from the stub
    fn.set_parameters(dict(params))
    return int(fn.lookback)


def _period(value: int, name: str = "period", least: int = 2) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise InvalidInput(f"{name} must be an integer of at least {least}, got {value!r}")
    return value


def _frame(index: pd.Index, **columns: np.ndarray) -> pd.DataFrame:
    """Columns of one length as a frame, built from one array (a dict of arrays costs
    several times more) with plain labels (faster column lookups than pandas' strings)."""
    values = np.column_stack(list(columns.values()))
    return pd.DataFrame(values, index=index, columns=pd.Index(list(columns), dtype=object))


def _close(data: pd.DataFrame | pd.Series, function: str, what: str, **params: Any) -> pd.Series:
    return as_close(data, min_bars=min_bars(function, **params), what=what)


def sma(data: pd.DataFrame | pd.Series, period: int = 20) -> pd.Series:
    """Simple moving average of the close.

    Args:
        data: Bars with a ``close`` column, or a Series of closes.
        period: Bars averaged.

    Returns:
        The SMA, NaN for the first ``period - 1`` bars.
    """
    close = _close(data, "SMA", f"SMA({period})", timeperiod=_period(period))
    return pd.Series(talib.SMA(close.to_numpy(), timeperiod=period), close.index, name="sma")


def ema(data: pd.DataFrame | pd.Series, period: int = 20) -> pd.Series:
    """Exponential moving average of the close (alpha 2/(period+1), seeded with the SMA).

    Args:
        data: Bars with a ``close`` column, or a Series of closes.
        period: EMA span.

    Returns:
        The EMA, NaN for the first ``period - 1`` bars.
    """
    close = _close(data, "EMA", f"EMA({period})", timeperiod=_period(period))
    return pd.Series(talib.EMA(close.to_numpy(), timeperiod=period), close.index, name="ema")


def rsi(data: pd.DataFrame | pd.Series, period: int = 14) -> pd.Series:
    """Relative Strength Index with Wilder smoothing, in [0, 100].

    The RSI is undefined (NaN) while the close has not moved at all since the first bar
    (no gains and no losses); TA-Lib would report 0 there.

    Args:
        data: Bars with a ``close`` column, or a Series of closes.
        period: Wilder smoothing period.

    Returns:
        The RSI, NaN for the first ``period`` bars.
    """
    close = _close(data, "RSI", f"RSI({period})", timeperiod=_period(period))
    values = talib.RSI(close.to_numpy(), timeperiod=period)
    unmoved = np.cumsum(np.abs(np.diff(close.to_numpy(), prepend=close.iloc[0]))) == 0
    values[unmoved] = np.nan
    return pd.Series(values, close.index, name="rsi")


def macd(
    data: pd.DataFrame | pd.Series, fast: int = 12, slow: int = 26, signal: int = 9
) -> pd.DataFrame:
    """MACD line, signal line and histogram.

    Args:
        data: Bars with a ``close`` column, or a Series of closes.
        fast: Fast EMA period.
        slow: Slow EMA period (greater than ``fast``).
        signal: EMA period of the signal line.

    Returns:
        Columns ``macd`` (fast EMA − slow EMA), ``signal`` and ``histogram``.
    """
    if _period(fast, "fast") >= _period(slow, "slow"):
        raise InvalidInput(f"fast period ({fast}) must be shorter than slow ({slow})")
    params = {"fastperiod": fast, "slowperiod": slow, "signalperiod": _period(signal, "signal")}
    close = _close(data, "MACD", f"MACD({fast},{slow},{signal})", **params)
    line, sig, hist = talib.MACD(close.to_numpy(), **params)
    return _frame(close.index, macd=line, signal=sig, histogram=hist)


def bollinger(
    data: pd.DataFrame | pd.Series, period: int = 20, num_std: float = 2.0
) -> pd.DataFrame:
    """Bollinger Bands: SMA ± ``num_std`` population standard deviations.

    Args:
        data: Bars with a ``close`` column, or a Series of closes.
        period: Window of the SMA and of the standard deviation (ddof 0).
        num_std: Band width in standard deviations (> 0).

    Returns:
        Columns ``upper``, ``middle``, ``lower``, ``bandwidth`` ((upper − lower) / middle)
        and ``percent_b`` ((close − lower) / (upper − lower); NaN on a flat window).
    """
    if not num_std > 0:
        raise InvalidInput(f"num_std must be positive, got {num_std}")
    close = _close(data, "BBANDS", f"Bollinger({period})", timeperiod=_period(period))
    upper, middle, lower = talib.BBANDS(
        close.to_numpy(),
        timeperiod=period,
        nbdevup=num_std,
        nbdevdn=num_std,
        matype=talib.MA_Type.SMA,
    )
    width = upper - lower
    with np.errstate(divide="ignore", invalid="ignore"):
        percent_b = np.where(width > 0, (close.to_numpy() - lower) / width, np.nan)
    return _frame(
        close.index,
        upper=upper,
        middle=middle,
        lower=lower,
        bandwidth=width / middle,
        percent_b=percent_b,
    )


def _hlc(bars: pd.DataFrame, what: str, function: str, **params: Any) -> pd.DataFrame:
    return require_bars(
        bars,
        _HLC,
        min_bars=min_bars(function, **params),
        what=what,
        hint="range indicators need intraday high and low",
    )


def atr(bars: pd.DataFrame, period: int = 14) -> pd.Series:
    """Average True Range with Wilder smoothing (needs ``high``, ``low``, ``close``).

    Args:
        bars: Daily bars.
        period: Wilder smoothing period.

    Returns:
        The ATR in price units, NaN for the first ``period`` bars.
    """
    f = _hlc(bars, f"ATR({period})", "ATR", timeperiod=_period(period, least=1))
    values = talib.ATR(
        f["high"].to_numpy(), f["low"].to_numpy(), f["close"].to_numpy(), timeperiod=period
    )
    return pd.Series(values, f.index, name="atr")


def adx(bars: pd.DataFrame, period: int = 14) -> pd.DataFrame:
    """Average Directional Index with the directional indicators (needs high/low/close).

    Args:
        bars: Daily bars.
        period: Wilder smoothing period.

    Returns:
        Columns ``adx``, ``plus_di`` and ``minus_di``, in [0, 100].
    """
    f = _hlc(bars, f"ADX({period})", "ADX", timeperiod=_period(period))
    h, low, c = f["high"].to_numpy(), f["low"].to_numpy(), f["close"].to_numpy()
    return _frame(
        f.index,
        adx=talib.ADX(h, low, c, timeperiod=period),
        plus_di=talib.PLUS_DI(h, low, c, timeperiod=period),
        minus_di=talib.MINUS_DI(h, low, c, timeperiod=period),
    )


def obv(bars: pd.DataFrame) -> pd.Series:
    """On-Balance Volume: cumulative volume signed by the close-to-close direction.

    Args:
        bars: Daily bars with ``close`` and ``volume``.

    Returns:
        OBV, starting at the first bar's volume (TA-Lib's convention).
    """
    f = require_bars(
        bars, ["close", "volume"], min_bars=1, what="OBV", hint="OBV needs traded volume"
    )
    values = talib.OBV(f["close"].to_numpy(), f["volume"].to_numpy())
    return pd.Series(values, f.index, name="obv")


def _stoch_lines(
    f: pd.DataFrame, k_period: int, k_smooth: int, d_period: int, matype: talib.MA_Type
) -> tuple[np.ndarray, np.ndarray]:
    high, low = f["high"].to_numpy(), f["low"].to_numpy()
    k, d = talib.STOCH(
        high,
        low,
        f["close"].to_numpy(),
        fastk_period=k_period,
        slowk_period=k_smooth,
        slowk_matype=matype,
        slowd_period=d_period,
        slowd_matype=matype,
    )
    # %K is undefined over a window without range; TA-Lib reports 0 there.
    flat = np.zeros(len(high), dtype=bool)
    if len(high) >= k_period:
        windows = np.lib.stride_tricks.sliding_window_view
        top, bottom = windows(high, k_period).max(axis=1), windows(low, k_period).min(axis=1)
        flat[k_period - 1 :] = top - bottom == 0
    k_bad = _trailing_any(flat, k_smooth)
    k[k_bad] = np.nan
    d[_trailing_any(k_bad, d_period)] = np.nan
    return k, d


def _trailing_any(mask: np.ndarray, window: int) -> np.ndarray:
    """Whether any of the last ``window`` values (fewer at the start) is true."""
    counts = np.cumsum(mask, dtype=np.int64)
    before = np.zeros_like(counts)
    before[window:] = counts[:-window]
    return counts > before


def stochastic(
    bars: pd.DataFrame, k_period: int = 14, k_smooth: int = 3, d_period: int = 3
) -> pd.DataFrame:
    """Slow stochastic oscillator (needs high/low/close), in [0, 100].

    Args:
        bars: Daily bars.
        k_period: Look-back of the raw %K.
        k_smooth: SMA smoothing of %K.
        d_period: SMA period of %D.

    Returns:
        Columns ``k`` and ``d``; NaN where a look-back window had no range.
    """
    params = {
        "fastk_period": _period(k_period, "k_period", 1),
        "slowk_period": _period(k_smooth, "k_smooth", 1),
        "slowd_period": _period(d_period, "d_period", 1),
    }
    f = _hlc(bars, f"stochastic({k_period},{k_smooth},{d_period})", "STOCH", **params)
    k, d = _stoch_lines(f, k_period, k_smooth, d_period, matype=talib.MA_Type.SMA)
    return _frame(f.index, k=k, d=d)


def kdj(bars: pd.DataFrame, n: int = 9, m1: int = 3, m2: int = 3) -> pd.DataFrame:
    """KDJ oscillator derived from the stochastic (needs high/low/close).

    K is the raw stochastic %K over ``n`` bars smoothed with weight ``1/m1``
    (``K_t = (1 − 1/m1) K_{t−1} + RSV_t / m1``, an EMA of period ``2·m1 − 1``), D is K
    smoothed the same way with ``m2``, and ``J = 3K − 2D``. TA-Lib seeds each EMA with
    an SMA, so the first values differ slightly from a recursion seeded at 50.

    Args:
        bars: Daily bars.
        n: Look-back of the raw stochastic value (RSV).
        m1: Smoothing of K.
        m2: Smoothing of D.

    Returns:
        Columns ``k``, ``d`` and ``j`` (J can leave [0, 100]).
    """
    params = {
        "fastk_period": _period(n, "n", 1),
        "slowk_period": 2 * _period(m1, "m1", 1) - 1,
        "slowd_period": 2 * _period(m2, "m2", 1) - 1,
    }
    f = _hlc(bars, f"KDJ({n},{m1},{m2})", "STOCH", slowk_matype=1, slowd_matype=1, **params)
    k, d = _stoch_lines(f, n, 2 * m1 - 1, 2 * m2 - 1, matype=talib.MA_Type.EMA)
    return _frame(f.index, k=k, d=d, j=3.0 * k - 2.0 * d)


def vwap(
    bars: pd.DataFrame, window: int | None = 20, anchor: pd.Timestamp | None = None
) -> pd.Series:
    """Volume-weighted average price on daily bars, rolling or anchored.

    Daily bars carry no intraday trades, so each bar contributes its typical price
    ``(high + low + close) / 3`` weighted by its volume:
    ``VWAP = Σ typical·volume / Σ volume``, summed over the last ``window`` bars (rolling)
    or over every bar from ``anchor`` on (anchored; NaN before the anchor). A window with
    no volume has no VWAP (NaN).

    Args:
        bars: Daily bars with ``high``, ``low``, ``close`` and ``volume``.
        window: Rolling window in bars; pass ``None`` with an ``anchor``.
        anchor: First bar date of an anchored VWAP (tz-aware); excludes ``window``.

    Returns:
        The VWAP series.
    """
    if (window is None) == (anchor is None):
        raise InvalidInput("pass exactly one of window (rolling VWAP) or anchor (anchored)")
    need = 1 if window is None else _period(window, "window", 1)
    f = require_bars(
        bars,
        [*_HLC, "volume"],
        min_bars=need,
        what="VWAP",
        hint="VWAP needs the bar range and volume",
    )
    pv = (f["high"] + f["low"] + f["close"]) / 3.0 * f["volume"]
    vol = f["volume"]
    if window is not None:
        num, den = pv.rolling(window).sum(), vol.rolling(window).sum()
    else:
        if anchor is None or anchor.tzinfo is None:
            raise InvalidInput("anchor must be a tz-aware timestamp")
        after = f.index >= anchor
        if not after.any():
            raise InvalidInput(f"anchor {anchor} is after the last bar {f.index[-1]}")
        num, den = pv.where(after).cumsum(), vol.where(after).cumsum()
    return (num / den.where(den > 0)).rename("vwap")
