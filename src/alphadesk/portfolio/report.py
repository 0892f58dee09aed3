"""The paper account at an instant, as the CLI, the API and the assistant show it: cash,
positions marked from the data (:mod:`alphadesk.portfolio.marks`), P&L and account value,
from the orders traded by then and the cash dividends declared and gone ex by then
(:mod:`alphadesk.portfolio.dividends`). A position without a mark is held at cost and named in
``missing`` with the orders that opened it, as is each stored order set aside."""

from __future__ import annotations

from datetime import datetime

from pydantic import AwareDatetime, BaseModel, Field

from alphadesk.data.base import MarketData
from alphadesk.portfolio.account import DEFAULT_ACCOUNT, PaperPortfolio
from alphadesk.portfolio.dividends import account_dividends
from alphadesk.portfolio.marks import marks
from alphadesk.portfolio.models import DividendPaid

__all__ = ["AccountReport", "HeldPosition", "account_report"]


class HeldPosition(BaseModel):
    position: str = Field(description="Stock ticker, or SYMBOL EXPIRATION STRIKE P/C.")
    quantity: float = Field(description="Negative for a short position.")
    average_cost: float = Field(description="Per share.")
    mark: float | None = Field(description="Per share at as_of; null when none was found.")
    mark_basis: str
    market_value: float
    unrealized_pnl: float
    realized_pnl: float


class AccountReport(BaseModel):
    """The paper account at an instant, money rounded to the cent."""

    as_of: AwareDatetime = Field(description="The instant; only orders traded by then count.")
    missing: list[str] = Field(
        default_factory=list,
        description="Positions held at cost and stored orders left out, and why.",
    )
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
    dividends: list[DividendPaid] = Field(
        default_factory=list,
        description="Dividends credited to the shares held on each ex-date (a short pays), "
        "already in cash.",
    )
    dividend_basis: list[str] = Field(
        default_factory=list,
        description="For each stock traded: where its dividend records came from, or that "
        "it has none (no credit).",
    )


def _at_cost(key: str, orders: list[str], why: str) -> str:
    return f"{key} (orders {', '.join(orders)}): {why}; held at cost"


def account_report(
    portfolio: PaperPortfolio,
    market: MarketData,
    as_of: datetime,
    account: str = DEFAULT_ACCOUNT,
) -> AccountReport:
    """``account`` at ``as_of``: only the orders traded by then, marked from ``market``.

    Raises:
        AccountNotFound: no such account.
    """
    log = portfolio.log(account)  # one read: the marks and the valuation see the same orders
    held = [p.contract for p in log.book(as_of).positions.values() if p.quantity]
    found = marks(market, held, as_of)
    credits, dividend_basis = account_dividends(log, market, as_of)
    valuation = log.value({k: m.price for k, m in found.items()}, as_of, credits)
    traded: dict[str, list[str]] = {key: [] for key in valuation.unpriced}
    for order in log.until(as_of):
        traded.get(order.contract.key, []).append(str(order.id))
    rows = [
        HeldPosition(
            position=p.key,
            quantity=p.quantity,
            average_cost=round(p.average_cost, 4),
            mark=None if p.mark is None else round(p.mark, 4),
            mark_basis=found[p.key].basis,
            market_value=round(p.market_value, 2),
            unrealized_pnl=round(p.unrealized_pnl, 2),
            realized_pnl=round(p.realized_pnl, 2),
        )
        for p in valuation.positions
    ]
    start = valuation.starting_cash
    return AccountReport(
        as_of=as_of,
        missing=[
            *(_at_cost(key, traded[key], found[key].basis) for key in valuation.unpriced),
            *(row.describe() for row in valuation.set_aside),
        ],
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
        dividends=[d.model_copy(update={"cash": round(d.cash, 2)}) for d in valuation.dividends],
        dividend_basis=dividend_basis,
    )
