"""Scoring a walk: the desk's positions and each baseline backtested over the same dates and
costs, per symbol and pooled (equal capital per symbol, summed)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from alphadesk.analytics.performance import BacktestMetrics, backtest_metrics
from alphadesk.backtest import BacktestConfig, BacktestResult, run_positions, run_strategy

from .models import DecisionRecord, EvalSpec
from .positions import PutBook, ShortPut, put_book

__all__ = ["BASELINES", "DESK", "POOLED", "Scored", "score_csp", "score_desk"]

BASELINES = ("buy_hold", "sma_cross", "macd", "kdj_rsi", "zmr")
DESK = "desk"
POOLED = "pooled"


@dataclass
class Scored:
    """One strategy on one symbol (or pooled): its curve, metrics and what it decided."""

    strategy: str
    symbol: str
    equity: pd.Series
    metrics: BacktestMetrics
    counts: dict[str, int] = field(default_factory=dict)
    model_calls: int = 0
    model_cost_usd: float = 0.0
    # What pooling needs from each symbol's run.
    trade_pnls: list[float] = field(default_factory=list)
    traded_value: float = 0.0
    commission: float = 0.0
    slippage: float = 0.0
    exposure: np.ndarray | None = None


def _from_backtest(strategy: str, symbol: str, result: BacktestResult) -> Scored:
    return Scored(
        strategy=strategy,
        symbol=symbol,
        equity=result.equity,
        metrics=result.metrics(),
        trade_pnls=[t.pnl_net for t in result.closed_trades],
        traded_value=sum(abs(f.size) * f.price for f in result.fills),
        commission=sum(f.commission for f in result.fills),
        slippage=sum(f.slippage for f in result.fills),
        exposure=result.position.ne(0).to_numpy(),
    )


def _window(frame: pd.DataFrame, first: datetime) -> pd.DataFrame:
    stamp = pd.Timestamp(first).tz_convert(frame.index.tz)
    return frame.iloc[int(frame.index.searchsorted(stamp, side="left")) :]


def _counted(records: Sequence[DecisionRecord], choices: Sequence[str]) -> dict[str, int]:
    counts = {c.lower(): sum(r.decision == c for r in records) for c in choices}
    return {"decisions": len(records), **counts}


def _model(records: Sequence[DecisionRecord]) -> tuple[int, float]:
    return sum(r.model_calls for r in records), sum(r.model_cost_usd for r in records)


def score_desk(
    spec: EvalSpec,
    config: BacktestConfig,
    frames: dict[str, pd.DataFrame],
    records: Sequence[DecisionRecord],
    dates: Sequence[datetime],
    baselines: Sequence[str] = BASELINES,
) -> list[Scored]:
    """The trading desk's positions and every baseline, per symbol, then pooled.

    Raises:
        ValueError: Too few bars before the window for a baseline's indicators.
    """
    scored: list[Scored] = []
    for symbol in spec.symbols:
        frame = frames[symbol]
        mine = sorted((r for r in records if r.symbol == symbol), key=lambda r: r.as_of)
        index = pd.DatetimeIndex([r.as_of for r in mine]).tz_convert(frame.index.tz)
        target = pd.Series([r.position or 0 for r in mine], index=index, dtype=float)
        result = run_positions(_window(frame, dates[0]), target, config, symbol=symbol)
        desk = _from_backtest(DESK, symbol, result)
        desk.counts = _counted(mine, ("BUY", "HOLD", "SELL", "failed"))
        desk.model_calls, desk.model_cost_usd = _model(mine)
        scored.append(desk)
        scored += _baselines(symbol, frame, config, dates[0], baselines)
    return scored + _pooled(scored, spec, config)


def _baselines(
    symbol: str,
    frame: pd.DataFrame,
    config: BacktestConfig,
    first: datetime,
    names: Sequence[str],
) -> list[Scored]:
    day = pd.Timestamp(first).tz_convert(frame.index.tz).date()
    return [
        _from_backtest(name, symbol, run_strategy(name, frame, None, config, trade_from=day))
        for name in names
    ]


def score_csp(
    spec: EvalSpec,
    config: BacktestConfig,
    frames: dict[str, pd.DataFrame],
    raw_closes: dict[str, pd.Series],
    records: Sequence[DecisionRecord],
    mechanical: dict[str, list[ShortPut]],
    dates: Sequence[datetime],
    on_basis: Callable[[ShortPut], ShortPut],
) -> list[Scored]:
    """The CSP desk's puts, the mechanical puts and buy & hold, per symbol, then pooled.

    ``on_basis`` puts a put struck as traded onto the basis of ``raw_closes``.
    """
    scored: list[Scored] = []
    for symbol in spec.symbols:
        mine = sorted((r for r in records if r.symbol == symbol), key=lambda r: r.as_of)
        closes = _window(raw_closes[symbol].to_frame("close"), dates[0])["close"]
        puts = [
            on_basis(
                ShortPut(
                    symbol, r.as_of, r.put.expiration, r.put.strike, r.put.premium, r.put.contracts
                )
            )
            for r in mine
            if r.put is not None
        ]
        desk = _from_book("csp_desk", symbol, put_book(puts, closes, spec.cash, spec.contract_fee))
        desk.counts = {**_counted(mine, ("select", "reject", "filtered", "failed"))}
        desk.counts |= _book_counts(put_book(puts, closes, spec.cash, spec.contract_fee))
        desk.model_calls, desk.model_cost_usd = _model(mine)
        scored.append(desk)
        rules = [on_basis(put) for put in mechanical.get(symbol, [])]
        book = put_book(rules, closes, spec.cash, spec.contract_fee)
        mech = _from_book("mechanical_put", symbol, book)
        mech.counts = _book_counts(book)
        scored.append(mech)
        day = pd.Timestamp(dates[0]).tz_convert(frames[symbol].index.tz).date()
        result = run_strategy("buy_hold", frames[symbol], None, config, trade_from=day)
        scored.append(_from_backtest("buy_hold", symbol, result))
    return scored + _pooled(scored, spec, config)


def _book_counts(book: PutBook) -> dict[str, int]:
    return {"puts": len(book.sold), "assigned": book.assigned, "skipped": len(book.skipped)}


def _from_book(strategy: str, symbol: str, book: PutBook) -> Scored:
    notional = sum(p.collateral for p in book.sold)
    return Scored(
        strategy=strategy,
        symbol=symbol,
        equity=book.equity,
        metrics=backtest_metrics(
            book.equity,
            trade_pnls=book.pnls,
            traded_value=notional,
            commission=book.fees,
            exposure=book.exposure,
        ),
        trade_pnls=list(book.pnls),
        traded_value=notional,
        commission=book.fees,
        exposure=book.exposure,
    )


def _pooled(scored: list[Scored], spec: EvalSpec, config: BacktestConfig) -> list[Scored]:
    """Each strategy over all symbols: equal capital per symbol, the curves summed."""
    pooled: list[Scored] = []
    for strategy in dict.fromkeys(s.strategy for s in scored):
        parts = [s for s in scored if s.strategy == strategy]
        curves = pd.concat([p.equity for p in parts], axis=1).sort_index().ffill()
        curves = curves.fillna(spec.cash)  # a symbol not yet trading holds its cash
        held = pd.concat(
            [pd.Series(p.exposure, index=p.equity.index) for p in parts], axis=1
        ).reindex(curves.index)
        equity = curves.sum(axis=1).rename("equity")
        counts: dict[str, int] = {}
        for part in parts:
            for key, value in part.counts.items():
                counts[key] = counts.get(key, 0) + value
        pooled.append(
            Scored(
                strategy=strategy,
                symbol=POOLED,
                equity=equity,
                metrics=backtest_metrics(
                    equity,
                    trade_pnls=[x for p in parts for x in p.trade_pnls],
                    traded_value=sum(p.traded_value for p in parts),
                    commission=sum(p.commission for p in parts),
                    slippage=sum(p.slippage for p in parts),
                    exposure=held.fillna(False).astype(bool).any(axis=1).to_numpy(),
                    periods_per_year=config.periods_per_year,
                ),
                counts=counts,
                model_calls=sum(p.model_calls for p in parts),
                model_cost_usd=sum(p.model_cost_usd for p in parts),
            )
        )
    return pooled


def table_rows(scored: Sequence[Scored]) -> list[dict[str, Any]]:
    """One row per strategy and symbol, pooled rows last; floats rounded for stable files."""
    count_keys = list(dict.fromkeys(k for s in scored for k in s.counts))
    rows = []
    for s in scored:
        m = s.metrics
        row: dict[str, Any] = {
            "strategy": s.strategy,
            "symbol": s.symbol,
            "start": str(pd.Timestamp(m.start).date()),
            "end": str(pd.Timestamp(m.end).date()),
            "cumulative_return": _round(m.cumulative_return),
            "annualized_return": _round(m.annualized_return),
            "sharpe": _round(m.sharpe),
            "max_drawdown": _round(m.max_drawdown),
            "win_rate": _round(m.win_rate),
            "trades": m.trades,
            "turnover": _round(m.turnover),
            "costs": _round(m.costs, 2),
            "final_value": _round(m.final, 2),
            "model_calls": s.model_calls,
            "model_cost_usd": _round(s.model_cost_usd, 4),
        }
        row |= {key: s.counts.get(key) for key in count_keys}
        rows.append(row)
    return rows


def _round(value: float | None, digits: int = 6) -> float | None:
    if value is None or not np.isfinite(value):
        return None
    return round(float(value), digits) + 0.0  # + 0.0: no "-0.0" in the files
