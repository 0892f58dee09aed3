"""A Backtrader strategy class (user or model code) run on the engines' broker, and its report.

Inside the sandbox, :func:`run_strategy_class` runs the class with Backtrader on the
run's broker (:func:`~alphadesk.backtest.broker.backtrader_broker`: cash, commission,
slippage, fills at the next open) and records the account value and position at every
close, every fill and every round trip as a JSON-ready :class:`NativeReport`. Outside, the
parent validates that report (it comes from untrusted code) and rebuilds the same
:class:`~alphadesk.backtest.models.BacktestResult` the built-in strategies give, so
metrics and tables are computed by our code, not the strategy's.

Sizing: ``self.buy()`` / ``self.sell()`` without a size use the run's :class:`Sizing`
(whole shares of the account value at the signal bar's close); a sell while long (or a
buy while short) closes the position. In long/flat runs a sell with no position opens
nothing. Explicit sizes and ``order_target_*`` calls are the strategy's own.

Warm-up: bars before ``start`` feed the indicators, but orders placed there are dropped
and the report starts at ``start``, as ``trade_from`` does for the built-in strategies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import backtrader as bt
import numpy as np
import pandas as pd
from pydantic import BaseModel, Field, field_validator

from .broker import backtrader_broker
from .models import BacktestConfig, BacktestResult, Fill, Trade

__all__ = ["NativeReport", "result_from_report", "run_strategy_class"]


class FillRow(BaseModel):
    bar: int = Field(ge=0)
    size: int
    price: float = Field(gt=0, allow_inf_nan=False)
    commission: float = Field(ge=0, allow_inf_nan=False)
    open: float = Field(gt=0, allow_inf_nan=False)


class TradeRow(BaseModel):
    size: int
    entry_bar: int = Field(ge=0)
    exit_bar: int | None = Field(default=None, ge=0)
    pnl: float = Field(allow_inf_nan=False)
    commission: float = Field(ge=0, allow_inf_nan=False)
    pnl_net: float = Field(allow_inf_nan=False)
    bars: int = Field(ge=0)


class NativeReport(BaseModel):
    """What the sandboxed run reports: one row per bar from ``start`` on."""

    strategy: str
    params: dict[str, Any]
    start: int = Field(ge=0)
    equity: list[float]
    position: list[int]
    fills: list[FillRow]
    trades: list[TradeRow]
    rejected: int = Field(ge=0)

    @field_validator("equity")
    @classmethod
    def _finite(cls, values: list[float]) -> list[float]:
        if not all(math.isfinite(v) for v in values):
            raise ValueError("the account value must be finite at every bar")
        return values


class _Recorder(bt.Analyzer):
    """Account value and position at each close, fills and opening sizes, from ``start``."""

    params = (("start", 0),)

    def start(self) -> None:
        self.equity: list[float] = []
        self.position: list[int] = []
        self.fills: list[tuple[float, int, float, float, float]] = []
        self.rejected = 0
        self.opening_size: dict[int, int] = {}

    def next(self) -> None:
        if len(self.data) - 1 >= self.p.start:
            self.equity.append(float(self.strategy.broker.getvalue()))
            self.position.append(int(self.strategy.getposition(self.data).size))

    def notify_order(self, order: Any) -> None:
        for bit in order.executed.iterpending():
            comm = bit.closedcomm + bit.openedcomm
            self.fills.append((bit.dt, int(bit.size), bit.price, comm, self.data.open[0]))
        if order.status == order.Margin:
            self.rejected += 1

    def notify_trade(self, trade: Any) -> None:
        if trade.justopened:
            self.opening_size[trade.ref] = int(trade.size)


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


def run_strategy_class(
    cls: type[bt.Strategy],
    frame: pd.DataFrame,
    config: BacktestConfig,
    *,
    params: Mapping[str, str] | None = None,
    start: int = 0,
) -> NativeReport:
    """Run the Backtrader strategy ``cls`` on ``frame`` with the run's broker and sizing.

    Args:
        cls: A ``bt.Strategy`` subclass.
        frame: Validated OHLCV bars (tz-aware index).
        config: Cash, costs, sizing, long/short.
        params: Strategy parameters as text, converted to the type of each default.
        start: First bar (position) to trade; earlier bars only warm up.

    Returns:
        The report (every field JSON-ready).
    """
    chosen = _coerce(cls, params or {})
    feed = frame[["open", "high", "low", "close", "volume"]].copy()
    feed.index = feed.index.tz_convert("UTC").tz_localize(None)
    cerebro = bt.Cerebro(stdstats=False, maxcpus=1)
    cerebro.adddata(bt.feeds.PandasData(dataname=feed, openinterest=None))
    cerebro.broker = backtrader_broker(config)
    cerebro.addsizer(_ConfigSizer, config=config)
    cerebro.addstrategy(_gated(cls, start), **chosen)
    cerebro.addanalyzer(_Recorder, _name="recorder", start=start)
    strat = cerebro.run()[0]
    rec = strat.analyzers.recorder
    nums = np.array([bt.date2num(t.to_pydatetime()) for t in feed.index])

    def bar_of(num: float) -> int:
        return int(np.abs(nums - num).argmin())

    fills = [
        FillRow(bar=bar_of(dt), size=size, price=price, commission=comm, open=open_)
        for dt, size, price, comm, open_ in rec.fills
    ]
    trades = []
    last = len(frame) - 1
    for trade in (t for ts in strat._trades[strat.data].values() for t in ts):
        entry = bar_of(trade.dtopen)
        exit_ = bar_of(trade.dtclose) if trade.isclosed else None
        trades.append(
            TradeRow(
                size=rec.opening_size.get(trade.ref, int(trade.size)),
                entry_bar=entry,
                exit_bar=exit_,
                pnl=trade.pnl,
                commission=trade.commission,
                pnl_net=trade.pnlcomm if trade.isclosed else trade.pnl - trade.commission,
                bars=int(trade.barlen) if trade.isclosed else last - entry,
            )
        )
    trades.sort(key=lambda t: t.entry_bar)
    return NativeReport(
        strategy=cls.__name__,
        params={k: v for k in strat.params._getkeys() if _plain(v := getattr(strat.params, k))},
        start=start,
        equity=rec.equity,
        position=rec.position,
        fills=fills,
        trades=trades,
        rejected=rec.rejected,
    )


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


def result_from_report(
    report: NativeReport,
    frame: pd.DataFrame,
    config: BacktestConfig,
    *,
    symbol: str | None = None,
    name: str | None = None,
    notes: list[str] | None = None,
) -> BacktestResult:
    """The :class:`BacktestResult` of a report, checked against the bars it claims to cover.

    Raises:
        ValueError: The report does not fit the bars (wrong length, bars out of range).
    """
    times = frame.index[report.start :]
    n, total = len(times), len(frame)
    if report.start >= total or len(report.equity) != n or len(report.position) != n:
        raise ValueError(
            f"the report covers {len(report.equity)} bars from bar {report.start}, the run had {n}"
        )
    bars = [f.bar for f in report.fills] + [t.entry_bar for t in report.trades]
    bars += [t.exit_bar for t in report.trades if t.exit_bar is not None]
    if any(not report.start <= b < total for b in bars):
        raise ValueError("the report has fills or trades outside the traded bars")
    index = frame.index
    fills = [
        Fill(
            time=index[f.bar],
            size=f.size,
            price=f.price,
            commission=f.commission,
            slippage=abs(f.size) * abs(f.price - f.open),
        )
        for f in report.fills
    ]

    def price_at(bar: int | None) -> float | None:
        prices = [f.price for f in report.fills if f.bar == bar]
        return prices[-1] if prices else None

    trades = [
        Trade(
            size=t.size,
            entry_time=index[t.entry_bar],
            entry_price=price_at(t.entry_bar) or float("nan"),
            exit_time=None if t.exit_bar is None else index[t.exit_bar],
            exit_price=price_at(t.exit_bar),
            pnl=t.pnl,
            commission=t.commission,
            pnl_net=t.pnl_net,
            bars=t.bars,
        )
        for t in report.trades
    ]
    return BacktestResult(
        engine="backtrader",
        config=config,
        equity=pd.Series(report.equity, index=times, name="equity", dtype=np.float64),
        position=pd.Series(report.position, index=times, name="position", dtype=np.int64),
        fills=fills,
        trades=trades,
        symbol=symbol,
        strategy={"name": name or report.strategy, "params": report.params},
        rejected=report.rejected,
        notes=list(notes or []),
    )
