"""The reference engine: the same target series traded by Backtrader itself.

The target rides into Backtrader as an extra data line (``signal``) next to the OHLCV
lines; :class:`TargetStrategy` reads it at each bar's close and orders with
``order_target_size``, and Backtrader's own ``BackBroker`` fills, charges and values
everything. Its results are read back into the same :class:`BacktestResult` the fast
path returns, so the two compare fill by fill.
"""

from __future__ import annotations

from typing import Any

import backtrader as bt
import numpy as np
import pandas as pd

from .broker import backtrader_broker
from .fast import target_array
from .frame import validate_frame
from .models import BacktestConfig, BacktestResult, Fill, Sizing, Trade

__all__ = ["TargetStrategy", "run_backtrader"]


class _TargetData(bt.feeds.PandasData):
    """OHLCV plus the target position as a line named ``signal``."""

    lines = ("signal", "dividend")
    params = (("signal", "signal"), ("dividend", "dividend"), ("openinterest", None))


class TargetStrategy(bt.Strategy):
    """Hold the position the ``signal`` line asks for: −1 short, 0 flat, 1 long.

    When the sign of the position differs from the signal at a bar's close, it orders the
    new target size (``sizing`` at that close and account value); otherwise it does
    nothing. It records the account value at each close, every fill and every round trip.
    """

    params = (("sizing", Sizing()),)

    def __init__(self) -> None:
        self.values: list[float] = []
        self.positions_held: list[int] = []
        self.fills: list[tuple[float, int, float, float, float]] = []
        self.rejected = 0
        self.opening_size: dict[int, int] = {}  # by trade ref: shares when it opened
        self.held_at_close = 0

    def next(self) -> None:
        # An ex-date's dividend goes to the position held at the previous close (a short
        # pays it), credited at this close, after any fill at this bar's open.
        dividend = self.held_at_close * float(self.data.dividend[0])
        if dividend:
            self.broker.cash += dividend
            # getvalue() returns the value cached at the broker's step: recompute it (the
            # public get_value(datas) returns the positions' value only).
            self.broker._get_value()
        self.values.append(self.broker.getvalue())
        held = self.position.size
        self.positions_held.append(held)
        self.held_at_close = held
        want = int(self.data.signal[0])
        if (held > 0) - (held < 0) == want:
            return
        close = self.data.close[0]
        size = 0 if want == 0 else want * self.p.sizing.size(self.broker.getvalue(), close)
        if size != held:
            self.order_target_size(target=size)

    def notify_order(self, order: Any) -> None:
        for bit in order.executed.iterpending():
            self.fills.append(
                (
                    bit.dt,
                    int(bit.size),
                    bit.price,
                    bit.closedcomm + bit.openedcomm,
                    self.data.open[0],
                )
            )
        if order.status == order.Margin:
            self.rejected += 1

    def notify_trade(self, trade: Any) -> None:
        if trade.justopened:
            self.opening_size[trade.ref] = int(trade.size)

    def round_trips(self) -> list[Any]:
        """Backtrader's own Trade objects, closed and open, in the order they opened."""
        return [t for trades in self._trades[self.data].values() for t in trades]


def _cerebro(feed: pd.DataFrame, config: BacktestConfig) -> bt.Cerebro:
    cerebro = bt.Cerebro(stdstats=False, maxcpus=1)
    cerebro.adddata(_TargetData(dataname=feed))
    cerebro.broker = backtrader_broker(config)
    cerebro.addstrategy(TargetStrategy, sizing=config.sizing)
    return cerebro


def run_backtrader(
    frame: pd.DataFrame,
    target: pd.Series | np.ndarray,
    config: BacktestConfig | None = None,
    *,
    symbol: str | None = None,
    strategy: dict[str, Any] | None = None,
    notes: list[str] | None = None,
) -> BacktestResult:
    """Trade a target position series with Backtrader (the reference engine).

    Same arguments and result as :func:`alphadesk.backtest.fast.run_positions`.
    """
    config = config or BacktestConfig()
    frame = validate_frame(frame)
    wanted = target_array(target, frame.index, config.long_short)
    feed = frame[["open", "high", "low", "close", "volume"]].copy()
    feed["signal"] = wanted.astype(np.float64)
    feed["dividend"] = (
        frame["dividend"].fillna(0.0).to_numpy() if "dividend" in frame.columns else 0.0
    )
    # Backtrader keeps naive datetimes; each bar is named by its position (one per
    # minute from an origin) so fills map back to the frame's own index exactly.
    feed.index = pd.date_range("2000-01-01", periods=len(feed), freq="min")
    strat = _cerebro(feed, config).run()[0]
    times = frame.index
    origin = bt.date2num(feed.index[0].to_pydatetime())

    def bar_of(num: float) -> int:
        return round((num - origin) * 24 * 60)

    fills = [
        Fill(
            time=times[bar_of(dt)],
            size=size,
            price=price,
            commission=comm,
            slippage=abs(size) * abs(price - open_),
        )
        for dt, size, price, comm, open_ in strat.fills
    ]
    trades = [
        _trade(t, times, bar_of, fills, strat.opening_size[t.ref]) for t in strat.round_trips()
    ]
    return BacktestResult(
        engine="backtrader",
        config=config,
        equity=pd.Series(strat.values, index=times, name="equity", dtype=np.float64),
        position=pd.Series(strat.positions_held, index=times, name="position", dtype=np.int64),
        fills=fills,
        trades=trades,
        symbol=symbol,
        strategy=strategy,
        rejected=strat.rejected,
        notes=list(notes or []),
    )


def _trade(trade: Any, times: pd.Index, bar_of: Any, fills: list[Fill], size: int) -> Trade:
    """A Backtrader Trade as ours; prices are those of the fills that opened and closed it."""
    entry_time = times[bar_of(trade.dtopen)]
    exit_time = times[bar_of(trade.dtclose)] if trade.isclosed else None
    entry = next(f for f in fills if f.time == entry_time)
    exit_ = next(f for f in fills if f.time == exit_time) if exit_time is not None else None
    return Trade(
        size=size,
        entry_time=entry_time,
        entry_price=entry.price,
        exit_time=exit_time,
        exit_price=None if exit_ is None else exit_.price,
        pnl=trade.pnl,
        commission=trade.commission,
        pnl_net=trade.pnlcomm if trade.isclosed else trade.pnl - trade.commission,
        bars=int(trade.barlen) if trade.isclosed else len(times) - 1 - times.get_loc(entry_time),
    )
