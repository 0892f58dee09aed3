"""The signals' indicators against Backtrader's own (bt.indicators), on real bars.

The engines trade one precomputed signal; these tests show that signal is what a
Backtrader user would compute with Backtrader's indicators, so the fast path and a
hand-written Backtrader strategy agree too.
"""

from __future__ import annotations

import backtrader as bt
import numpy as np
import pandas as pd
import pytest

from alphadesk.analytics import macd, rsi, sma
from alphadesk.backtest import BacktestConfig, Costs, run_strategy


class _Recorder(bt.Strategy):
    """Records Backtrader's SMA(20), SMA(50), MACD(12, 26, 9) and RSI(14) at each bar."""

    def __init__(self) -> None:
        self.fast = bt.indicators.SMA(self.data.close, period=20)
        self.slow = bt.indicators.SMA(self.data.close, period=50)
        self.macd = bt.indicators.MACD(self.data.close)
        self.rsi = bt.indicators.RSI(self.data.close, period=14, safediv=True)
        self.rows: list[tuple[float, ...]] = []

    def next(self) -> None:
        self.rows.append(
            (self.fast[0], self.slow[0], self.macd.macd[0], self.macd.signal[0], self.rsi[0])
        )


class _NativeSmaCross(bt.Strategy):
    """The crossover as a Backtrader user writes it: bt.indicators.CrossOver, 95 % in."""

    def __init__(self) -> None:
        fast = bt.indicators.SMA(self.data.close, period=20)
        slow = bt.indicators.SMA(self.data.close, period=50)
        self.above = fast > slow
        self.fills: list[tuple[int, int, float]] = []

    def next(self) -> None:
        if self.above[0] and not self.position:
            size = int(np.floor(0.95 * self.broker.getvalue() / self.data.close[0]))
            self.order_target_size(target=size)
        elif not self.above[0] and self.position:
            self.order_target_size(target=0)

    def notify_order(self, order) -> None:
        for bit in order.executed.iterpending():
            self.fills.append((len(self), int(bit.size), bit.price))


def _run(frame: pd.DataFrame, strategy: type, **broker: float) -> bt.Strategy:
    cerebro = bt.Cerebro(stdstats=False)
    feed = frame.copy()
    feed.index = feed.index.tz_localize(None)
    cerebro.adddata(bt.feeds.PandasData(dataname=feed, openinterest=None))
    cerebro.broker = bt.brokers.BackBroker(cash=100_000.0, slip_open=True, **broker)
    cerebro.addstrategy(strategy)
    return cerebro.run()[0]


@pytest.fixture(scope="module")
def frame(bars) -> pd.DataFrame:
    return bars("MSFT", "2003-01-01", "2008-12-31")


def test_indicators_match_backtrader_after_warm_up(frame: pd.DataFrame) -> None:
    rows = np.array(_run(frame, _Recorder).rows)  # from bar 50 on (the slow SMA's period)
    start = len(frame) - len(rows)
    ours = np.column_stack(
        [
            sma(frame, 20),
            sma(frame, 50),
            macd(frame)["macd"],
            macd(frame)["signal"],
            rsi(frame, 14),
        ]
    )[start:]
    np.testing.assert_allclose(rows[:, :2], ours[:, :2], rtol=1e-10)
    # EMAs and Wilder's average are seeded differently; after 250 bars the seed is gone.
    np.testing.assert_allclose(rows[250:, 2:], ours[250:, 2:], rtol=1e-6, atol=1e-6)


def test_a_native_backtrader_crossover_makes_the_same_fills(frame: pd.DataFrame) -> None:
    native = _run(frame, _NativeSmaCross, slip_perc=0.0005)
    ours = run_strategy(
        "sma_cross", frame, config=BacktestConfig(costs=Costs(0.0, slippage=0.0005))
    )
    assert len(native.fills) == len(ours.fills) > 10
    for (bar, size, price), fill in zip(native.fills, ours.fills, strict=True):
        assert frame.index[bar - 1] == fill.time
        assert (size, price) == (fill.size, fill.price)
