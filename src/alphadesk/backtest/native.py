"""A Backtrader strategy class (user or model code) run on the engines' broker, and its report.

Inside the sandbox, :func:`run_strategy_class` runs the class with Backtrader on the
run's broker (:func:`~alphadesk.backtest.broker.backtrader_broker`: cash, commission,
slippage, fills at the next open) and reports its orders' fills, nothing more, as a
JSON-ready :class:`NativeReport`. That report comes from untrusted code, which can write
anything to any channel it can reach: outside, the parent replays the fills on the real
bars under the same broker rules (:func:`~.fast.replay_fills`) and computes the prices of
market fills, every cost, the account value and the round trips itself. Strategy code
chooses its orders; it cannot choose its figures.

Sizing: ``self.buy()`` / ``self.sell()`` without a size use the run's :class:`Sizing`
(whole shares of the account value at the signal bar's close); a sell while long (or a
buy while short) closes the position. In long/flat runs a sell with no position opens
nothing. Explicit sizes and ``order_target_*`` calls are the strategy's own.

Warm-up: bars before ``start`` feed the indicators, but orders placed there are dropped
and the result starts at ``start``, as ``trade_from`` does for the built-in strategies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import backtrader as bt
import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from .broker import backtrader_broker
from .fast import FillClaim, replay_fills
from .models import BacktestConfig, BacktestResult

__all__ = ["NativeReport", "result_from_report", "run_strategy_class"]


class FillRow(BaseModel):
    """One executed part of an order: its bar, signed size and, for a priced order, price."""

    bar: int = Field(ge=0)
    size: int
    price: float | None = Field(default=None, gt=0, allow_inf_nan=False)


class NativeReport(BaseModel):
    """What the sandboxed run reports: its orders' fills, nothing computed from them.

    It comes from untrusted code: the parent recomputes every price it can, the costs,
    the account and the round trips from these fills and the real bars
    (:func:`result_from_report`).
    """

    strategy: str = Field(max_length=200)
    params: dict[str, Any]
    bars: int = Field(ge=0, description="Bars the strategy was run through.")
    fills: list[FillRow]
    rejected: int = Field(ge=0)


class _Recorder(bt.Analyzer):
    """Every fill (market orders without a price: the parent prices them) and the bars run."""

    def start(self) -> None:
        self.fills: list[tuple[float, int, float | None]] = []
        self.rejected = 0
        self.bars = 0

    def notify_order(self, order: Any) -> None:
        market = order.exectype == bt.Order.Market
        for bit in order.executed.iterpending():
            self.fills.append((bit.dt, int(bit.size), None if market else float(bit.price)))
        if order.status == order.Margin:
            self.rejected += 1

    def stop(self) -> None:
        self.bars = len(self.data)


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
    cerebro.addanalyzer(_Recorder, _name="recorder")
    strat = cerebro.run()[0]
    rec = strat.analyzers.recorder
    nums = np.array([bt.date2num(t.to_pydatetime()) for t in feed.index])

    def bar_of(num: float) -> int:
        return int(np.abs(nums - num).argmin())

    return NativeReport(
        strategy=cls.__name__,
        params={k: v for k in strat.params._getkeys() if _plain(v := getattr(strat.params, k))},
        bars=rec.bars,
        fills=[FillRow(bar=bar_of(dt), size=size, price=price) for dt, size, price in rec.fills],
        rejected=rec.rejected,
    )


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
