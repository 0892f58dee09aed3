"""The one way an order reaches a paper account from a front end: its price checked
against its trade date's bar, and its cash checked with the dividends the account's
stocks paid by then (cash a dividend brought may be spent after its ex-date)."""

from __future__ import annotations

from datetime import UTC, datetime

from alphadesk.data.base import MarketData
from alphadesk.portfolio.account import DEFAULT_ACCOUNT, PaperPortfolio
from alphadesk.portfolio.dividends import dividend_credits
from alphadesk.portfolio.fills import verify_price
from alphadesk.portfolio.models import Order, OrderRequest

__all__ = ["place"]


def place(
    book: PaperPortfolio,
    market: MarketData,
    order: OrderRequest,
    account: str = DEFAULT_ACCOUNT,
    *,
    force: bool = False,
) -> Order:
    """Verify ``order``'s price and record it in ``account``.

    Raises:
        PriceNotVerified: the price is outside its day's range (``force`` records it, marked).
        AccountNotFound, DamagedAccount, InsufficientCash, OrderRejected: as
            :meth:`PaperPortfolio.place`.
    """
    book.account(account)
    checked = verify_price(market, order, force=force)
    checked = checked.model_copy(update={"as_of": checked.as_of or datetime.now(UTC)})
    assert checked.as_of is not None
    log = book.log(account)
    stocks = {o.contract.symbol for o in [*log.orders, checked] if not o.contract.is_option}
    latest = max([checked.as_of, *(o.as_of for o in log.orders if o.as_of is not None)])
    credits, _ = dividend_credits(market, stocks, latest)
    return book.place(checked, account, credits)
