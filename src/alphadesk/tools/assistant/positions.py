"""``get_positions``: the paper portfolio valued at the run's instant.

Cash, positions and P&L come from the portfolio's order log
(:mod:`alphadesk.store.portfolio`); the marks come from the data layer at ``as_of``: a
stock's last price, an option's mid in the chain (observed, or modeled and labelled), an
expired option's intrinsic value at its expiration close. A position without a mark is
held at cost and named in ``missing``.
"""

from __future__ import annotations

import asyncio
from datetime import date

from pydantic import BaseModel, Field

from alphadesk.agent import RunContext, tool
from alphadesk.data.calendar import local_date, session_close
from alphadesk.data.errors import DataError
from alphadesk.store.portfolio import Contract, Valuation
from alphadesk.tools.assistant.deps import ChatDeps
from alphadesk.tools.common import ToolOutput
from alphadesk.tools.options.zero_dte import SPY_PER_INDEX

__all__ = ["HeldPosition", "PositionsReport", "get_positions"]


class HeldPosition(BaseModel):
    position: str = Field(description="Stock ticker, or SYMBOL EXPIRATION STRIKE P/C.")
    quantity: float = Field(description="Negative for a short position.")
    average_cost: float = Field(description="Per share.")
    mark: float | None = Field(description="Per share at as_of; null when none was found.")
    mark_basis: str
    market_value: float
    unrealized_pnl: float
    realized_pnl: float


class PositionsReport(ToolOutput):
    """The paper account at the run's instant."""

    account: str
    cash: float
    collateral: float = Field(0.0, description="Cash reserved for the open short puts.")
    starting_cash: float
    positions: list[HeldPosition]
    market_value: float
    realized_pnl: float
    unrealized_pnl: float
    account_value: float
    total_pnl: float = Field(description="account_value - starting_cash.")
    total_pnl_pct: float
    orders: int


def _price(ctx: RunContext[ChatDeps], symbol: str, day: date | None = None) -> tuple[float, str]:
    """The underlying's price at as_of (or at the close of ``day``) and its basis."""
    market = ctx.deps.market
    when = ctx.as_of if day is None else min(ctx.as_of, session_close(day))
    try:
        quote = market.quote(symbol, when)
        return quote.price, f"{quote.provenance.provider} {quote.basis} {quote.observed_at.date()}"
    except DataError:
        if symbol != "SPY":
            raise
        index = market.quote("^GSPC", when)
        return index.price * SPY_PER_INDEX, f"S&P 500 / 10 (modeled) {index.observed_at.date()}"


def _mark(ctx: RunContext[ChatDeps], contract: Contract) -> tuple[float, str]:
    if not contract.is_option:
        return _price(ctx, contract.symbol)
    assert contract.expiration is not None and contract.strike is not None
    if contract.expiration < local_date(ctx.as_of):  # expired: settled at intrinsic value
        spot, basis = _price(ctx, contract.symbol, contract.expiration)
        gap = spot - contract.strike if contract.right == "call" else contract.strike - spot
        return max(gap, 0.0), f"expired: intrinsic at {basis}"
    dte = (contract.expiration - local_date(ctx.as_of)).days
    chain = ctx.deps.market.option_chain(contract.symbol, ctx.as_of, min_dte=dte, max_dte=dte)
    for option in chain.select(contract.right or "put", expiration=contract.expiration):
        if abs(option.strike - contract.strike) < 1e-6 and option.mid is not None:
            return option.mid, f"{chain.provenance.origin} chain mid"
    raise DataError(f"{contract.key}: not listed in the {chain.provenance.origin} chain")


def _marks(ctx: RunContext[ChatDeps], contracts: list[Contract]) -> dict[str, tuple[float, str]]:
    found: dict[str, tuple[float, str]] = {}
    for contract in contracts:
        try:
            found[contract.key] = _mark(ctx, contract)
        except DataError as exc:
            found[contract.key] = (float("nan"), f"no price: {exc}")
    return found


@tool
async def get_positions(ctx: RunContext[ChatDeps]) -> PositionsReport:
    """The user's paper portfolio: cash, positions, cost basis, P&L and account value.

    Each position (stocks and options; a negative quantity is short) with its average
    cost, the mark at the run's instant, market value, unrealised and realised P&L; then
    the account totals. Positions without a price are held at cost and named in missing.
    """
    book = ctx.deps.portfolio
    if book is None:
        raise DataError("no paper portfolio is configured for this session")
    account = ctx.deps.account
    # Only the orders traded by the run's instant: a valuation never sees the future.
    _, held = await asyncio.to_thread(book.positions, account, ctx.as_of)
    marks = await asyncio.to_thread(_marks, ctx, [p.contract for p in held])
    prices = {key: (None if value != value else value) for key, (value, _) in marks.items()}
    valuation: Valuation = await asyncio.to_thread(book.value, prices, account, ctx.as_of)
    rows = [
        HeldPosition(
            position=p.key,
            quantity=p.quantity,
            average_cost=round(p.average_cost, 4),
            mark=None if p.mark is None else round(p.mark, 4),
            mark_basis=marks[p.key][1],
            market_value=round(p.market_value, 2),
            unrealized_pnl=round(p.unrealized_pnl, 2),
            realized_pnl=round(p.realized_pnl, 2),
        )
        for p in valuation.positions
    ]
    start = valuation.starting_cash
    return PositionsReport(
        symbol="PORTFOLIO",
        as_of=ctx.as_of,
        missing=[f"{key}: {marks[key][1]}; held at cost" for key in valuation.unpriced],
        account=account,
        cash=round(valuation.cash, 2),
        collateral=round(valuation.collateral, 2),
        starting_cash=round(start, 2),
        positions=rows,
        market_value=round(valuation.market_value, 2),
        realized_pnl=round(valuation.realized_pnl, 2),
        unrealized_pnl=round(valuation.unrealized_pnl, 2),
        account_value=round(valuation.account_value, 2),
        total_pnl=round(valuation.total_pnl, 2),
        total_pnl_pct=round(valuation.total_pnl / start * 100, 2) if start else 0.0,
        orders=valuation.orders,
    )
