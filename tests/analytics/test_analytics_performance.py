"""Performance statistics against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from alphadesk.analytics.errors import InsufficientData, InvalidInput
from alphadesk.analytics.performance import (
    annualized_volatility,
    cagr,
    max_drawdown,
    performance_stats,
    profit_factor,
    returns_from_equity,
    sharpe_ratio,
    sortino_ratio,
    win_rate,
)

R = [0.10, -0.05, 0.02, -0.10, 0.08]
DATES = pd.bdate_range("2024-01-01", periods=len(R), tz="UTC")


def test_each_statistic_by_hand() -> None:
    mean = sum(R) / len(R)
    sd = math.sqrt(sum((r - mean) ** 2 for r in R) / (len(R) - 1))
    growth = math.prod(1 + r for r in R)
    assert cagr(R) == pytest.approx(growth ** (252 / 5) - 1)
    assert cagr(R, periods_per_year=12) == pytest.approx(growth ** (12 / 5) - 1)
    assert annualized_volatility(R) == pytest.approx(sd * math.sqrt(252))
    assert sharpe_ratio(R) == pytest.approx(mean / sd * math.sqrt(252))
    rf = 0.0252  # 1 basis point a day
    excess = [r - 0.0001 for r in R]
    ex_mean = sum(excess) / len(excess)
    ex_sd = math.sqrt(sum((x - ex_mean) ** 2 for x in excess) / (len(excess) - 1))
    assert sharpe_ratio(R, risk_free=rf) == pytest.approx(ex_mean / ex_sd * math.sqrt(252))
    downside = math.sqrt(sum(min(r, 0) ** 2 for r in R) / len(R))
    assert sortino_ratio(R) == pytest.approx(mean / downside * math.sqrt(252))
    assert win_rate(R) == pytest.approx(3 / 5)
    assert profit_factor(R) == pytest.approx(0.20 / 0.15)


def test_drawdown_dates_without_recovery() -> None:
    stats = performance_stats(pd.Series(R, index=DATES), kind="returns")
    equity = np.cumprod([1.0, *(1 + np.array(R))])
    dd = stats.max_drawdown
    assert dd.depth == pytest.approx(equity[4] / equity[1] - 1)
    assert (dd.peak, dd.trough, dd.recovery) == (DATES[0], DATES[3], None)
    assert dd.length == 4
    assert stats.calmar == pytest.approx(stats.cagr / abs(dd.depth))
    assert stats.total_return == pytest.approx(equity[-1] - 1)
    assert (stats.best, stats.worst, stats.periods) == (0.10, -0.10, 5)


def test_drawdown_with_recovery_and_a_first_period_loss() -> None:
    dd = max_drawdown(pd.Series([100.0, 90.0, 95.0, 101.0, 99.0], index=DATES))
    assert dd.depth == pytest.approx(-0.1)
    assert (dd.peak, dd.trough, dd.recovery, dd.length) == (DATES[0], DATES[1], DATES[3], 3)
    stats = performance_stats([-0.1, 0.05], kind="returns")  # loses from the start
    assert stats.max_drawdown.depth == pytest.approx(-0.1)
    assert stats.max_drawdown.peak == 0  # the starting capital, by position


def test_equity_and_returns_agree() -> None:
    equity = pd.Series(
        np.cumprod([100.0, *(1 + np.array(R))]),
        index=pd.bdate_range("2023-12-29", periods=6, tz="UTC"),
    )
    from_equity = performance_stats(equity, kind="equity")
    from_returns = performance_stats(returns_from_equity(equity), kind="returns")
    for field in ("cagr", "volatility", "sharpe", "sortino", "total_return", "win_rate"):
        assert getattr(from_equity, field) == pytest.approx(getattr(from_returns, field))
    assert from_equity.max_drawdown.depth == pytest.approx(from_returns.max_drawdown.depth)
    assert from_equity.start == equity.index[0]


def test_undefined_ratios_are_none() -> None:
    flat = performance_stats([0.0, 0.0, 0.0], kind="returns")
    assert flat.sharpe is None and flat.sortino is None and flat.calmar is None
    assert flat.win_rate is None and flat.profit_factor is None
    assert flat.max_drawdown.depth == 0.0
    gains = performance_stats([0.01, 0.02, 0.01], kind="returns")
    assert gains.sortino is None and gains.profit_factor is None and gains.win_rate == 1.0


def test_bad_input() -> None:
    with pytest.raises(InsufficientData, match="returns"):
        performance_stats([0.01], kind="returns")
    with pytest.raises(InvalidInput, match="NaN"):
        performance_stats([0.01, float("nan")], kind="returns")
    with pytest.raises(InvalidInput, match="positive"):
        performance_stats([100.0, 0.0, 50.0], kind="equity")
    with pytest.raises(InvalidInput, match="kind"):
        performance_stats([0.01, 0.02], kind="prices")  # type: ignore[arg-type]
