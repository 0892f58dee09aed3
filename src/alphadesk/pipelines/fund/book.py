"""A fund request from what a door was given: the names (or an index's members) checked
against the data, and the paper account's book at the instant. Every door (the CLI, the
API, the MCP server) builds its request here, so bad input fails the same way everywhere,
before anything is recorded."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from alphadesk.data.base import MarketData
from alphadesk.data.calendar import local_date
from alphadesk.data.errors import DataError, NoData
from alphadesk.data.symbols import normalize_symbol
from alphadesk.data.universe import INDICES, bundled_membership, with_data
from alphadesk.money import usd
from alphadesk.pipelines.depth import Depth
from alphadesk.pipelines.fund.models import BookSnapshot, FundRequest, Held
from alphadesk.portfolio import PaperPortfolio, account_dividends
from alphadesk.portfolio.targets import BookLimits

__all__ = ["fund_request", "read_book", "universe_members"]


def universe_members(market: MarketData, index: str, as_of: datetime) -> list[str]:
    """The members of ``index`` on ``as_of``'s session that have bars here, sorted.

    Raises:
        ValueError: an unknown index.
        NoData: no member has data here that day.
    """
    if index not in INDICES:
        raise ValueError(f"unknown index {index!r}; use one of {', '.join(INDICES)}")
    day = local_date(as_of)
    members = bundled_membership().members(index, day)
    have, _lack = with_data(members, market.coverage(), day)
    if not have:
        raise NoData(f"no {INDICES[index]} member has data here on {day}")
    return sorted(have)


def read_book(store_path: Path, account: str, market: MarketData, as_of: datetime) -> BookSnapshot:
    """The account at ``as_of``: the orders traded by then and the dividends credited.

    Raises:
        AccountNotFound: no such account (the default one reads as fresh until used).
    """
    log = PaperPortfolio(store_path).log(account)
    credits, _basis = account_dividends(log, market, as_of)
    book = log.book(as_of, credits)
    held = [p for p in book.positions.values() if p.quantity]
    stocks = [Held(symbol=p.contract.symbol, shares=p.quantity, average_cost=p.average_cost)
              for p in held if not p.contract.is_option]  # fmt: skip
    notes: list[str] = []
    reserved = book.collateral(as_of)
    if not log.until(as_of):
        notes.append(
            f"account {account} had no order by {local_date(as_of)}: the book is "
            f"{usd(book.cash)} of cash"
        )
    options = len(held) - len(stocks)
    if options:
        notes.append(
            f"{options} option position(s) left out of the book; {usd(reserved)} of cash "
            "they reserve is not spent"
        )
    return BookSnapshot(account=account, cash=book.cash - reserved, holdings=stocks, notes=notes)


def fund_request(
    market: MarketData,
    store_path: Path,
    as_of: datetime,
    *,
    symbols: Sequence[str] = (),
    universe: str | None = None,
    account: str,
    limits: BookLimits | None = None,
    depth: Depth = "standard",
) -> FundRequest:
    """The request for the book of ``account`` on ``symbols`` (or ``universe``'s members).

    Raises:
        ValueError: no symbol and no universe, both, a symbol that is no ticker, an
            unknown index.
        DataError: a symbol without bars at ``as_of`` (the message names close matches),
            a name the account holds without a price then (the book cannot be valued).
        AccountNotFound: no such account.
    """
    if universe is not None and symbols:
        raise ValueError("give SYMBOLs or --universe, not both")
    if universe is not None:
        names = universe_members(market, universe, as_of)
    else:
        names = list(dict.fromkeys(normalize_symbol(s) for s in symbols))
    if not names:
        raise ValueError("no symbol to decide on: give SYMBOLs or --universe INDEX")
    for name in names:
        market.daily_bars(name, as_of)  # raises, naming close matches, for an unknown one
    book = read_book(store_path, account, market, as_of)
    _priced(market, book, as_of)
    return FundRequest(
        symbols=names,
        universe=universe,
        as_of=as_of,
        depth=depth,
        book=book,
        limits=limits or BookLimits(),
    )


def _priced(market: MarketData, book: BookSnapshot, as_of: datetime) -> None:
    """Refuse, before any desk runs, a book holding a name that has no price at ``as_of``:
    the manager could not value it, so no weight could be set."""
    for held in book.holdings:
        try:
            market.quote(held.symbol, as_of)
        except DataError as exc:
            raise NoData(
                f"account {book.account} holds {held.shares:g} {held.symbol}, which has no "
                f"price at {local_date(as_of)}, so the book cannot be valued ({exc}); decide "
                "on a date the data prices it, or sell the position on one (`alphadesk "
                f"portfolio sell {held.symbol} {held.shares:g} --date DATE --account "
                f"{book.account}`)"
            ) from None
