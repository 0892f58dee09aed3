"""The cash dividends a paper account's stocks paid, from the data at an instant: each
record declared by then becomes a :class:`~alphadesk.portfolio.models.DividendCredit` that
the replay applies on its ex-date to the shares held. A stock without dividend records
gets no credit, and the basis says so (never a silent zero)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from alphadesk.data.base import MarketData
from alphadesk.data.errors import DataError
from alphadesk.portfolio.account import OrderLog
from alphadesk.portfolio.models import DividendCredit

__all__ = ["account_dividends", "dividend_credits"]


def dividend_credits(
    market: MarketData, symbols: Iterable[str], as_of: datetime
) -> tuple[list[DividendCredit], list[str]]:
    """The dividends of ``symbols`` declared by ``as_of`` and the basis of each symbol's
    answer (where the records came from, or why there were none)."""
    credits: list[DividendCredit] = []
    basis: list[str] = []
    for symbol in sorted(set(symbols)):
        try:
            found = market.dividends(symbol, as_of)
        except DataError as exc:
            basis.append(f"no dividend records for {symbol}, so none is credited ({exc})")
            continue
        source = found.provenance.provider
        credits.extend(
            DividendCredit(symbol=symbol, ex_date=r.ex_date, amount=r.amount, source=source)
            for r in found.items
        )
        basis.append(
            f"{symbol}: dividends from {source} records, each credited on its ex-date to the "
            f"shares held at the previous close ({len(found.items)} declared by "
            f"{as_of:%Y-%m-%d})"
        )
    return credits, basis


def account_dividends(
    log: OrderLog, market: MarketData, as_of: datetime
) -> tuple[list[DividendCredit], list[str]]:
    """:func:`dividend_credits` of the stocks ``log`` traded by ``as_of``."""
    stocks = {o.contract.symbol for o in log.until(as_of) if not o.contract.is_option}
    return dividend_credits(market, stocks, as_of)
