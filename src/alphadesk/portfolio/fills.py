"""A paper order's price checked against the data at its trade date.

A stock's price must lie in the day's low-high range (a source with closes only: the
close, to the cent); an option's premium must be above 0 and at most what the option can
be worth that day (a put: its strike; a call: the underlying's high), and the underlying
must have a bar that day. At its expiration close an option is worth its intrinsic value,
so a premium then must lie in the range the day's low and high give it. A price that
fails, or a symbol without data at the trade date, is refused unless forced; a forced
order is labelled so in the order log.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from alphadesk.data.base import MarketData
from alphadesk.data.calendar import close_on_or_before, local_date
from alphadesk.data.errors import DataError
from alphadesk.portfolio.book import expiration_problem, expires_at
from alphadesk.portfolio.models import OrderRejected, OrderRequest, PriceNotVerified

__all__ = ["DayRange", "day_range", "verify_price"]

_CENT = 0.005  # a price typed to the cent matches a close kept to more decimals


@dataclass(frozen=True)
class DayRange:
    """The trade date's bar of a symbol: its low and high (the close when the source has
    closes only), and who answered."""

    symbol: str
    day: date
    low: float
    high: float
    provider: str
    closes_only: bool

    def describe(self) -> str:
        if self.closes_only:
            return f"{self.symbol}'s {self.day} close {self.low:g} ({self.provider}; no high/low)"
        return f"{self.symbol}'s {self.day} range {self.low:g}-{self.high:g} ({self.provider})"


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def day_range(market: MarketData, symbol: str, traded: datetime) -> DayRange:
    """The bar of the session the trade date falls in (a day without one: the session
    before).

    Raises:
        DataError: no bar for that session.
    """
    session = local_date(close_on_or_before(local_date(traded)))
    bars = market.daily_bars(symbol, close_on_or_before(session), start=session - timedelta(5))
    last = bars.last_time
    if last is None or local_date(last) != session:
        seen = f"its last bar is of {local_date(last)}" if last else "it has no bars"
        raise DataError(f"{symbol}: no bar for {session} ({seen})")
    row = bars.frame.iloc[-1]
    low, high = _number(row.get("low")), _number(row.get("high"))
    provider = bars.provenance.provider
    if low is not None and high is not None:
        return DayRange(symbol, session, low, high, provider, closes_only=False)
    close = _number(row.get(bars.price_field()))
    if close is None:
        raise DataError(f"{symbol}: the {session} bar has no price")
    return DayRange(symbol, session, close, close, provider, closes_only=True)


def _judge(order: OrderRequest, bar: DayRange) -> tuple[bool, str]:
    """Whether the price fits the day, and the words that say so."""
    price, contract = order.price, order.contract
    if not contract.is_option:
        inside = bar.low - _CENT <= price <= bar.high + _CENT
        where = "below" if price < bar.low else "above"
        if inside:
            where = "at" if bar.closes_only else "within"
        return inside, f"{price:g} is {where} {bar.describe()}"
    assert contract.strike is not None and order.as_of is not None
    if order.as_of >= expires_at(contract):
        return _at_expiry(price, contract.strike, contract.right == "put", bar)
    most = contract.strike if contract.right == "put" else bar.high
    worth = "its strike" if contract.right == "put" else f"{bar.symbol}'s {bar.day} high"
    if price <= most + _CENT:
        return True, f"{price:g} is at most {worth} {most:g}; {bar.describe()}"
    return False, f"{price:g} is more than a {contract.right} can be worth ({worth} {most:g})"


def _at_expiry(price: float, strike: float, put: bool, bar: DayRange) -> tuple[bool, str]:
    """An option at its expiration close is worth its intrinsic value at the close, which
    lies between its values at the day's low and high."""
    ends = (max(strike - bar.high, 0.0), max(strike - bar.low, 0.0)) if put else (
        max(bar.low - strike, 0.0), max(bar.high - strike, 0.0))  # fmt: skip
    inside = ends[0] - _CENT <= price <= ends[1] + _CENT
    worth = f"{ends[0]:g}" if ends[0] == ends[1] else f"{ends[0]:g}-{ends[1]:g}"
    words = (
        f"{price:g} is {'within' if inside else 'off'} what the option is worth at its "
        f"expiration close, its intrinsic value {worth} ({bar.describe()})"
    )
    return inside, words


def verify_price(market: MarketData, order: OrderRequest, *, force: bool = False) -> OrderRequest:
    """``order`` labelled with how its price was checked at its trade date (``as_of``).

    Raises:
        OrderRejected: an option that cannot trade then (its expiration is before the
            trade date, or not a trading day), forced or not.
        PriceNotVerified: the price is off the day, or there is no data for the day, and
            ``force`` is not set.
    """
    if order.as_of is None:
        raise ValueError("an order needs its trade date (as_of) before its price is checked")
    impossible = expiration_problem(order)  # before its price: no price makes it possible
    if impossible is not None:
        raise OrderRejected(impossible)
    symbol = order.contract.symbol
    try:
        fits, words = _judge(order, day_range(market, symbol, order.as_of))
    except (DataError, ValueError) as exc:  # ValueError: a date outside the calendar
        fits, words = False, f"no data to check {order.price:g} against: {exc}"
    if fits:
        return order.model_copy(update={"price_check": words, "forced": False})
    if not force:
        raise PriceNotVerified(f"{order.contract.key} at {order.price:g}: {words}")
    return order.model_copy(update={"price_check": f"forced: {words}", "forced": True})
