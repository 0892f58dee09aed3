"""A strategy run as the sandbox runs it gives Backtrader's own account, bar by bar.

Strategy code gets its bars one at a time and answers with its orders; a broker outside
trades them and ``replay_fills`` recomputes prices of market fills, costs, the account
value and the round trips from the bars. The reference here is Backtrader itself, run
in-process on the same broker with every bar preloaded, its value recorded at every close
by an analyzer the strategy cannot touch.
"""

from __future__ import annotations

from typing import Any

import backtrader as bt
import numpy as np
import pandas as pd
import pytest
import talib

from alphadesk.backtest import BacktestConfig, Costs, Sizing
from alphadesk.backtest.broker import backtrader_broker
from alphadesk.backtest.fast import FillClaim, ReplayMismatch, replay_fills
from alphadesk.backtest.native import NativeReport, result_from_report, run_strategy_class


class _Busy(bt.Strategy):
    """Scales in, takes profits in parts, reverses to short, and places limit orders."""

    def next(self) -> None:
        bar = len(self)
        if bar % 40 == 5:
            self.buy(size=50)
        elif bar % 40 == 10:
            self.buy(size=30)  # adds to the long: a new average price
        elif bar % 40 == 15:
            self.buy(size=20, exectype=bt.Order.Limit, price=self.data.close[0] * 0.99)
        elif bar % 40 == 20:
            self.sell(size=40)  # part of the long
        elif bar % 40 == 25:
            self.sell(size=self.position.size + 60)  # reverses to a short of 60
        elif bar % 40 == 35:
            self.close()


class _Truth(bt.Analyzer):
    def start(self) -> None:
        self.values: list[float] = []
        self.positions: list[int] = []

    def next(self) -> None:
        self.values.append(self.strategy.broker.getvalue())
        self.positions.append(int(self.strategy.position.size))


def _backtrader(frame: pd.DataFrame, config: BacktestConfig, strategy: type = _Busy) -> Any:
    feed = frame[["open", "high", "low", "close", "volume"]].copy()
    feed.index = feed.index.tz_convert("UTC").tz_localize(None)
    cerebro = bt.Cerebro(stdstats=False)
    cerebro.adddata(bt.feeds.PandasData(dataname=feed, openinterest=None))
    cerebro.broker = backtrader_broker(config)
    cerebro.addstrategy(strategy)
    cerebro.addanalyzer(_Truth, _name="truth")
    return cerebro.run()[0]


@pytest.fixture(scope="module")
def frame(bars) -> pd.DataFrame:
    return bars("MSFT", "2006-01-01", "2007-12-31")


@pytest.mark.parametrize(
    "costs",
    [Costs(0.001, "percent", 0.0005), Costs(0.01, "per_share", 0.001)],
    ids=["percent", "per_share"],
)
def test_replayed_fills_give_backtraders_account(frame: pd.DataFrame, costs: Costs) -> None:
    config = BacktestConfig(cash=20_000.0, costs=costs, sizing=Sizing(fraction=0.5))
    report = run_strategy_class(_Busy, frame, config)
    assert any(f.price is not None for f in report.fills)  # the limit orders filled
    result = result_from_report(report, frame, config)
    truth = _backtrader(frame, config)
    assert len(result.equity) == len(truth.analyzers.truth.values) == len(frame)
    assert result.equity.tolist() == pytest.approx(truth.analyzers.truth.values, abs=1e-6)
    assert result.position.tolist() == truth.analyzers.truth.positions
    assert result.position.min() < 0 < result.position.max()
    closed = [t for ts in truth._trades[truth.data].values() for t in ts if t.isclosed]
    assert len(result.closed_trades) == len(closed) > 5
    for ours, theirs in zip(result.closed_trades, closed, strict=True):
        assert ours.pnl == pytest.approx(theirs.pnl, abs=1e-6)
        assert ours.commission == pytest.approx(theirs.commission, abs=1e-6)


class _Indicators(bt.Strategy):
    """Backtrader's and TA-Lib's indicators, and TA-Lib called on the bars so far."""

    def __init__(self) -> None:
        self.ema = bt.talib.EMA(self.data.close, timeperiod=20)  # seeded: needs all the past
        self.sma = bt.talib.SMA(self.data.close, timeperiod=30)
        self.rsi = bt.indicators.RSI(self.data.close, period=14)

    def next(self) -> None:
        closes = np.array(self.data.close.get(size=len(self)))
        spread = talib.STDDEV(closes, timeperiod=10)[-1]
        close = self.data.close[0]
        if not self.position and close > self.ema[0] > self.sma[0] and self.rsi[0] < 70:
            self.buy(size=100)
        elif self.position and (close < self.ema[0] or spread > 0.04 * close):
            self.close()


def test_streamed_indicators_trade_as_preloaded_ones(frame: pd.DataFrame) -> None:
    # Streamed bars compute indicators bar by bar; Backtrader's default computes them at
    # once over every bar. A strategy that does not peek trades the same either way.
    config = BacktestConfig(costs=Costs(0.001, "percent", 0.0005))
    report = run_strategy_class(_Indicators, frame, config)
    result = result_from_report(report, frame, config)
    truth = _backtrader(frame, config, _Indicators)
    assert len(result.fills) > 6
    assert result.equity.tolist() == pytest.approx(truth.analyzers.truth.values, abs=1e-6)
    assert result.position.tolist() == truth.analyzers.truth.positions


def test_a_report_of_made_up_figures_gives_the_truth(frame: pd.DataFrame) -> None:
    # What a strategy that writes its own report may claim: a rising curve, no fills.
    # Only the (absent) orders are read: the account stays at its cash.
    rising = [100_000.0 * 1.01**i for i in range(len(frame))]
    forged = NativeReport.model_validate(
        {"strategy": "Forged", "params": {}, "bars": len(frame), "fills": [], "rejected": 0}
        | {"equity": rising, "trades": []}
    )
    result = result_from_report(forged, frame, BacktestConfig())
    assert set(result.equity) == {100_000.0}
    assert result.metrics().cumulative_return == 0.0 and result.metrics().sharpe is None


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        ([FillClaim(3, 10, None), FillClaim(2, -10, None)], "out of order"),
        ([FillClaim(10_000, 10, None)], "outside bars"),
        ([FillClaim(3, 10, 1.0)], "outside the bar's range"),
        ([FillClaim(3, 10**6, None)], "needs more cash"),
    ],
)
def test_fills_backtrader_could_not_make_are_refused(
    frame: pd.DataFrame, claims: list[FillClaim], message: str
) -> None:
    with pytest.raises(ReplayMismatch, match=message):
        replay_fills(frame, claims, BacktestConfig())


class _Quitter(bt.Strategy):
    def next(self) -> None:
        if len(self) == 10:
            self.env.runstop()  # ends the backtest here, as if it had finished


def test_a_run_that_stops_early_is_an_error(frame: pd.DataFrame) -> None:
    report = run_strategy_class(_Quitter, frame, BacktestConfig())
    with pytest.raises(ValueError, match=f"stopped after 10 of {len(frame)} bars"):
        result_from_report(report, frame, BacktestConfig())
