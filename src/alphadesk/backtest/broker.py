"""Backtrader's broker as every backtest here configures it, and the broker that trades
strategy code's orders.

The reference engine (:mod:`.reference`) and strategy code (:mod:`.native`) both trade on
it, so their fills follow the same rules as the fast path. Strategy code runs elsewhere
(in the sandbox) on bars streamed to it one at a time (:mod:`.stream`); the orders it
answers each bar with are traded here, by :func:`trade_orders`, on the real bars.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import backtrader as bt
import pandas as pd

from .fast import FillClaim
from .models import BacktestConfig, Costs
from .stream import Cancel, Op, Row, StreamError, bar_rows

__all__ = ["Traded", "backtrader_broker", "trade_orders"]


class _StockCommission(bt.CommInfoBase):
    """Shares: cash pays the full value, short sales credit it, no margin or leverage."""

    params = (
        ("stocklike", True),
        ("commtype", bt.CommInfoBase.COMM_PERC),
        ("percabs", True),
    )


def backtrader_broker(
    config: BacktestConfig, kind: type[bt.brokers.BackBroker] = bt.brokers.BackBroker
) -> bt.brokers.BackBroker:
    """Backtrader's broker with the run's cash, slippage and commission (both engines' rules)."""
    costs: Costs = config.costs
    broker = kind(
        cash=float(config.cash),
        slip_perc=costs.slippage,
        slip_open=True,  # market orders fill at the open: let the slip apply there
        slip_match=True,
        slip_out=False,
    )
    commtype = (
        bt.CommInfoBase.COMM_PERC
        if costs.commission_type == "percent"
        else bt.CommInfoBase.COMM_FIXED
    )
    broker.addcommissioninfo(_StockCommission(commission=costs.commission, commtype=commtype))
    return broker


Exchange = Callable[[list[Row]], "list[Op] | None"]


@dataclass
class Traded:
    """What the broker made of a strategy's orders: fills (market ones unpriced: the
    replay prices them), orders refused for cash, and the bars the strategy was given."""

    fills: list[FillClaim] = field(default_factory=list)
    rejected: int = 0
    bars: int = 0


class _Trader(bt.Strategy):
    """The broker's side: at each bar's close, send the bar, take the strategy's orders.

    Orders are created here, on this process's broker, from what the strategy said it
    placed: the strategy's own broker only shows it its account; this one trades.
    """

    params = (("exchange", None), ("rows", None), ("start", 0), ("traded", None))

    def __init__(self) -> None:
        self.orders: dict[int, Any] = {}  # the strategy's numbers → our orders
        self.bar_of = {row[0]: i for i, row in enumerate(self.p.rows)}

    def next(self) -> None:
        bar = len(self) - 1
        if bar < self.p.start:
            return  # the warm-up bars go with the first trading bar: they are its past
        first = 0 if bar == self.p.start else bar
        self.p.traded.bars = bar + 1
        ops = self.p.exchange(self.p.rows[first : bar + 1])
        if ops is None:  # the strategy ended
            self.env.runstop()
            return
        for op in ops:
            self._apply(op)

    def _apply(self, op: Op) -> None:
        if isinstance(op, Cancel):
            if op.ref in self.orders:
                self.broker.cancel(self.orders[op.ref])
            return
        linked = {}
        for name in ("oco", "parent"):
            ref = getattr(op, name)
            if ref is not None and ref not in self.orders:
                raise StreamError(f"order {op.ref} names an unknown {name} order {ref}")
            linked[name] = None if ref is None else self.orders[ref]
        place = self.broker.buy if op.side == "buy" else self.broker.sell
        self.orders[op.ref] = place(
            self, self.data, op.size, price=op.price, plimit=op.plimit,
            exectype=op.exectype, valid=op.valid, tradeid=op.tradeid,
            trailamount=op.trailamount, trailpercent=op.trailpercent,
            transmit=op.transmit, _checksubmit=op.checksubmit, **linked,
        )  # fmt: skip

    def notify_order(self, order: Any) -> None:
        market = order.exectype == bt.Order.Market
        for bit in order.executed.iterpending():
            price = None if market else float(bit.price)
            self.p.traded.fills.append(FillClaim(self.bar_of[bit.dt], int(bit.size), price))
        if order.status == order.Margin:
            self.p.traded.rejected += 1


def trade_orders(
    frame: pd.DataFrame, config: BacktestConfig, exchange: Exchange, *, start: int = 0
) -> Traded:
    """Run the broker over ``frame``, trading the orders ``exchange`` answers each bar with.

    ``exchange(rows)`` gives the strategy the bars ``rows`` and returns the orders it
    placed by their last close (``None`` once it has ended). Orders fill from the next bar
    on, under the run's broker rules, as Backtrader fills them.

    Raises:
        StreamError: An order naming an unknown order (or what ``exchange`` raises).
    """
    feed = frame[["open", "high", "low", "close", "volume"]].copy()
    feed.index = feed.index.tz_convert("UTC").tz_localize(None)
    traded = Traded()
    cerebro = bt.Cerebro(stdstats=False, maxcpus=1)
    cerebro.adddata(bt.feeds.PandasData(dataname=feed, openinterest=None))
    cerebro.broker = backtrader_broker(config)
    rows = bar_rows(frame)
    cerebro.addstrategy(_Trader, exchange=exchange, rows=rows, start=start, traded=traded)
    cerebro.run()
    return traded
