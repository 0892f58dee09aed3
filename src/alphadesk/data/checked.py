"""A market behind a check of every read's instant.

The shape the sealed market (:mod:`.sealed`) and the evaluation's look-ahead guard share:
each read that takes an ``as_of`` is checked, then answered by ``inner``. A provider chain
is wrapped member by member (:func:`each_member`), so whoever looks inside a chain (the
options tools) still sees one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from datetime import date, datetime

from .bars import Bars
from .base import DataKind, IvHistorySource, MarketData
from .chain import ProviderChain
from .models import (
    AnalystRatings,
    Coverage,
    Dividends,
    Earnings,
    Filings,
    Fundamentals,
    Instrument,
    News,
    OptionChain,
    Quote,
    ShortInterest,
)

__all__ = ["CheckedIvHistory", "CheckedMarket", "check_read", "each_member"]


class CheckedMarket(ABC):
    """``inner`` with :meth:`_check` before every read that takes an ``as_of``."""

    def __init__(self, inner: MarketData) -> None:
        self.inner = inner

    @abstractmethod
    def _check(self, what: str, symbol: str, as_of: datetime) -> None:
        """Raise when ``what`` of ``symbol`` may not be read as of ``as_of``."""

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
        self._check("daily bars", symbol, as_of)
        return self.inner.daily_bars(symbol, as_of, start=start)

    def intraday_bars(
        self, symbol: str, as_of: datetime, *, interval: str = "5m", start: date | None = None
    ) -> Bars:
        self._check("intraday bars", symbol, as_of)
        return self.inner.intraday_bars(symbol, as_of, interval=interval, start=start)

    def quote(self, symbol: str, as_of: datetime) -> Quote:
        self._check("a quote", symbol, as_of)
        return self.inner.quote(symbol, as_of)

    def option_chain(
        self, symbol: str, as_of: datetime, *, min_dte: int = 0, max_dte: int = 60
    ) -> OptionChain:
        self._check("the option chain", symbol, as_of)
        return self.inner.option_chain(symbol, as_of, min_dte=min_dte, max_dte=max_dte)

    def instrument(self, symbol: str, as_of: datetime) -> Instrument:
        self._check("the instrument", symbol, as_of)
        return self.inner.instrument(symbol, as_of)

    def fundamentals(self, symbol: str, as_of: datetime) -> Fundamentals:
        self._check("fundamentals", symbol, as_of)
        return self.inner.fundamentals(symbol, as_of)

    def news(self, symbol: str, as_of: datetime, *, days: int = 7, limit: int = 50) -> News:
        self._check("news", symbol, as_of)
        return self.inner.news(symbol, as_of, days=days, limit=limit)

    def earnings(self, symbol: str, as_of: datetime) -> Earnings:
        self._check("earnings", symbol, as_of)
        return self.inner.earnings(symbol, as_of)

    def short_interest(self, symbol: str, as_of: datetime) -> ShortInterest:
        self._check("short interest", symbol, as_of)
        return self.inner.short_interest(symbol, as_of)

    def analyst_ratings(self, symbol: str, as_of: datetime, *, days: int = 365) -> AnalystRatings:
        self._check("analyst ratings", symbol, as_of)
        return self.inner.analyst_ratings(symbol, as_of, days=days)

    def filings(
        self,
        symbol: str,
        as_of: datetime,
        *,
        forms: Sequence[str] | None = None,
        limit: int = 20,
    ) -> Filings:
        self._check("filings", symbol, as_of)
        return self.inner.filings(symbol, as_of, forms=forms, limit=limit)

    def dividends(self, symbol: str, as_of: datetime) -> Dividends:
        self._check("dividends", symbol, as_of)
        return self.inner.dividends(symbol, as_of)


class CheckedIvHistory(CheckedMarket):
    """A checked provider that also computes IV histories in one pass (mixed in only when
    ``inner`` does, so ``isinstance(m, IvHistorySource)`` stays true to what it can do)."""

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
            self._check("an ATM IV sample", symbol, instant)
        return self.inner.atm_iv_history(
            symbol, instants, min_dte=min_dte, max_dte=max_dte, target_dte=target_dte
        )


def each_member(chain: ProviderChain, wrap: Callable[[MarketData], MarketData]) -> ProviderChain:
    """``chain`` with each provider wrapped, in the same order for every kind."""
    order = {kind: [p.name for p in chain.order_for(kind)] for kind in DataKind}
    return ProviderChain([wrap(p) for p in chain.providers], order=order)


def check_read(market: MarketData, what: str, symbol: str, as_of: datetime) -> None:
    """Raise as ``market`` would for a read of ``what`` of ``symbol`` as of ``as_of``
    (a checked market, or a chain of them, checks; any other answers every read): for
    whoever answers from what it read before, at the same instant, without reading."""
    members = market.providers if isinstance(market, ProviderChain) else [market]
    for member in members:
        if isinstance(member, CheckedMarket):
            member._check(what, symbol, as_of)
