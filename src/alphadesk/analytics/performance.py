"""Performance metrics of an equity curve or a return series.

Conventions: simple (not log) periodic returns; ``periods_per_year`` (252 for daily bars)
annualises; the risk-free rate is an annual decimal converted to a per-period rate by
division. Ratios whose denominator is zero (no volatility, no drawdown, no losing period)
are ``None`` rather than infinite or NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .errors import InsufficientData, InvalidInput

__all__ = [
    "BacktestMetrics",
    "Drawdown",
    "PerformanceStats",
    "annualized_volatility",
    "backtest_metrics",
    "cagr",
    "daily_sortino",
    "max_drawdown",
    "performance_stats",
    "profit_factor",
    "returns_from_equity",
    "sharpe_ratio",
    "sortino_ratio",
    "win_rate",
]


def _series(values: pd.Series | ArrayLike, what: str) -> pd.Series:
    s = (
        values.astype(np.float64)
        if isinstance(values, pd.Series)
        else pd.Series(np.asarray(values, dtype=np.float64))
    )
    if not np.isfinite(s.to_numpy()).all():
        raise InvalidInput(f"{what} contains NaN or infinite values; drop or fill them first")
    return s


def returns_from_equity(equity: pd.Series | ArrayLike) -> pd.Series:
    """Simple periodic returns of an equity curve.

    Args:
        equity: Positive account values in time order.

    Returns:
        ``equity_t / equity_{t-1} − 1``, one fewer value than the curve.

    Raises:
        InsufficientData: Fewer than 2 values.
        InvalidInput: Non-positive or non-finite values.
    """
    eq = _series(equity, "equity")
    if len(eq) < 2:
        raise InsufficientData("returns from equity", 2, len(eq), unit="equity values")
    if (eq <= 0).any():
        raise InvalidInput(
            "equity must be positive; pass returns instead for a curve that goes to zero or below"
        )
    return eq.pct_change().iloc[1:]


def _returns(returns: pd.Series | ArrayLike, what: str, least: int = 2) -> np.ndarray:
    r = _series(returns, "returns").to_numpy()
    if r.size < least:
        raise InsufficientData(what, least, int(r.size), unit="returns")
    if (r <= -1).any():
        raise InvalidInput("a return of -100 % or worse leaves nothing to compound")
    return r


def cagr(returns: pd.Series | ArrayLike, periods_per_year: float = 252) -> float:
    """Compound annual growth rate: ``Π(1 + r)^(periods_per_year / n) − 1``.

    Args:
        returns: Periodic simple returns.
        periods_per_year: Periods in a year.

    Returns:
        The annualised growth rate.
    """
    r = _returns(returns, "CAGR", least=1)
    growth = float(np.sum(np.log1p(r)))
    return math.expm1(growth * periods_per_year / r.size)


def annualized_volatility(returns: pd.Series | ArrayLike, periods_per_year: float = 252) -> float:
    """Annualised volatility: sample standard deviation (ddof 1) × √periods_per_year."""
    r = _returns(returns, "volatility")
    return float(np.std(r, ddof=1) * math.sqrt(periods_per_year))


def sharpe_ratio(
    returns: pd.Series | ArrayLike, risk_free: float = 0.0, periods_per_year: float = 252
) -> float | None:
    """Annualised Sharpe ratio: mean excess return / its sample std × √periods_per_year.

    Args:
        returns: Periodic simple returns.
        risk_free: Annual risk-free rate (decimal), spread evenly over the periods.
        periods_per_year: Periods in a year.

    Returns:
        The ratio, or ``None`` when the returns do not vary.
    """
    excess = _returns(returns, "Sharpe ratio") - risk_free / periods_per_year
    sd = float(np.std(excess, ddof=1))
    return None if sd == 0 else float(excess.mean() / sd * math.sqrt(periods_per_year))


def sortino_ratio(
    returns: pd.Series | ArrayLike, risk_free: float = 0.0, periods_per_year: float = 252
) -> float | None:
    """Annualised Sortino ratio: mean excess return / downside deviation × √periods.

    The downside deviation is ``sqrt(mean(min(excess, 0)²))`` over all periods.

    Returns:
        The ratio, or ``None`` when no period falls below the risk-free rate.
    """
    excess = _returns(returns, "Sortino ratio") - risk_free / periods_per_year
    downside = math.sqrt(float(np.mean(np.minimum(excess, 0.0) ** 2)))
    return None if downside == 0 else float(excess.mean() / downside * math.sqrt(periods_per_year))


def daily_sortino(returns: pd.Series | ArrayLike) -> float | None:
    """Daily Sortino ratio as StockBench defines it (arXiv 2510.02209, its ``metrics.py``):
    the mean of all daily returns over the sample standard deviation (ddof 1) of the
    negative ones, not annualised and with no risk-free rate.

    Returns:
        The ratio, or ``None`` with fewer than two losing days or no spread among them.
    """
    r = _returns(returns, "daily Sortino ratio")
    losses = r[r < 0]
    if losses.size < 2:
        return None
    sd = float(np.std(losses, ddof=1))
    return None if sd == 0 else float(r.mean() / sd)


def win_rate(pnl: pd.Series | ArrayLike) -> float | None:
    """Share of winning periods or trades among those that won or lost (zeros excluded).

    Args:
        pnl: Returns or trade profits and losses.

    Returns:
        A fraction in [0, 1], or ``None`` when nothing won or lost.
    """
    p = _series(pnl, "pnl").to_numpy()
    decided = int(np.count_nonzero(p))
    return None if decided == 0 else float(np.count_nonzero(p > 0) / decided)


def profit_factor(pnl: pd.Series | ArrayLike) -> float | None:
    """Gross profit / gross loss.

    Args:
        pnl: Returns or trade profits and losses.

    Returns:
        The factor, or ``None`` when there is no loss.
    """
    p = _series(pnl, "pnl").to_numpy()
    loss = float(-p[p < 0].sum())
    return None if loss == 0 else float(p[p > 0].sum() / loss)


@dataclass(frozen=True, slots=True)
class Drawdown:
    """The deepest peak-to-trough decline of an equity curve.

    Attributes:
        depth: Decline from the peak as a negative fraction (−0.25 = −25 %); 0 if none.
        peak: Date (or position) of the peak before the decline.
        trough: Date (or position) of the lowest point.
        recovery: First date the curve regained the peak, ``None`` if it has not.
        length: Periods from peak to recovery (or to the end if unrecovered).
    """

    depth: float
    peak: pd.Timestamp | int
    trough: pd.Timestamp | int
    recovery: pd.Timestamp | int | None
    length: int


def max_drawdown(equity: pd.Series | ArrayLike) -> Drawdown:
    """Maximum drawdown of an equity curve, with its dates.

    Args:
        equity: Positive account values in time order (a Series keeps its index labels).

    Returns:
        The deepest drawdown.
    """
    eq = _series(equity, "equity")
    if len(eq) < 1:
        raise InsufficientData("maximum drawdown", 1, 0, unit="equity values")
    values = eq.to_numpy()
    running_peak = np.maximum.accumulate(values)
    dd = values / running_peak - 1.0
    trough = int(np.argmin(dd))
    peak = int(np.argmax(values[: trough + 1])) if trough else 0
    regained = np.flatnonzero(values[trough:] >= values[peak])
    recovery = trough + int(regained[0]) if dd[trough] < 0 and regained.size else None
    labels = eq.index
    return Drawdown(
        depth=float(min(dd[trough], 0.0)),
        peak=labels[peak],
        trough=labels[trough],
        recovery=None if recovery is None else labels[recovery],
        length=(recovery if recovery is not None else len(values) - 1) - peak,
    )


@dataclass(frozen=True, slots=True)
class PerformanceStats:
    """Summary statistics of a strategy's returns (all returns are decimals).

    Attributes:
        start: First label of the equity curve (the value before the first return).
        end: Last label.
        periods: Number of returns.
        total_return: Compounded return over the whole series.
        cagr: Compound annual growth rate.
        volatility: Annualised volatility.
        sharpe: Annualised Sharpe ratio (``None`` without variation).
        sortino: Annualised Sortino ratio (``None`` without a losing period).
        max_drawdown: The deepest drawdown with its dates.
        calmar: CAGR / |max drawdown depth| (``None`` without a drawdown).
        win_rate: Share of positive periods among non-zero ones.
        profit_factor: Sum of gains / sum of losses (``None`` without a loss).
        best: Best period return.
        worst: Worst period return.
    """

    start: pd.Timestamp | int
    end: pd.Timestamp | int
    periods: int
    total_return: float
    cagr: float
    volatility: float
    sharpe: float | None
    sortino: float | None
    max_drawdown: Drawdown
    calmar: float | None
    win_rate: float | None
    profit_factor: float | None
    best: float
    worst: float


def _equity_and_returns(data: pd.Series | ArrayLike, kind: str) -> tuple[pd.Series, pd.Series]:
    """Equity curve and returns; a return series compounds from 1.0 (the starting capital,
    labelled with the first return's date, or position 0 without dates)."""
    if kind == "equity":
        equity = _series(data, "equity")
        return equity, returns_from_equity(equity)
    if kind != "returns":
        raise InvalidInput(f"kind must be 'equity' or 'returns', got {kind!r}")
    returns = _series(data, "returns")
    _returns(returns, "performance statistics")
    values = np.concatenate([[1.0], np.cumprod(1.0 + returns.to_numpy())])
    if isinstance(returns.index, pd.DatetimeIndex):
        labels: pd.Index = returns.index[[0, *range(len(returns))]]
    else:
        labels = pd.RangeIndex(len(values))
    return pd.Series(values, index=labels), returns


def performance_stats(
    equity_or_returns: pd.Series | ArrayLike,
    *,
    kind: Literal["equity", "returns"],
    risk_free: float = 0.0,
    periods_per_year: float = 252,
) -> PerformanceStats:
    """Every performance statistic of an equity curve or a return series, in one call.

    Args:
        equity_or_returns: An equity curve (positive values) or periodic simple returns,
            in time order; a Series with a DatetimeIndex gives dated drawdowns.
        kind: Which of the two ``equity_or_returns`` is: ``"equity"`` or ``"returns"``.
        risk_free: Annual risk-free rate (decimal) for Sharpe and Sortino.
        periods_per_year: Periods in a year (252 for daily bars).

    Returns:
        The statistics.

    Raises:
        InsufficientData: Fewer than 2 returns.
        InvalidInput: NaN values, non-positive equity, an unknown ``kind``.
    """
    equity, returns = _equity_and_returns(equity_or_returns, kind)
    r = _returns(returns, "performance statistics")
    growth = cagr(r, periods_per_year)
    dd = max_drawdown(equity)
    return PerformanceStats(
        start=equity.index[0],
        end=equity.index[-1],
        periods=int(r.size),
        total_return=math.expm1(float(np.sum(np.log1p(r)))),
        cagr=growth,
        volatility=annualized_volatility(r, periods_per_year),
        sharpe=sharpe_ratio(r, risk_free, periods_per_year),
        sortino=sortino_ratio(r, risk_free, periods_per_year),
        max_drawdown=dd,
        calmar=None if dd.depth == 0 else growth / abs(dd.depth),
        win_rate=win_rate(r),
        profit_factor=profit_factor(r),
        best=float(r.max()),
        worst=float(r.min()),
    )


@dataclass(frozen=True, slots=True)
class BacktestMetrics:
    """The figures of a backtest: its equity curve, its round trips and what it traded.

    Attributes:
        start: First label of the equity curve.
        end: Last label.
        periods: Number of periodic returns (bars − 1).
        initial: First equity value.
        final: Last equity value.
        cumulative_return: ``final / initial − 1``.
        annualized_return: ``(final / initial)^(periods_per_year / periods) − 1``
            (−1 when the account ended at or below zero).
        volatility: Annualised volatility of the periodic returns (``None`` when the
            account went to zero or below, where a return has no meaning).
        sharpe: Annualised Sharpe ratio, risk-free 0 (``None`` without variation).
        max_drawdown: Deepest peak-to-trough decline, a negative fraction (0 if none).
        win_rate: Winning round trips (net profit > 0) / all closed round trips
            (``None`` without a closed trade).
        trades: Closed round trips.
        turnover: Traded value per year over the average equity (a whole-account round
            trip once a year is 2.0).
        exposure: Share of bars that ended with a position.
        commission: Commissions paid.
        slippage: What slippage cost.
        costs: ``commission + slippage``.
    """

    start: pd.Timestamp | int
    end: pd.Timestamp | int
    periods: int
    initial: float
    final: float
    cumulative_return: float
    annualized_return: float
    volatility: float | None
    sharpe: float | None
    max_drawdown: float
    win_rate: float | None
    trades: int
    turnover: float
    exposure: float
    commission: float
    slippage: float
    costs: float


def backtest_metrics(
    equity: pd.Series | ArrayLike,
    *,
    trade_pnls: ArrayLike = (),
    traded_value: float = 0.0,
    commission: float = 0.0,
    slippage: float = 0.0,
    exposure: ArrayLike | None = None,
    periods_per_year: float = 252,
) -> BacktestMetrics:
    """Every figure of a backtest, in one pure call.

    Args:
        equity: Account value at each bar's close, the first being the starting capital.
        trade_pnls: Net profit and loss of each closed round trip.
        traded_value: Sum of ``|shares| × price`` over every fill.
        commission: Commissions paid.
        slippage: What slippage cost.
        exposure: Per bar, whether a position was held (same length as ``equity``);
            ``None`` counts no exposure.
        periods_per_year: Bars in a year (252 for daily bars).

    Returns:
        The metrics.

    Raises:
        InsufficientData: Fewer than 2 equity values.
        InvalidInput: NaN values, a non-positive starting value, an exposure of another
            length.
    """
    eq = _series(equity, "equity")
    if len(eq) < 2:
        raise InsufficientData("backtest metrics", 2, len(eq), unit="equity values")
    values = eq.to_numpy()
    initial, final = float(values[0]), float(values[-1])
    if initial <= 0:
        raise InvalidInput(f"the starting equity must be positive, got {initial}")
    periods = len(values) - 1
    ratio = final / initial
    solvent = bool((values > 0).all())
    returns = values[1:] / values[:-1] - 1.0 if solvent else None
    running_peak = np.maximum.accumulate(values)
    depth = float(min(np.min(values / running_peak - 1.0), 0.0))
    pnls = np.asarray(trade_pnls, dtype=np.float64)
    held = np.zeros(len(values), bool) if exposure is None else np.asarray(exposure, bool)
    if held.shape != values.shape:
        raise InvalidInput(f"exposure has {held.size} values for {values.size} equity values")
    years = periods / periods_per_year
    return BacktestMetrics(
        start=eq.index[0],
        end=eq.index[-1],
        periods=periods,
        initial=initial,
        final=final,
        cumulative_return=ratio - 1.0,
        annualized_return=ratio ** (1.0 / years) - 1.0 if ratio > 0 else -1.0,
        volatility=None if returns is None else annualized_volatility(returns, periods_per_year),
        sharpe=None if returns is None else sharpe_ratio(returns, 0.0, periods_per_year),
        max_drawdown=depth,
        win_rate=float(np.mean(pnls > 0)) if pnls.size else None,
        trades=int(pnls.size),
        turnover=float(traded_value / float(np.mean(values)) / years),
        exposure=float(np.mean(held)),
        commission=float(commission),
        slippage=float(slippage),
        costs=float(commission + slippage),
    )
