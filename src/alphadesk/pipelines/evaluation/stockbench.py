"""StockBench (arXiv 2510.02209, ``ChenYXxxx/stockbench`` at ``f5a11b3``): its protocol, its
passive baseline, and our books beside the paper's published rows.

The protocol, as its ``backtest/engine.py``, ``metrics.py``, ``slippage.py`` and
``config.yaml`` run it: the 20 Dow stocks, $100,000, the sessions of 2025-03-01..06-30
(83); at each session the agent sees that day's open, the previous closes and two days of
news; orders fill at that day's open with a 1 bp commission (the 2 bp slippage moves
only the recorded average cost, never the cash); the account is marked at the open;
held shares receive dividends. Its passive baseline (``per_symbol_buy_and_hold``,
``trade_price_field: open``) puts an equal amount in each name at the first open, less a
one-time fee of commission + slippage (3 bp), marks each at the opens, receives no
dividends, and the benchmark's curve is the mean of the 20. Metrics: final return
``nav[-1] - 1`` on the starting cash, maximum drawdown of the curve, daily Sortino
``mean(r) / std(r[r < 0])`` with the first session's return counted as 0.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from alphadesk.analytics.bootstrap import BootstrapSettings, bootstrap_intervals
from alphadesk.analytics.performance import returns_from_equity
from alphadesk.data.symbols import normalize_symbol

from .book import Book, BookScore, Session, equal_weight, run_book, score_book

if TYPE_CHECKING:
    from alphadesk.data.base import MarketData

__all__ = [
    "HOLD",
    "PAPER",
    "PAPER_SOURCE",
    "PASSIVE",
    "PROTOCOL",
    "Protocol",
    "Row",
    "baseline_books",
    "cells",
    "markdown",
    "market_frames",
    "notes",
    "paper_rows",
    "passive_baseline",
    "scored_rows",
    "snapshot",
    "stockbench_rows",
    "title",
]


class Protocol(BaseModel):
    """A book's window: names, dates, cash and fees (bps). ``stockbench``: StockBench's
    protocol, its passive baseline among the books; ``portfolio``: any window of the
    data, the books alone (``eval --portfolio``)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["stockbench", "portfolio"] = "stockbench"
    symbols: tuple[str, ...]
    start: date
    end: date
    cash: float = Field(100_000.0, gt=0)
    commission_bps: float = Field(1.0, ge=0)
    baseline_fee_bps: float = 3.0  # commission + slippage, paid once by the passive baseline
    warmup: int = 20  # sessions before ``start`` the rule baselines may read

    @field_validator("symbols")
    @classmethod
    def _names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        """Each name normalised once, in the order given."""
        return tuple(dict.fromkeys(normalize_symbol(s) for s in value if s.strip()))

    @model_validator(mode="after")
    def _range(self) -> Protocol:
        if self.start > self.end:
            raise ValueError(f"--from {self.start} is after --to {self.end}")
        if not self.symbols:
            raise ValueError("give at least one symbol")
        return self


DOW20 = (
    "GS", "MSFT", "HD", "V", "SHW", "CAT", "MCD", "UNH", "AXP", "AMGN",
    "TRV", "CRM", "JPM", "IBM", "HON", "BA", "AMZN", "AAPL", "PG", "JNJ",
)  # fmt: skip
PROTOCOL = Protocol(
    symbols=DOW20,
    start=date(2025, 3, 1),
    end=date(2025, 6, 30),
)

PAPER_SOURCE = "arXiv 2510.02209 v1, project page leaderboard, averaged over 3 runs"
# model: final return %, max drawdown %, daily Sortino
PAPER: tuple[tuple[str, float, float, float], ...] = (
    ("Kimi-K2", 1.9, -11.8, 0.0420),
    ("Qwen3-235B-Ins", 2.4, -11.2, 0.0299),
    ("GLM-4.5", 2.3, -13.7, 0.0295),
    ("Qwen3-235B-Think", 2.5, -14.9, 0.0309),
    ("OpenAI-O3", 1.9, -13.2, 0.0267),
    ("Qwen3-30B-Think", 2.1, -13.5, 0.0255),
    ("Claude-4-Sonnet", 2.2, -14.2, 0.0245),
    ("DeepSeek-V3.1", 1.1, -14.1, 0.0210),
    ("GPT-5", 0.3, -13.1, 0.0132),
    ("Qwen3-Coder", 0.2, -13.9, 0.0137),
    ("DeepSeek-V3", 0.2, -14.1, 0.0144),
    ("Passive Baseline", 0.4, -15.2, 0.0155),
    ("GPT-OSS-120B", -0.9, -14.0, 0.0156),
    ("GPT-OSS-20B", -2.8, -14.4, -0.0069),
)


class Row(BaseModel):
    """One line of the side-by-side table (percent figures, as the paper prints them)."""

    name: str
    source: str  # "paper" or "ours"
    final_return: float
    max_drawdown: float
    sortino: float | None
    sharpe: float | None = None
    turnover: float | None = None
    costs: float | None = None
    dividends: float | None = None
    sharpe_low: float | None = None
    sharpe_high: float | None = None
    excess_low: float | None = None  # annual return minus equal weight held's, 95 %
    excess_high: float | None = None
    vs_hold: float | None = None  # final return minus equal weight held's, points


def snapshot() -> MarketData:
    """StockBench's data: the bundled copy of its dataset (see NOTICE.md), what its
    protocol reads whatever the settings' providers."""
    from alphadesk.data.providers.bundled import BundledProvider

    return BundledProvider()


def market_frames(
    protocol: Protocol = PROTOCOL, market: MarketData | None = None
) -> tuple[pd.DataFrame, ...]:
    """Opens, closes and dividends (cash per share on the ex-date) of ``market`` (default:
    the bundled data), one row per session from ``warmup`` sessions before the window to
    its end; the index of the first session of the window is ``protocol.warmup``."""
    from alphadesk.data.actions import dividend_cash
    from alphadesk.data.errors import NoData

    market = market if market is not None else snapshot()
    as_of = datetime.combine(protocol.end, datetime.max.time(), tzinfo=UTC)
    opens, closes, paid = {}, {}, {}
    for symbol in protocol.symbols:
        bars = market.daily_bars(symbol, as_of)
        frame = bars.frame
        if not {"open", "close"} <= set(bars.fields):
            raise ValueError(
                f"{symbol}'s data has no opens and closes ({', '.join(bars.fields)}), and a "
                "book trades at the open; drop it (`alphadesk data list` shows each one's fields)"
            )
        try:
            dividend = dividend_cash(frame.index, market.dividends(symbol, as_of), as_of)
        except NoData:  # the snapshot lists no dividend for it (AMZN pays none)
            dividend = pd.Series(0.0, index=frame.index)
        days = pd.DatetimeIndex(frame.index.date)
        opens[symbol] = pd.Series(frame["open"].to_numpy(), index=days)
        closes[symbol] = pd.Series(frame["close"].to_numpy(), index=days)
        paid[symbol] = pd.Series(dividend.to_numpy(), index=days)
    o, c, d = (pd.DataFrame(x).sort_index() for x in (opens, closes, paid))
    inside = np.flatnonzero(o.index >= pd.Timestamp(protocol.start))
    if inside.size == 0 or inside[0] < protocol.warmup:
        raise ValueError(
            f"the bundled bars need {protocol.warmup} sessions before {protocol.start}; "
            "choose a later --from"
        )
    keep = slice(inside[0] - protocol.warmup, None)
    last = o.index <= pd.Timestamp(protocol.end)
    o, c, d = o[last].iloc[keep], c[last].iloc[keep], d[last].fillna(0.0).iloc[keep]
    # The window's bars and the close of the first decision must all be there (a hole
    # among the warm-up's earlier closes only shortens a rule's average).
    needed = pd.concat([c.iloc[protocol.warmup - 1 : protocol.warmup], o.iloc[protocol.warmup :]])
    gaps = {s: needed.index[needed[s].isna()][0].date() for s in o if needed[s].isna().any()}
    if gaps:  # refused before anything is decided
        said = ", ".join(f"{s} on {day}" for s, day in sorted(gaps.items()))
        raise ValueError(
            f"no bar for {said}, in the window or the session before it; choose a later "
            "--from (`alphadesk data list` shows each symbol's range)"
        )
    return o, c, d


def passive_baseline(opens: pd.DataFrame, protocol: Protocol = PROTOCOL) -> Book:
    """StockBench's passive baseline: equal cash per name at the first open, less the
    one-time fee, marked at the opens, no dividends; the mean of the per-name curves."""
    fee = protocol.baseline_fee_bps / 1e4
    curves = opens / opens.iloc[0] / (1.0 + fee)
    nav = curves.mean(axis=1) * protocol.cash
    return Book(
        nav=nav.rename("nav"),
        traded=protocol.cash / (1.0 + fee),
        costs=protocol.cash * fee / (1.0 + fee),
        dividends=0.0,
        cash=protocol.cash,
    )


def _hold_equal(session: Session) -> dict[str, float] | None:
    return equal_weight(list(session.opens.index)) if session.weights.sum() == 0 else None


def _rebalance_equal(session: Session) -> dict[str, float]:
    return equal_weight(list(session.opens.index))


def _trend(session: Session) -> dict[str, float]:
    """Equal weight over the names whose last close is above their 20-session mean."""
    recent = session.closes.iloc[-20:]
    up = recent.iloc[-1] > recent.mean()
    return equal_weight([s for s in session.opens.index if bool(up[s])])


HOLD = "equal weight, held (dividends)"
PASSIVE = "passive baseline (StockBench's)"
BASELINES = {
    HOLD: _hold_equal,
    "equal weight, rebalanced daily": _rebalance_equal,
    "trend 20 (close > 20-day mean)": _trend,
}
NOTES = (
    "Ours: the bundled StockBench data (Polygon bars as traded, "
    "Polygon dividends). Passive baseline as StockBench computes it: equal cash per name "
    "at the first open less a one-time {fee:g} bp fee, marked at the opens, no dividend "
    "cash. Our books: target weights filled at the session's open with a {bps:g} bp "
    "commission, marked at the open, dividends credited on the ex-date to the shares held "
    "the close before. The desk decides at the previous close (StockBench's agent also "
    "sees the day's open and two days of news). Turnover: traded value over the starting "
    "cash. Sharpe annualised; 95 % stationary block bootstrap (mean block 20 sessions, "
    "2,000 replications, seed 0) of the Sharpe ratio and of the annual return minus that "
    "of equal weight held. The rules (desk, trend 20) are not fitted to this window."
)


PORTFOLIO_NOTES = (
    "The bundled data's bars as traded and dividend records. Every book: target weights "
    "filled at the session's open, costs of {bps:g} bp of the traded value (commission and "
    "slippage), marked at the open, dividends credited on the ex-date to the shares held "
    "the close before. The desk decides each name at the close before, on the data known "
    "then, each decision alone (no memory of earlier ones). Turnover: traded value over "
    "the starting cash. Daily Sortino as StockBench defines it; Sharpe annualised; 95 % "
    "stationary block bootstrap (mean block 20 sessions, 2,000 replications, seed 0) of "
    "the Sharpe ratio and of the annual return minus that of equal weight held. The rules "
    "(desk, trend 20) are not fitted to any window."
)


def notes(protocol: Protocol = PROTOCOL, *, paper: bool = True) -> str:
    """The table's notes: every choice of the protocol that moves a figure."""
    if protocol.kind == "portfolio":
        return PORTFOLIO_NOTES.format(bps=protocol.commission_bps)
    said = NOTES.format(fee=protocol.baseline_fee_bps, bps=protocol.commission_bps)
    return f"Paper rows: {PAPER_SOURCE}. {said}" if paper else said


def baseline_books(
    protocol: Protocol, opens: pd.DataFrame, closes: pd.DataFrame, dividends: pd.DataFrame
) -> dict[str, Book]:
    """StockBench's passive baseline and the book baselines over ``protocol``'s window
    (frames from :func:`market_frames`)."""
    first = protocol.warmup
    books: dict[str, Book] = {}
    if protocol.kind == "stockbench":
        books[PASSIVE] = passive_baseline(opens.iloc[first:], protocol)
    for name, policy in BASELINES.items():
        books[name] = run_book(
            opens,
            closes,
            dividends,
            policy,
            first=first,
            cash=protocol.cash,
            commission=protocol.commission_bps / 1e4,
        )
    return books


def paper_rows() -> list[Row]:
    """The paper's published rows, as published."""
    return [
        Row(name=name, source="paper", final_return=r, max_drawdown=d, sortino=s)
        for name, r, d, s in PAPER
    ]


def scored_rows(books: dict[str, Book], benchmark: str = HOLD, *, seed: int = 0) -> list[Row]:
    """One row per book, with block-bootstrap intervals against ``benchmark``."""
    scores = {name: score_book(book) for name, book in books.items()}
    returns = {name: returns_from_equity(book.nav).to_numpy() for name, book in books.items()}
    intervals = bootstrap_intervals(returns, benchmark, BootstrapSettings(seed=seed))
    base = scores[benchmark].final_return
    return [_ours(name, score, intervals[name], base) for name, score in scores.items()]


def stockbench_rows(protocol: Protocol = PROTOCOL) -> list[Row]:
    """The paper's rows, then StockBench's passive baseline and the book baselines."""
    opens, closes, dividends = market_frames(protocol)
    return paper_rows() + scored_rows(baseline_books(protocol, opens, closes, dividends))


def title(protocol: Protocol = PROTOCOL) -> str:
    """What the table shows, in one line."""
    names = "the 20 Dow stocks" if protocol.symbols == DOW20 else f"{len(protocol.symbols)} names"
    if protocol.kind == "portfolio":
        listed = ", ".join(protocol.symbols) if len(protocol.symbols) <= 5 else names
        return (
            f"One book of {listed}: ${protocol.cash:,.0f}, {protocol.start} to "
            f"{protocol.end}, decided at the close, filled and marked at the next open"
        )
    return (
        f"StockBench protocol: {names}, ${protocol.cash:,.0f}, {protocol.start} to "
        f"{protocol.end}, fills and marks at the open"
    )


HEADERS = (
    "",
    "final return %",
    "max drawdown %",
    "daily Sortino",
    "Sharpe [95 %]",
    "vs held, pts",
    "excess annual % [95 %]",
    "turnover",
    "costs $",
    "dividends $",
)


def cells(row: Row) -> list[str]:
    """A row's cells under :data:`HEADERS` (the paper's figures at its own precision)."""
    ours = row.source == "ours"
    sharpe = "-" if row.sharpe is None else f"{row.sharpe:.2f}"
    if row.sharpe_low is not None and row.sharpe_high is not None:
        sharpe += f" [{row.sharpe_low:.2f}, {row.sharpe_high:.2f}]"
    excess = "-"
    if row.excess_low is not None and row.excess_high is not None:
        excess = f"[{row.excess_low:+.1f}, {row.excess_high:+.1f}]"
    return [
        row.name,
        f"{row.final_return:+.2f}" if ours else f"{row.final_return:+.1f}",
        f"{row.max_drawdown:.2f}" if ours else f"{row.max_drawdown:.1f}",
        "-" if row.sortino is None else f"{row.sortino:.4f}",
        sharpe if ours else "-",
        "-" if row.vs_hold is None else f"{row.vs_hold:+.2f}",
        excess,
        "-" if row.turnover is None else f"{row.turnover:.2f}",
        "-" if row.costs is None else f"{row.costs:,.2f}",
        "-" if row.dividends is None else f"{row.dividends:,.2f}",
    ]


def markdown(rows: list[Row], protocol: Protocol = PROTOCOL) -> str:
    """The table as Markdown, its title above and its notes below."""
    lines = [f"**{title(protocol)}**", "", "| " + " | ".join(HEADERS) + " |"]
    lines.append("|---" + "|---:" * (len(HEADERS) - 1) + "|")
    lines += ["| " + " | ".join(cells(r)) + " |" for r in rows]
    paper = any(r.source == "paper" for r in rows)
    return "\n".join([*lines, "", notes(protocol, paper=paper), ""])


def _ours(name: str, score: BookScore, interval: Any, base: float) -> Row:
    excess = interval.excess_annual_return
    return Row(
        name=name,
        source="ours",
        final_return=_pct(score.final_return),
        max_drawdown=_pct(score.max_drawdown),
        sortino=None if score.sortino is None else round(score.sortino, 4),
        sharpe=_num(score.sharpe),
        turnover=round(score.turnover, 2),
        costs=round(score.costs, 2),
        dividends=round(score.dividends, 2),
        sharpe_low=_num(interval.sharpe.low),
        sharpe_high=_num(interval.sharpe.high),
        excess_low=None if excess is None else _pct(excess.low),
        excess_high=None if excess is None else _pct(excess.high),
        vs_hold=_pct(score.final_return - base),
    )


def _pct(value: float | None) -> float:
    return round(100.0 * float(value or 0.0), 2)


def _num(value: float | None) -> float | None:
    return None if value is None else round(value, 2)
