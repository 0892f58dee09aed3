"""One book over many symbols: one cash balance, holdings carried from session to session.

A policy names target weights at each session from what is known at that session's open
(the previous closes and the open itself); the book trades to them at the open, pays a
commission on the traded value and is marked at the open. A dividend is credited on its
ex-date's session to the shares held at the previous close, before that session trades.
A policy that returns ``None`` keeps the holdings as they are (no trade, no cost).

The scores: final return on the starting cash, maximum drawdown of the marked values,
daily Sortino as StockBench defines it (:func:`~alphadesk.analytics.performance.daily_sortino`),
annualised Sharpe, turnover (traded value over the starting cash) and costs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

from alphadesk.analytics.performance import daily_sortino, max_drawdown, sharpe_ratio

__all__ = ["Book", "BookScore", "Policy", "Session", "equal_weight", "run_book", "score_book"]


class Session(BaseModel):
    """What a policy may see at session ``i``: the opens of that session and the closes
    of the sessions before it (never that session's close)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    i: int
    opens: pd.Series  # this session's open per symbol
    closes: pd.DataFrame  # closes of every earlier session (the warm-up included)
    weights: pd.Series  # the book's weights at this open before trading


Policy = Callable[[Session], Mapping[str, float] | None]


class Book(BaseModel):
    """A book's path: its value marked at each session's open, after that session's trades."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    nav: pd.Series  # account value per session (cash + shares at the open)
    traded: float  # total traded value
    costs: float  # total commission
    dividends: float  # total dividend cash credited
    cash: float  # starting cash


class BookScore(BaseModel):
    """A book's scores (fractions: 0.004 = +0.4 %)."""

    final_return: float
    max_drawdown: float
    sortino: float | None
    sharpe: float | None
    turnover: float
    costs: float
    dividends: float


def equal_weight(symbols: list[str]) -> dict[str, float]:
    """Equal weights over ``symbols`` (none: all cash)."""
    return {s: 1.0 / len(symbols) for s in symbols} if symbols else {}


def run_book(
    opens: pd.DataFrame,
    closes: pd.DataFrame,
    dividends: pd.DataFrame,
    policy: Policy,
    *,
    first: int,
    cash: float,
    commission: float,
) -> Book:
    """Walk ``policy`` over the sessions of ``opens`` from row ``first`` on.

    Args:
        opens, closes, dividends: One row per session, one column per symbol, the same
            index (prices as traded; dividends in cash per share on the ex-date's row).
            Rows before ``first`` are warm-up the policy may read.
        policy: Target weights (at most 1 in all, none negative) or ``None`` to hold.
        first: The first session traded.
        cash: Starting cash.
        commission: Commission, a fraction of the traded value.

    Raises:
        ValueError: Misaligned frames, a missing open in the window, or weights that
            are negative, sum above 1 or name a symbol the book does not trade.
    """
    if not (opens.index.equals(closes.index) and opens.index.equals(dividends.index)):
        raise ValueError("opens, closes and dividends must share one index of sessions")
    window = opens.iloc[first:]
    if window.isna().to_numpy().any():
        missing = window.columns[window.isna().any()].tolist()
        raise ValueError(f"no open for {missing} on some session of the window; drop them")
    symbols = list(opens.columns)
    shares = np.zeros(len(symbols))
    balance, traded, costs, credited = cash, 0.0, 0.0, 0.0
    marks: list[float] = []
    for i in range(first, len(opens)):
        price = opens.iloc[i].to_numpy(dtype=float)
        paid = float(shares @ dividends.iloc[i].to_numpy(dtype=float))
        balance += paid
        credited += paid
        equity = balance + float(shares @ price)
        held = pd.Series(shares * price / equity, index=symbols)
        session = Session(i=i, opens=opens.iloc[i], closes=closes.iloc[:i], weights=held)
        target = policy(session)
        if target is not None:
            w = _weights(target, symbols)
            # Buy only what the cash left after the commission pays for.
            goal = w * equity / price / (1.0 + commission * w.sum())
            value = float(np.abs(goal - shares) @ price)
            fee = value * commission
            balance += float((shares - goal) @ price) - fee
            shares = goal
            traded += value
            costs += fee
        marks.append(balance + float(shares @ price))
    nav = pd.Series(marks, index=opens.index[first:], name="nav")
    return Book(nav=nav, traded=traded, costs=costs, dividends=credited, cash=cash)


def _weights(target: Mapping[str, float], symbols: list[str]) -> np.ndarray:
    unknown = sorted(set(target) - set(symbols))
    if unknown:
        raise ValueError(f"weights name {unknown}, not in the book {symbols}")
    w = np.array([float(target.get(s, 0.0)) for s in symbols])
    if (w < 0).any() or w.sum() > 1 + 1e-9:
        raise ValueError(f"weights must be at least 0 and sum to at most 1, got {dict(target)}")
    return w


def score_book(book: Book) -> BookScore:
    """Scores of ``book`` (StockBench's: final return on the starting cash, its maximum
    drawdown and daily Sortino with the first session's return counted as 0)."""
    nav = book.nav / book.cash
    returns = nav.pct_change().fillna(0.0)
    return BookScore(
        final_return=float(nav.iloc[-1] - 1.0),
        max_drawdown=max_drawdown(nav.reset_index(drop=True)).depth,
        sortino=daily_sortino(returns),
        sharpe=sharpe_ratio(returns),
        turnover=book.traded / book.cash,
        costs=book.costs,
        dividends=book.dividends,
    )
