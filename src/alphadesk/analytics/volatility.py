"""Historical volatility estimators and implied-volatility rank and percentile.

Every estimator returns a rolling, annualised (×√252) volatility as a decimal
(0.25 = 25 %), indexed like the bars; the first ``window`` (or ``window + 1``) values are
NaN. Range-based estimators need intraday ``high`` and ``low`` (and ``open``); on a
close-only series they raise :class:`~alphadesk.analytics.errors.MissingColumns` that
points to the close-to-close estimator.

Definitions, over a window of ``n`` bars with ``hl = ln(H/L)``, ``co = ln(C/O)``:

* close-to-close: sample standard deviation (ddof 1) of ``ln(C_t / C_{t-1})``.
* Parkinson (1980): ``σ² = Σ hl² / (4 n ln 2)``.
* Garman–Klass (1980): ``σ² = (1/n) Σ [½ hl² − (2 ln 2 − 1) co²]``.
* Rogers–Satchell (1991): ``σ² = (1/n) Σ [ln(H/C) ln(H/O) + ln(L/C) ln(L/O)]``.
* Yang–Zhang (2000): ``σ² = σ²_overnight + k σ²_open-close + (1 − k) σ²_RS`` with
  ``k = 0.34 / (1.34 + (n + 1)/(n − 1))``, the first two sample variances (ddof 1) of
  ``ln(O_t / C_{t-1})`` and ``ln(C_t / O_t)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ._bars import as_close, require_bars
from .errors import InsufficientData, InvalidInput

__all__ = [
    "TRADING_DAYS",
    "HVMethod",
    "HistoricalVol",
    "IVRank",
    "historical_volatility",
    "hv_close_to_close",
    "hv_garman_klass",
    "hv_parkinson",
    "hv_rogers_satchell",
    "hv_yang_zhang",
    "iv_rank",
]

TRADING_DAYS = 252
HVMethod = Literal["close_to_close", "parkinson", "garman_klass", "rogers_satchell", "yang_zhang"]
_RANGE_HINT = "this series has no intraday range; use hv_close_to_close instead"


def _check_window(window: int) -> None:
    if not isinstance(window, int) or window < 2:
        raise InvalidInput(f"window must be an integer of at least 2 bars, got {window!r}")


def _annualise(variance: pd.Series, name: str) -> pd.Series:
    # variance.clip(lower=0.0) on the array: NaN stays NaN, and a tenth of the time.
    values = variance.to_numpy()
    floored = np.where(values < 0.0, 0.0, values)
    return pd.Series(np.sqrt(floored * TRADING_DAYS), variance.index, name=name)


def hv_close_to_close(data: pd.DataFrame | pd.Series, window: int = 20) -> pd.Series:
    """Close-to-close historical volatility (sample std of log returns), annualised.

    Args:
        data: Bars with a ``close`` column, or a Series of closes.
        window: Number of daily returns per estimate (needs ``window + 1`` closes).

    Returns:
        Rolling annualised volatility, decimal.

    Raises:
        InsufficientData: Fewer than ``window + 1`` closes.
    """
    _check_window(window)
    close = as_close(data, min_bars=window + 1, what=f"close-to-close HV({window})")
    # np.log(close).diff() on the array: the same numbers without two intermediate series.
    returns = pd.Series(np.concatenate(([np.nan], np.diff(np.log(close.to_numpy())))), close.index)
    return _annualise(returns.rolling(window).var(ddof=1), "hv_close_to_close")


def hv_parkinson(bars: pd.DataFrame, window: int = 20) -> pd.Series:
    """Parkinson high-low volatility, annualised (needs ``high`` and ``low``).

    Args:
        bars: Daily bars with ``high`` and ``low``.
        window: Bars per estimate.

    Returns:
        Rolling annualised volatility, decimal.

    Raises:
        MissingColumns: No high/low (a close-only series).
        InsufficientData: Fewer than ``window`` bars.
    """
    _check_window(window)
    frame = require_bars(
        bars, ["high", "low"], min_bars=window, what=f"Parkinson HV({window})", hint=_RANGE_HINT
    )
    hl2 = np.log(frame["high"] / frame["low"]) ** 2
    return _annualise(hl2.rolling(window).mean() / (4.0 * math.log(2.0)), "hv_parkinson")


def hv_garman_klass(bars: pd.DataFrame, window: int = 20) -> pd.Series:
    """Garman–Klass OHLC volatility, annualised (needs ``open``, ``high``, ``low``, ``close``).

    Args:
        bars: Daily OHLC bars.
        window: Bars per estimate.

    Returns:
        Rolling annualised volatility, decimal.

    Raises:
        MissingColumns: No open/high/low.
        InsufficientData: Fewer than ``window`` bars.
    """
    _check_window(window)
    frame = require_bars(
        bars,
        ["open", "high", "low", "close"],
        min_bars=window,
        what=f"Garman-Klass HV({window})",
        hint=_RANGE_HINT,
    )
    hl = np.log(frame["high"] / frame["low"])
    co = np.log(frame["close"] / frame["open"])
    terms = 0.5 * hl**2 - (2.0 * math.log(2.0) - 1.0) * co**2
    return _annualise(terms.rolling(window).mean(), "hv_garman_klass")


def _rogers_satchell_terms(frame: pd.DataFrame) -> pd.Series:
    h, low, o, c = (np.log(frame[k]) for k in ("high", "low", "open", "close"))
    return (h - c) * (h - o) + (low - c) * (low - o)


def hv_rogers_satchell(bars: pd.DataFrame, window: int = 20) -> pd.Series:
    """Rogers–Satchell drift-independent OHLC volatility, annualised.

    Args:
        bars: Daily OHLC bars.
        window: Bars per estimate.

    Returns:
        Rolling annualised volatility, decimal.

    Raises:
        MissingColumns: No open/high/low.
        InsufficientData: Fewer than ``window`` bars.
    """
    _check_window(window)
    frame = require_bars(
        bars,
        ["open", "high", "low", "close"],
        min_bars=window,
        what=f"Rogers-Satchell HV({window})",
        hint=_RANGE_HINT,
    )
    rs = _rogers_satchell_terms(frame)
    return _annualise(rs.rolling(window).mean(), "hv_rogers_satchell")


def hv_yang_zhang(bars: pd.DataFrame, window: int = 20) -> pd.Series:
    """Yang–Zhang volatility (overnight + open-to-close + Rogers–Satchell), annualised.

    Args:
        bars: Daily OHLC bars.
        window: Bars per estimate (needs ``window + 1`` bars for the overnight returns).

    Returns:
        Rolling annualised volatility, decimal.

    Raises:
        MissingColumns: No open/high/low.
        InsufficientData: Fewer than ``window + 1`` bars.
    """
    _check_window(window)
    frame = require_bars(
        bars,
        ["open", "high", "low", "close"],
        min_bars=window + 1,
        what=f"Yang-Zhang HV({window})",
        hint=_RANGE_HINT,
    )
    overnight = np.log(frame["open"] / frame["close"].shift(1))
    open_close = np.log(frame["close"] / frame["open"])
    rs = _rogers_satchell_terms(frame).where(overnight.notna())
    k = 0.34 / (1.34 + (window + 1) / (window - 1))
    variance = (
        overnight.rolling(window).var(ddof=1)
        + k * open_close.where(overnight.notna()).rolling(window).var(ddof=1)
        + (1.0 - k) * rs.rolling(window).mean()
    )
    return _annualise(variance, "hv_yang_zhang")


_ESTIMATORS = {
    "close_to_close": hv_close_to_close,
    "parkinson": hv_parkinson,
    "garman_klass": hv_garman_klass,
    "rogers_satchell": hv_rogers_satchell,
    "yang_zhang": hv_yang_zhang,
}


@dataclass(frozen=True, slots=True)
class HistoricalVol:
    """The latest historical volatility.

    Attributes:
        value: Annualised volatility, decimal.
        method: The estimator used.
        window: Bars per estimate.
        as_of: Date of the last bar in the window.
    """

    value: float
    method: HVMethod
    window: int
    as_of: pd.Timestamp


def historical_volatility(
    bars: pd.DataFrame | pd.Series, window: int = 20, method: HVMethod = "close_to_close"
) -> HistoricalVol:
    """Latest annualised historical volatility by the chosen estimator.

    Args:
        bars: Daily bars (a Series of closes is accepted for ``close_to_close``).
        window: Bars per estimate.
        method: One of ``close_to_close``, ``parkinson``, ``garman_klass``,
            ``rogers_satchell``, ``yang_zhang``.

    Returns:
        The value for the last bar.

    Raises:
        InvalidInput: Unknown method, or a Series given to a range-based estimator.
        MissingColumns: A range-based estimator on a close-only series.
        InsufficientData: Too few bars for the window.
    """
    if method not in _ESTIMATORS:
        raise InvalidInput(f"unknown method {method!r}; choose one of {sorted(_ESTIMATORS)}")
    if isinstance(bars, pd.Series) and method != "close_to_close":
        raise InvalidInput(f"{method} needs OHLC bars, not a close series; {_RANGE_HINT}")
    series = _ESTIMATORS[method](bars, window)
    return HistoricalVol(float(series.iloc[-1]), method, window, series.index[-1])


@dataclass(frozen=True, slots=True)
class IVRank:
    """Where the current implied volatility sits in its own history.

    Attributes:
        current: The implied volatility ranked.
        rank: ``100 · (current − low) / (high − low)``, in [0, 100] (can leave that range
            when ``current`` is outside the history).
        percentile: Percentage of history observations strictly below ``current``.
        low: Lowest implied volatility in the history.
        high: Highest implied volatility in the history.
        observations: Number of history observations.
    """

    current: float
    rank: float
    percentile: float
    low: float
    high: float
    observations: int


def iv_rank(history: pd.Series | ArrayLike, current: float | None = None) -> IVRank:
    """IV rank and IV percentile of ``current`` over an implied-volatility history.

    The conventional history is the last 252 trading days of a daily IV series.

    Args:
        history: Past implied volatilities (decimals); NaN entries are ignored.
        current: The value to rank; by default the last value of ``history``.

    Returns:
        Rank and percentile, both in percent.

    Raises:
        InsufficientData: Fewer than 2 valid observations.
        InvalidInput: A flat history (rank undefined) or a non-finite ``current``.
    """
    values = np.asarray(history, dtype=np.float64).ravel()
    values = values[np.isfinite(values)]
    if values.size < 2:
        raise InsufficientData("IV rank", 2, int(values.size), unit="IV observations")
    cur = float(values[-1]) if current is None else float(current)
    if not math.isfinite(cur):
        raise InvalidInput(f"current implied volatility must be finite, got {current}")
    low, high = float(values.min()), float(values.max())
    if high == low:
        raise InvalidInput(
            f"the IV history is flat (every value {low}); IV rank is undefined, "
            "pass a longer or real implied-volatility history"
        )
    return IVRank(
        current=cur,
        rank=100.0 * (cur - low) / (high - low),
        percentile=100.0 * float(np.count_nonzero(values < cur)) / values.size,
        low=low,
        high=high,
        observations=int(values.size),
    )
