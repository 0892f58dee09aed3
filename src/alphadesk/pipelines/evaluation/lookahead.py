"""Market data that refuses to answer past the decision instant.

The harness hands a desk :func:`guard` of its market. Every call that takes an
``as_of`` checks it against the decision in progress (:mod:`.scope`): later than the
decision instant, or outside any decision, raises :class:`~.scope.LookAheadError`, and
the decision remembers it so the evaluation fails even if the desk caught the error.
A provider chain is guarded member by member, so the desk still sees a chain (the
options tools look inside one).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime

from alphadesk.data.bars import Bars
from alphadesk.data.base import DataKind, IvHistorySource, MarketData
from alphadesk.data.chain import ProviderChain
from alphadesk.data.models import (
    AnalystRatings,
    Coverage,
    Earnings,
    Filings,
    Fundamentals,
    Instrument,
    News,
    OptionChain,
    Quote,
    ShortInterest,
)

from .scope import LookAheadError, current_decision

__all__ = ["GuardedMarket", "guard"]


def _check(what: str, symbol: str, as_of: datetime) -> None:
    scope = current_decision()
    if scope is None:
        raise LookAheadError(
            f"{what} of {symbol} as of {as_of.isoformat()} read outside any decision; "
            "a desk under evaluation reads data only while deciding"
        )
    scope.check(f"{what} of {symbol}", as_of)


class GuardedMarket:
    """``inner`` behind the look-ahead check (see the module docstring)."""

    def __init__(self, inner: MarketData) -> None:
        self.inner = inner

    def __repr__(self) -> str:
        return f"GuardedMarket({self.inner!r})"

    @property
    def name(self) -> str:
        return self.inner.name

    def supports(self, kind: DataKind) -> bool:
        return self.inner.supports(kind)

    def universe(self) -> list[str]:
        return self.inner.universe()

    def coverage(self) -> list[Coverage]:
        return self.inner.coverage()

    def daily_bars(self, symbol: str, as_of: datetime, *, start: date | None = None) -> Bars:
        _check("daily bars", symbol, as_of)
        return self.inner.daily_bars(symbol, as_of, start=start)

    def intraday_bars(
        self, symbol: str, as_of: datetime, *, interval: str = "5m", start: date | None = None
    ) -> Bars:
        _check("intraday bars", symbol, as_of)
        return self.inner.intraday_bars(symbol, as_of, interval=interval, start=start)

    def quote(self, symbol: str, as_of: datetime) -> Quote:
        _check("a quote", symbol, as_of)
        return self.inner.quote(symbol, as_of)

    def option_chain(
        self, symbol: str, as_of: datetime, *, min_dte: int = 0, max_dte: int = 60
    ) -> OptionChain:
        _check("the option chain", symbol, as_of)
        return self.inner.option_chain(symbol, as_of, min_dte=min_dte, max_dte=max_dte)

    def instrument(self, symbol: str, as_of: datetime) -> Instrument:
        _check("the instrument", symbol, as_of)
        return self.inner.instrument(symbol, as_of)

    def fundamentals(self, symbol: str, as_of: datetime) -> Fundamentals:
        _check("fundamentals", symbol, as_of)
        return self.inner.fundamentals(symbol, as_of)

    def news(self, symbol: str, as_of: datetime, *, days: int = 7, limit: int = 50) -> News:
        _check("news", symbol, as_of)
        return self.inner.news(symbol, as_of, days=days, limit=limit)

    def earnings(self, symbol: str, as_of: datetime) -> Earnings:
        _check("earnings", symbol, as_of)
        return self.inner.earnings(symbol, as_of)

    def short_interest(self, symbol: str, as_of: datetime) -> ShortInterest:
        _check("short interest", symbol, as_of)
        return self.inner.short_interest(symbol, as_of)

    def analyst_ratings(self, symbol: str, as_of: datetime, *, days: int = 365) -> AnalystRatings:
        _check("analyst ratings", symbol, as_of)
        return self.inner.analyst_ratings(symbol, as_of, days=days)

    def filings(
        self,
        symbol: str,
        as_of: datetime,
        *,
        forms: Sequence[str] | None = None,
        limit: int = 20,
    ) -> Filings:
        _check("filings", symbol, as_of)
        return self.inner.filings(symbol, as_of, forms=forms, limit=limit)


class _GuardedIvHistory(GuardedMarket):
    """A guarded provider that also computes IV histories in one pass."""

    inner: IvHistorySource  # type: ignore[assignment]

    def atm_iv_history(
        self,
        symbol: str,
        instants: Sequence[datetime],
        *,
        min_dte: int,
        max_dte: int,
        target_dte: int,
    ) -> list[float]:
        for instant in instants:
            _check("an ATM IV sample", symbol, instant)
        return self.inner.atm_iv_history(
            symbol, instants, min_dte=min_dte, max_dte=max_dte, target_dte=target_dte
        )


def guard(market: MarketData) -> MarketData:
    """``market`` with every read checked against the decision in progress."""
    if isinstance(market, ProviderChain):
        order = {kind: [p.name for p in market.order_for(kind)] for kind in DataKind}
        return ProviderChain([guard(p) for p in market.providers], order=order)
    if isinstance(market, IvHistorySource):
        return _GuardedIvHistory(market)
    return GuardedMarket(market)
