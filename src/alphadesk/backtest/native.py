"""A Backtrader strategy class (user or model code) run on bars streamed to it, and its report.

Where the strategy runs (the sandbox), :func:`run_streamed` feeds Backtrader bars one
message at a time (preload and vectorised indicators off: indicators compute bar by bar,
as live), and answers each message with the orders the strategy placed
(:mod:`.stream`); no later bar exists there yet. ``self.data.close[1]`` is an
``IndexError``, as it would be live. The strategy trades on a local copy of the run's
broker, which only shows it its account: outside, :func:`~.broker.trade_orders` trades
the orders it answered with on the real bars, and :func:`result_from_report` replays
those fills (:func:`~.fast.replay_fills`) to compute prices, costs, the account and the
round trips. Strategy code chooses its orders, from the bars up to now; it cannot choose
its fills or its figures.

Sizing: ``self.buy()`` / ``self.sell()`` without a size use the run's :class:`Sizing`
(whole shares of the account value at the signal bar's close); a sell while long (or a
buy while short) closes the position. In long/flat runs a sell with no position opens
nothing. Explicit sizes and ``order_target_*`` calls are the strategy's own.

Warm-up: bars before ``start`` feed the indicators, but orders placed there are dropped
and the result starts at ``start``, as ``trade_from`` does for the built-in strategies.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import backtrader as bt
import pandas as pd
from pydantic import BaseModel, Field

from .broker import Traded, backtrader_broker, trade_orders
from .fast import FillClaim, replay_fills
from .models import BacktestConfig, BacktestResult
from .stream import Cancel, Hello, Op, Placed, Row

__all__ = [
    "NativeReport",
    "report_from_trades",
    "result_from_report",
    "run_strategy_class",
    "run_streamed",
]

# Gives the strategy's side its next bars, after sending the orders placed since the last
# ones (``None`` before the first); ``None`` back at the end of the bars.
Source = Callable[[list[Op] | None], list[Row] | None]


class FillRow(BaseModel):
    """One executed part of an order: its bar, signed size and, for a priced order, price."""

    bar: int = Field(ge=0)
    size: int
    price: float | None = Field(default=None, gt=0, allow_inf_nan=False)


class NativeReport(BaseModel):
    """A strategy's run: its name and parameters (its own labels) and the fills the
    broker outside made of its orders (:func:`report_from_trades`); the figures are
    computed from them and the real bars (:func:`result_from_report`)."""

    strategy: str = Field(max_length=200)
    params: dict[str, Any]
    bars: int = Field(ge=0, description="Bars the strategy was run through.")
    fills: list[FillRow]
    rejected: int = Field(ge=0)


class _StreamedBars(bt.feed.DataBase):
    """Bars as they come: each message's once the orders for the last ones are sent."""

    params = (("source", None),)

    def start(self) -> None:
        super().start()
        self._rows: deque[Row] = deque()
        self._sent_any = False

    def _load(self) -> bool:
        if not self._rows:
            broker = self._env.broker
            rows = self.p.source(broker.take_ops() if self._sent_any else None)
            self._sent_any = True
            if not rows:
                return False
            self._rows.extend(rows)
        num, open_, high, low, close, volume = self._rows.popleft()
        lines = self.lines
        lines.datetime[0], lines.open[0], lines.high[0] = num, open_, high
        lines.low[0], lines.close[0], lines.volume[0] = low, close, volume
        return True


class _RecordingBroker(bt.brokers.BackBroker):
    """The run's broker, noting each order the strategy places or cancels."""

    def start(self) -> None:
        super().start()
        self._ops: list[Op] = []
        self._inside = False

    def take_ops(self) -> list[Op]:
        ops, self._ops = self._ops, []
        return ops

    def next(self) -> None:
        self._inside = True  # cancellations from here on are the broker's own
        try:
            super().next()
        finally:
            self._inside = False

    def buy(self, owner: Any, data: Any, size: Any, *args: Any, **kwargs: Any) -> Any:
        order = super().buy(owner, data, size, *args, **kwargs)
        return self._placed("buy", order, kwargs.get("_checksubmit", True))

    def sell(self, owner: Any, data: Any, size: Any, *args: Any, **kwargs: Any) -> Any:
        order = super().sell(owner, data, size, *args, **kwargs)
        return self._placed("sell", order, kwargs.get("_checksubmit", True))

    def cancel(self, order: Any, bracket: bool = False) -> Any:
        if not self._inside and not bracket:
            self._ops.append(Cancel(ref=order.ref))
        return super().cancel(order, bracket=bracket)

    def _placed(self, side: str, order: Any, checksubmit: Any) -> Any:
        p = order.p
        oco = self._ocos.get(order.ref)
        self._ops.append(
            Placed.model_validate(
                {
                    "ref": order.ref,
                    "side": side,
                    "size": abs(order.created.size),
                    "exectype": order.exectype,
                    "price": p.price,
                    "plimit": p.pricelimit,
                    "trailamount": p.trailamount,
                    "trailpercent": p.trailpercent,
                    "valid": order.valid,
                    "tradeid": p.tradeid,
                    "oco": None if oco in (None, order.ref) else oco,
                    "parent": None if p.parent is None else p.parent.ref,
                    "transmit": p.transmit,
                    "checksubmit": bool(checksubmit),
                }
            )
        )
        return order


class _ConfigSizer(bt.Sizer):
    """The run's :class:`Sizing` for orders without a size (see the module docstring)."""

    params = (("config", BacktestConfig()),)

    def _getsizing(self, comminfo: Any, cash: float, data: Any, isbuy: bool) -> int:
        held = self.strategy.getposition(data).size
        if (isbuy and held < 0) or (not isbuy and held > 0):
            return abs(int(held))
        if not isbuy and not self.p.config.long_short:
            return 0
        return int(self.p.config.sizing.size(self.broker.getvalue(), data.close[0]))


def _gated(cls: type[bt.Strategy], start: int) -> type[bt.Strategy]:
    """``cls`` whose orders before bar ``start`` are dropped (those bars only warm up)."""
    if start == 0:
        return cls

    def buy(self: Any, *args: Any, **kwargs: Any) -> Any:
        return cls.buy(self, *args, **kwargs) if len(self.data) - 1 >= start else None

    def sell(self: Any, *args: Any, **kwargs: Any) -> Any:
        return cls.sell(self, *args, **kwargs) if len(self.data) - 1 >= start else None

    return type(cls.__name__, (cls,), {"buy": buy, "sell": sell, "__module__": cls.__module__})


def _coerce(cls: type[bt.Strategy], params: Mapping[str, str]) -> dict[str, Any]:
    """String parameters (from a command line) as the types of the strategy's defaults."""
    defaults = dict(cls.params._getitems())
    out: dict[str, Any] = {}
    for key, text in params.items():
        if key not in defaults:
            known = ", ".join(defaults) or "none"
            raise ValueError(f"{cls.__name__} has no parameter {key!r}; its parameters: {known}")
        default = defaults[key]
        if isinstance(default, bool):
            out[key] = str(text).strip().lower() in ("1", "true", "yes", "on")
        elif isinstance(default, int | float):
            try:
                out[key] = type(default)(text)
            except ValueError:
                raise ValueError(f"{key} must be {type(default).__name__}, got {text!r}") from None
        else:
            out[key] = text
    return out


def run_streamed(
    cls: type[bt.Strategy],
    config: BacktestConfig,
    source: Source,
    hello: Callable[[Hello], None],
    *,
    params: Mapping[str, str] | None = None,
    start: int = 0,
) -> None:
    """The strategy's side: run ``cls`` on the bars ``source`` gives, answering each
    message with its orders; ``hello`` is told its name and parameters first.

    Args:
        cls: A ``bt.Strategy`` subclass.
        config: Cash, costs, sizing, long/short (of its local broker and sizer).
        source: Sends the orders placed since the last bars, returns the next bars.
        hello: Receives the strategy's name and parameters before any bar.
        params: Strategy parameters as text, converted to the type of each default.
        start: First bar (position) to trade; earlier bars only warm up.
    """
    chosen = _coerce(cls, params or {})
    every = dict(cls.params._getitems()) | chosen
    hello(Hello(strategy=cls.__name__, params={k: v for k, v in every.items() if _plain(v)}))
    cerebro = bt.Cerebro(stdstats=False, maxcpus=1, preload=False, runonce=False)
    cerebro.adddata(_StreamedBars(source=source))
    cerebro.broker = backtrader_broker(config, _RecordingBroker)
    cerebro.addsizer(_ConfigSizer, config=config)
    cerebro.addstrategy(_gated(cls, start), **chosen)
    cerebro.run()


def report_from_trades(hello: Hello, traded: Traded) -> NativeReport:
    """The report of a streamed run: the strategy's labels, the broker's fills."""
    return NativeReport(
        strategy=hello.strategy,
        params=hello.params,
        bars=traded.bars,
        fills=[FillRow(bar=f.bar, size=f.size, price=f.price) for f in traded.fills],
        rejected=traded.rejected,
    )


_END = object()


def run_strategy_class(
    cls: type[bt.Strategy],
    frame: pd.DataFrame,
    config: BacktestConfig,
    *,
    params: Mapping[str, str] | None = None,
    start: int = 0,
) -> NativeReport:
    """Run the trusted class ``cls`` in this process exactly as the sandbox runs code:
    its side on a thread, bars streamed to it, its orders traded by :func:`trade_orders`.

    Args:
        cls: A ``bt.Strategy`` subclass.
        frame: Validated OHLCV bars (tz-aware index).
        config: Cash, costs, sizing, long/short.
        params: Strategy parameters as text, converted to the type of each default.
        start: First bar (position) to trade; earlier bars only warm up.

    Returns:
        The report (every field JSON-ready).
    """
    to_strategy: queue.Queue[Any] = queue.Queue()
    to_broker: queue.Queue[Any] = queue.Queue()
    hellos: list[Hello] = []
    failed: list[BaseException] = []

    def source(ops: list[Op] | None) -> list[Row] | None:
        if ops is not None:
            to_broker.put(ops)
        rows = to_strategy.get()
        if rows is _END:
            to_strategy.put(_END)  # the end stays, as a closed pipe's does
            return None
        return rows

    def strategy_side() -> None:
        try:
            run_streamed(cls, config, source, hellos.append, params=params, start=start)
        except BaseException as exc:  # raised again in the caller's thread
            failed.append(exc)
        to_broker.put(None)

    def exchange(rows: list[Row]) -> list[Op] | None:
        to_strategy.put(rows)
        ops: list[Op] | None = to_broker.get()
        return ops

    worker = threading.Thread(target=strategy_side, daemon=True)
    worker.start()
    try:
        traded = trade_orders(frame, config, exchange, start=start)
    finally:
        to_strategy.put(_END)
        worker.join()
    if failed:
        raise failed[0]
    return report_from_trades(hellos[0], traded)


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


def result_from_report(
    report: NativeReport,
    frame: pd.DataFrame,
    config: BacktestConfig,
    *,
    start: int = 0,
    symbol: str | None = None,
    name: str | None = None,
    notes: list[str] | None = None,
) -> BacktestResult:
    """The :class:`BacktestResult` of a report's fills replayed on the real bars from ``start``.

    Only the orders come from the report: prices of market fills, costs, the account
    value, positions and round trips are recomputed (:func:`~.fast.replay_fills`).

    Raises:
        ValueError: The run stopped before the last bar, or its fills do not fit the bars
            (:class:`~.fast.ReplayMismatch`).
    """
    if report.bars != len(frame):
        raise ValueError(
            f"the strategy stopped after {report.bars} of {len(frame)} bars: a backtest must "
            "run to the last bar"
        )
    claims = [FillClaim(f.bar, f.size, f.price) for f in report.fills]
    return replay_fills(
        frame,
        claims,
        config,
        start=start,
        symbol=symbol,
        strategy={"name": name or report.strategy, "params": report.params},
        rejected=report.rejected,
        notes=notes,
    )
