"""Marks for the paper account's positions from the data at an instant: a stock's last
price, an option's mid in the chain (observed, or modeled and labelled), an expired
option's intrinsic value at its expiration close (an expiration that is not a trading day,
stored by an older version: at the close of the last session on or before it, stated).
A contract without a price is named with the reason; it never stops the others."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from alphadesk.data.base import MarketData
from alphadesk.data.calendar import close_on_or_before, is_session, local_date
from alphadesk.data.errors import DataError
from alphadesk.data.spy import spy_price
from alphadesk.portfolio.models import Contract

__all__ = ["Mark", "mark", "marks"]


@dataclass(frozen=True)
class Mark:
    """A position's per-share price at an instant (None: none was found) and its basis."""

    price: float | None
    basis: str


def _price(market: MarketData, symbol: str, when: datetime) -> tuple[float, str]:
    """The underlying's price at ``when`` and its basis."""
    try:
        quote = market.quote(symbol, when)
        return quote.price, f"{quote.provenance.provider} {quote.basis} {quote.observed_at.date()}"
    except DataError:
        if symbol != "SPY":
            raise
        found = spy_price(market, when)  # the index / 10 only of the same session
        return found.price, f"{found.basis} {found.observed_at.date()}"


def _expired(market: MarketData, contract: Contract, as_of: datetime) -> tuple[float, str]:
    """An expired option settled at its intrinsic value at its expiration close."""
    assert contract.expiration is not None and contract.strike is not None
    settled = close_on_or_before(contract.expiration)
    spot, basis = _price(market, contract.symbol, min(as_of, settled))
    gap = spot - contract.strike if contract.right == "call" else contract.strike - spot
    if not is_session(contract.expiration):
        basis += (
            f" ({contract.expiration} is not a trading day: settled at the close of "
            f"{local_date(settled)})"
        )
    return max(gap, 0.0), f"expired: intrinsic at {basis}"


def mark(market: MarketData, contract: Contract, as_of: datetime) -> Mark:
    """``contract``'s per-share price at ``as_of``.

    Raises:
        DataError: no price for it at ``as_of``.
    """
    if not contract.is_option:
        return Mark(*_price(market, contract.symbol, as_of))
    assert contract.expiration is not None and contract.strike is not None
    today: date = local_date(as_of)
    if contract.expiration < today:
        return Mark(*_expired(market, contract, as_of))
    dte = (contract.expiration - today).days
    chain = market.option_chain(contract.symbol, as_of, min_dte=dte, max_dte=dte)
    for option in chain.select(contract.right or "put", expiration=contract.expiration):
        if abs(option.strike - contract.strike) < 1e-6 and option.mid is not None:
            return Mark(option.mid, f"{chain.provenance.origin} chain mid")
    raise DataError(f"{contract.key}: not listed in the {chain.provenance.origin} chain")


def _finite(found: Mark) -> Mark:
    if found.price is None or math.isfinite(found.price):
        return found
    return Mark(None, f"no price: the data gave {found.price} ({found.basis})")


def marks(market: MarketData, contracts: Iterable[Contract], as_of: datetime) -> dict[str, Mark]:
    """Each contract's mark by key; one without a price has ``price`` None and says why."""
    found: dict[str, Mark] = {}
    for contract in contracts:
        try:
            found[contract.key] = _finite(mark(market, contract, as_of))
        except (DataError, ValueError) as exc:  # ValueError: a date outside the calendar
            found[contract.key] = Mark(None, f"no price: {exc}")
    return found
