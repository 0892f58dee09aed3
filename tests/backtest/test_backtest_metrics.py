"""backtest_metrics against a hand computation on a series small enough to check on paper."""

from __future__ import annotations

import itertools
import math
import statistics

import pandas as pd
import pytest

from alphadesk.analytics import InsufficientData, InvalidInput, backtest_metrics

# Six closes of an account: +10 %, −10 %, +5 %, −20 %, +25 %.
EQUITY = [100.0, 110.0, 99.0, 103.95, 83.16, 103.95]


def test_metrics_match_a_hand_computation() -> None:
    index = pd.date_range("2024-01-01", periods=6, freq="B", tz="UTC")
    m = backtest_metrics(
        pd.Series(EQUITY, index=index),
        trade_pnls=[12.5, -3.0, 0.0, 7.25],
        traded_value=600.0,
        commission=4.0,
        slippage=1.5,
        exposure=[False, True, True, True, False, False],
        periods_per_year=252,
    )
    # By hand: returns 0.10, −0.10, 0.05, −0.20, 0.25 (103.95 / 99 = 1.05, 83.16 / 103.95
    # = 0.8, 103.95 / 83.16 = 1.25); mean 0.02; deviations 0.08, −0.12, 0.03, −0.22, 0.23;
    # squares sum 0.0064 + 0.0144 + 0.0009 + 0.0484 + 0.0529 = 0.123; sample variance
    # 0.123 / 4 = 0.03075.
    sd = math.sqrt(0.03075)
    assert m.periods == 5
    assert m.cumulative_return == pytest.approx(0.0395, abs=1e-12)
    assert m.annualized_return == pytest.approx(1.0395 ** (252 / 5) - 1, rel=1e-12)
    assert m.volatility == pytest.approx(sd * math.sqrt(252), rel=1e-12)
    assert m.sharpe == pytest.approx(0.02 / sd * math.sqrt(252), rel=1e-12)
    # Peak 110 at bar 1, trough 83.16 at bar 4: 83.16 / 110 − 1 = −0.244.
    assert m.max_drawdown == pytest.approx(-0.244, abs=1e-12)
    assert m.win_rate == 0.5  # 2 of 4 round trips made money (a zero is not a win)
    assert m.trades == 4
    # Traded 600 over an average equity of 600.06 / 6 = 100.01, over 5/252 of a year.
    assert m.turnover == pytest.approx(600 / 100.01 / (5 / 252), rel=1e-12)
    assert m.exposure == pytest.approx(0.5)
    assert (m.commission, m.slippage, m.costs) == (4.0, 1.5, 5.5)
    assert m.start == index[0] and m.end == index[-1]
    assert m.initial == 100.0 and m.final == 103.95


def test_sharpe_agrees_with_the_statistics_module() -> None:
    returns = [b / a - 1 for a, b in itertools.pairwise(EQUITY)]
    m = backtest_metrics(EQUITY)
    expected = statistics.mean(returns) / statistics.stdev(returns) * math.sqrt(252)
    assert m.sharpe == pytest.approx(expected, rel=1e-12)


def test_flat_account_has_no_sharpe_and_no_trades() -> None:
    m = backtest_metrics([50.0] * 10)
    assert m.sharpe is None
    assert m.cumulative_return == 0.0 and m.max_drawdown == 0.0
    assert m.win_rate is None and m.trades == 0 and m.turnover == 0.0


def test_ruined_account_reports_without_return_statistics() -> None:
    m = backtest_metrics([100.0, 40.0, -10.0, 5.0])
    assert m.annualized_return == 1.0 * (5.0 / 100.0) ** (252 / 3) - 1
    assert m.volatility is None and m.sharpe is None
    m = backtest_metrics([100.0, -10.0])
    assert m.annualized_return == -1.0
    assert m.max_drawdown == pytest.approx(-1.1)


def test_bad_input_says_what_is_wrong() -> None:
    with pytest.raises(InsufficientData):
        backtest_metrics([100.0])
    with pytest.raises(InvalidInput, match="starting equity"):
        backtest_metrics([0.0, 1.0])
    with pytest.raises(InvalidInput, match="exposure"):
        backtest_metrics([1.0, 2.0], exposure=[True])
