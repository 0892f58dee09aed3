"""The fast path: Backtrader's execution rules replayed over the signal's change points.

A target series only matters where it disagrees with the position held, so the loop
visits those bars alone (a few dozen in ten years for most strategies) and fills the
equity curve in between with one vectorised expression. Every cash and value update is
the same floating-point expression, in the same order, as Backtrader's ``BackBroker``
(``check_submitted``, ``_execute``, ``_get_value``), so both engines size the same
orders, refuse the same ones and end on the same value to the cent (see the package
docstring for the rules).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .frame import validate_frame
from .models import BacktestConfig, BacktestResult, Costs, Fill, Trade

__all__ = [
    "FillClaim",
    "ReplayMismatch",
    "replay_fills",
    "run_positions",
    "simulate",
    "target_array",
]


def target_array(target: pd.Series | np.ndarray, index: pd.Index, long_short: bool) -> np.ndarray:
    """The target as an int8 array aligned to ``index``: −1 short, 0 flat, 1 long.

    A Series is aligned by time: a decision applies from the first bar closing at or after
    it and stands until the next one; bars before the first decision are flat.
    Long/flat runs read −1 as 0.

    Raises:
        ValueError: A value outside {−1, 0, 1}, or an array of another length.
    """
    if isinstance(target, pd.Series):
        dated = isinstance(target.index, pd.DatetimeIndex) and isinstance(index, pd.DatetimeIndex)
        if dated and (target.index.tz is None) != (index.tz is None):
            raise ValueError(
                "the decisions' dates and the bars' must both carry a time zone or both "
                "not; e.g. decisions.tz_localize('America/New_York')"
            )
        target = target.sort_index()
        values = target.reindex(index, method="ffill").fillna(0.0).to_numpy(dtype=np.float64)
    else:
        values = np.asarray(target, dtype=np.float64)
        if values.shape != (len(index),):
            raise ValueError(f"the target has {values.size} values for {len(index)} bars")
    values = np.nan_to_num(values, nan=0.0)
    if not np.isin(values, (-1.0, 0.0, 1.0)).all():
        bad = values[~np.isin(values, (-1.0, 0.0, 1.0))][:3]
        raise ValueError(f"target positions must be -1, 0 or 1, got e.g. {bad.tolist()}")
    out = values.astype(np.int8)
    if not long_short:
        out[out < 0] = 0
    return out


def _commission(costs: Costs, size: int, price: float) -> float:
    # Backtrader's CommInfoBase._getcommission, factor for factor.
    if costs.commission_type == "percent":
        return abs(size) * costs.commission * price
    return abs(size) * costs.commission


def _fill_price(costs: Costs, buy: bool, open_: float, high: float, low: float) -> float:
    # BackBroker._slip_up/_slip_down with slip_open, slip_match, no slip_out.
    slip = costs.slippage
    if not slip:
        return open_
    if buy:
        up = open_ * (1 + slip)
        return up if up <= high else high
    down = open_ * (1 - slip)
    return down if down >= low else low


def _split(pos: int, size: int) -> tuple[int, int]:
    """Position.update: the parts of ``size`` that open and that close."""
    new = pos + size
    if new == 0:
        return 0, size
    if pos == 0 or (pos > 0) == (size > 0):
        return size, 0
    if (new > 0) == (pos > 0):
        return 0, size
    return new, -pos


def _value(cash: float, pos: int, entry: float, close: float) -> float:
    """BackBroker._get_value with stock-like commission, leverage 1 and shortcash."""
    if pos > 0:
        dvalue = pos * close
        unrealized = pos * (close - entry) * 1.0
        return cash + ((dvalue - unrealized) / 1.0 + unrealized)
    return cash + pos * close


@dataclass
class _Book:
    """The broker's state and what it has done."""

    cash: float
    pos: int = 0
    entry: float = 0.0
    rejected: int = 0
    # Bars as positions while trading; timestamps are boxed once at the end (boxing one
    # by one would cost more than the whole loop).
    fills: list[tuple[int, int, float, float, float]] = field(default_factory=list)
    trades: list[dict[str, Any]] = field(default_factory=list)
    open_trade: dict[str, Any] | None = None


def _accepted(book: _Book, size: int, created: float, costs: Costs) -> bool:
    """BackBroker.check_submitted: pseudo-execute at the creation bar's close."""
    cash = book.cash
    opened, closed = _split(book.pos, size)
    if closed:
        cash += -closed * created
        cash -= _commission(costs, closed, created)
    if opened:
        cash -= opened * created
        cash -= _commission(costs, opened, created)
    return cash >= 0.0


def _market_price(bar: int, buy: bool, prices: tuple[Any, ...], costs: Costs) -> float:
    """The fill price of a market order at this bar's open (slippage included)."""
    opens, highs, lows = prices
    return _fill_price(costs, buy, float(opens[bar]), float(highs[bar]), float(lows[bar]))


def _execute(book: _Book, size: int, bar: int, price: float, open_: float, costs: Costs) -> None:
    """BackBroker._execute of an order filled at ``price`` in the bar opening at ``open_``."""
    opened, closed = _split(book.pos, size)
    cash = book.cash
    closed_comm = opened_comm = 0.0
    if closed:
        pnl = -closed * (price - book.entry) * 1.0
        cash += -closed * book.entry + pnl
        closed_comm = _commission(costs, closed, price)
        cash -= closed_comm
        cash += 0.0
        book.cash = cash
        _close_trade(book, bar, price, closed, closed_comm)
    if opened:
        cash -= opened * price
        opened_comm = _commission(costs, opened, price)
        cash -= opened_comm
        if cash < 0.0:
            opened, opened_comm = 0, 0.0
            book.rejected += 1
        elif book.open_trade is not None and book.pos != 0:  # added to the position
            book.cash = cash
            trade = book.open_trade  # Backtrader's Trade.update: a new average price
            held = book.pos
            trade["average"] = (held * trade["average"] + opened * price) / (held + opened)
            trade["comm"] += opened_comm
        else:
            book.cash = cash
            book.open_trade = {
                "size": opened,
                "bar": bar,
                "price": price,
                "average": (0 * 0.0 + opened * price) / opened,
                "comm": 0.0 + opened_comm,
                "pnl": 0.0,
            }
    executed = closed + opened
    if not executed:
        return
    new = book.pos + executed
    if new == 0:
        book.entry = 0.0
    elif book.pos == 0 or (new > 0) != (book.pos > 0):
        book.entry = price
    elif abs(new) > abs(book.pos):  # added to the position: average price
        book.entry = (book.entry * book.pos + executed * price) / new
    book.pos = new
    slipped = abs(executed) * abs(price - open_)
    book.fills.append((bar, executed, price, closed_comm + opened_comm, slipped))


def _close_trade(book: _Book, bar: int, price: float, closed: int, comm: float) -> None:
    """Book a closing part; the round trip ends when the position is back to flat."""
    trade = book.open_trade
    if trade is None:
        return
    # Backtrader's Trade keeps its own average price and P&L, summed in this order.
    trade["pnl"] += -closed * (price - trade["average"]) * 1.0
    trade["comm"] += comm
    if book.pos + closed != 0:  # reduced, still open
        return
    trade["exit_bar"], trade["exit_price"] = bar, price
    book.trades.append(trade)
    book.open_trade = None


def _records(book: _Book, times: pd.Index) -> tuple[list[Fill], list[Trade]]:
    """Fills and round trips with their timestamps, boxed in one pass."""
    trades = book.trades + ([book.open_trade] if book.open_trade is not None else [])
    bars = [f[0] for f in book.fills]
    for t in trades:
        bars += [t["bar"], t.get("exit_bar", t["bar"])]
    stamps = list(times[np.asarray(bars, dtype=np.int64)]) if bars else []
    fills = [
        Fill(time=stamp, size=size, price=price, commission=comm, slippage=slip)
        for stamp, (_, size, price, comm, slip) in zip(stamps, book.fills, strict=False)
    ]
    last = len(times) - 1
    rounds = []
    for i, t in enumerate(trades):
        entry, exit_ = stamps[len(fills) + 2 * i], stamps[len(fills) + 2 * i + 1]
        closed = "exit_bar" in t
        rounds.append(
            Trade(
                size=t["size"],
                entry_time=entry,
                entry_price=t["price"],
                exit_time=exit_ if closed else None,
                exit_price=t["exit_price"] if closed else None,
                pnl=t["pnl"],
                commission=t["comm"],
                pnl_net=t["pnl"] - t["comm"],
                bars=(t["exit_bar"] if closed else last) - t["bar"],
            )
        )
    return fills, rounds


def run_positions(
    frame: pd.DataFrame,
    target: pd.Series | np.ndarray,
    config: BacktestConfig | None = None,
    *,
    symbol: str | None = None,
    strategy: dict[str, Any] | None = None,
    notes: list[str] | None = None,
) -> BacktestResult:
    """Trade a target position series on OHLCV bars, the fast way.

    The target at bar ``t`` is the position wanted after ``t``'s close (−1 short, 0 flat,
    1 long); a change is ordered at that close and filled at bar ``t + 1``'s open, exactly
    as :func:`alphadesk.backtest.reference.run_backtrader` would.

    Args:
        frame: Bars with ``open``, ``high``, ``low``, ``close`` (and ``volume``), one row
            per bar, increasing index.
        target: Target per bar (an array of the frame's length) or a Series of
            decisions by date (each holds until the next; flat before the first).
        config: Cash, costs, sizing, long/short.
        symbol: Recorded in the result.
        strategy: Name and parameters, recorded in the result.
        notes: Recorded in the result.

    Returns:
        The result: equity and position per bar, fills, round trips.
    """
    return simulate(
        validate_frame(frame),
        target,
        config or BacktestConfig(),
        symbol=symbol,
        strategy=strategy,
        notes=notes,
    )


def simulate(
    frame: pd.DataFrame,
    target: pd.Series | np.ndarray,
    config: BacktestConfig,
    *,
    symbol: str | None = None,
    strategy: dict[str, Any] | None = None,
    notes: list[str] | None = None,
) -> BacktestResult:
    """:func:`run_positions` on a frame that already passed ``validate_frame``."""
    wanted = target_array(target, frame.index, config.long_short)
    closes = frame["close"].to_numpy()
    cash_per_share = _dividends(frame)
    paid = np.flatnonzero(cash_per_share)  # ex-date bars
    # Read only at the bars where something happens: no conversion of whole columns.
    prices = (frame["open"].to_numpy(), frame["high"].to_numpy(), frame["low"].to_numpy())
    times = frame.index
    n = len(frame)
    book = _Book(cash=float(config.cash))
    changes: list[tuple[int, float, int, float]] = [(0, book.cash, 0, 0.0)]
    disagree = {d: np.flatnonzero(wanted != d) for d in (-1, 0, 1)}
    accrued = 0  # dividends of the bars up to here are in book.cash
    credited: set[int] = set()  # fill bars whose dividend is in the recorded cash
    t = _next(disagree[0], 0, n)
    while t < n - 1:
        for j in paid[(paid > accrued) & (paid <= t)]:
            book.cash += book.pos * float(cash_per_share[j])
        accrued = max(accrued, t)
        want = int(wanted[t])
        close = float(closes[t])
        size = (
            0
            if want == 0
            else want * config.sizing.size(_value(book.cash, book.pos, book.entry, close), close)
        )
        order = size - book.pos
        if order:
            if _accepted(book, order, close, config.costs):
                before = (book.cash, book.pos, book.entry)
                # An ex-date's dividend goes to the position held at the previous close,
                # credited at its own close (after the fill at its open).
                dividend = book.pos * float(cash_per_share[t + 1])
                price = _market_price(t + 1, order > 0, prices, config.costs)
                _execute(book, order, t + 1, price, float(prices[0][t + 1]), config.costs)
                if dividend:
                    book.cash += dividend
                accrued = t + 1
                if (book.cash, book.pos, book.entry) != before:
                    changes.append((t + 1, book.cash, book.pos, book.entry))
                    credited.add(t + 1)
            else:
                book.rejected += 1
        t = _next(disagree[(book.pos > 0) - (book.pos < 0)], t + 1, n)
    equity, position = _curves(changes, closes, n, cash_per_share, paid, credited)
    fills, trades = _records(book, times)
    return BacktestResult(
        engine="fast",
        config=config,
        equity=pd.Series(equity, index=times, name="equity"),
        position=pd.Series(position, index=times, name="position"),
        fills=fills,
        trades=trades,
        symbol=symbol,
        strategy=strategy,
        rejected=book.rejected,
        notes=list(notes or []),
    )


class FillClaim(NamedTuple):
    """A fill as untrusted code reports it: the bar (position) it executed in, its signed
    size and, for a priced order (limit, stop, close), its price; ``None`` for a market order."""

    bar: int
    size: int
    price: float | None = None


class ReplayMismatch(ValueError):
    """Claimed fills that Backtrader's broker could not have made on these bars."""


# A priced fill may sit on the bar's high or low: allow the rounding of a float price.
_RANGE_TOLERANCE = 1e-9


def replay_fills(
    frame: pd.DataFrame,
    claims: Sequence[FillClaim],
    config: BacktestConfig,
    *,
    start: int = 0,
    symbol: str | None = None,
    strategy: dict[str, Any] | None = None,
    rejected: int = 0,
    notes: list[str] | None = None,
) -> BacktestResult:
    """The backtest of ``claims`` traded on ``frame`` under the run's broker rules.

    Everything but the orders is computed here, from the real bars: a market fill's price
    (the bar's open with slippage), every commission, cash, the account value and
    position at each close, the round trips. So whatever reported the fills (strategy code
    in the sandbox) chooses at most its orders, never the figures.

    Raises:
        ReplayMismatch: A fill outside the traded bars or out of order, a priced fill
            outside its bar's high-low range, or a buy the broker would have refused for
            want of cash.
    """
    n = len(frame)
    prices = (frame["open"].to_numpy(), frame["high"].to_numpy(), frame["low"].to_numpy())
    cash_per_share = _dividends(frame)
    paid = np.flatnonzero(cash_per_share)  # ex-date bars
    book = _Book(cash=float(config.cash))
    changes: list[tuple[int, float, int, float]] = [(0, book.cash, 0, 0.0)]
    credited: set[int] = set()  # fill bars whose dividend is in the recorded cash
    last = start
    for bar, size, claimed in claims:
        if not last <= bar < n or size == 0:
            raise ReplayMismatch(
                f"a fill of {size} at bar {bar} is outside bars {start}-{n - 1}, out of order "
                "or empty"
            )
        open_, high, low = (float(column[bar]) for column in prices)
        if claimed is None:
            price = _market_price(bar, size > 0, prices, config.costs)
        elif low * (1 - _RANGE_TOLERANCE) <= claimed <= high * (1 + _RANGE_TOLERANCE):
            price = float(claimed)
        else:
            raise ReplayMismatch(
                f"a fill at {claimed} at bar {bar} is outside the bar's range {low}-{high}"
            )
        # Dividends of the bars since the last fill, then this bar's to the position held
        # at the previous close, as simulate() credits them.
        for j in paid[(paid > last) & (paid < bar)]:
            book.cash += book.pos * float(cash_per_share[j])
        dividend = 0.0 if bar in credited else book.pos * float(cash_per_share[bar])
        refused = book.rejected
        _execute(book, size, bar, price, open_, config.costs)
        if book.rejected != refused:
            raise ReplayMismatch(f"a buy of {size} at bar {bar} needs more cash than there is")
        book.cash += dividend
        credited.add(bar)
        changes.append((bar, book.cash, book.pos, book.entry))
        last = bar
    equity, position = _curves(
        changes, frame["close"].to_numpy(), n, cash_per_share, paid, credited
    )
    fills, trades = _records(book, frame.index)
    times = frame.index[start:]
    return BacktestResult(
        engine="backtrader",
        config=config,
        equity=pd.Series(equity[start:], index=times, name="equity"),
        position=pd.Series(position[start:], index=times, name="position"),
        fills=fills,
        trades=trades,
        symbol=symbol,
        strategy=strategy,
        rejected=rejected,
        notes=list(notes or []),
    )


def _next(disagreeing: np.ndarray, start: int, n: int) -> int:
    """First bar at or after ``start`` whose target differs from the held direction."""
    k = int(np.searchsorted(disagreeing, start))
    return int(disagreeing[k]) if k < disagreeing.size else n


def _dividends(frame: pd.DataFrame) -> np.ndarray:
    """Cash per share paid on each bar (its ex-date), zero elsewhere."""
    if "dividend" not in frame.columns:
        return np.zeros(len(frame))
    return np.nan_to_num(frame["dividend"].to_numpy(dtype=np.float64), nan=0.0)


def _curves(
    changes: list[tuple[int, float, int, float]],
    closes: np.ndarray,
    n: int,
    cash_per_share: np.ndarray,
    paid: np.ndarray,
    credited: set[int],
) -> tuple[np.ndarray, np.ndarray]:
    """Equity and position per bar from the state after each change (vectorised), plus
    the dividends paid in between (added in bar order, as the broker adds them)."""
    starts = np.array([c[0] for c in changes])
    lengths = np.diff(np.append(starts, n))
    cash = np.repeat(np.array([c[1] for c in changes]), lengths)
    pos = np.repeat(np.array([c[2] for c in changes], dtype=np.int64), lengths)
    for j in paid:
        if j in credited or j == 0:
            continue
        end = starts[starts > j]
        stop = int(end[0]) if end.size else n
        cash[j:stop] += int(pos[j - 1]) * float(cash_per_share[j])
    entry = np.repeat(np.array([c[3] for c in changes]), lengths)
    size = pos.astype(np.float64)
    dvalue = size * closes
    unrealized = size * (closes - entry) * 1.0
    long_value = (dvalue - unrealized) / 1.0 + unrealized
    equity = cash + np.where(pos > 0, long_value, dvalue)
    return equity, pos
