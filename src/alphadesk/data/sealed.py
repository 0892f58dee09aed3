"""Market data that ends at an instant: a view that cannot answer about anything later.

:func:`seal` wraps a market so that every read with an ``as_of`` after ``until`` raises
:class:`SealedData` instead of answering; since every provider returns only what was known
at ``as_of``, nothing after ``until`` can come through. A provider chain is sealed member by
member, so whoever looks inside a chain (the options tools) still sees one. Coverage is
cut at ``until`` too. The strategy lab searches through such a view, so its final holdout
stays out of reach by construction, not by convention.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime

from .bars import Bars
from .base import DataKind, IvHistorySource, MarketData
from .chain import ProviderChain
from .errors import DataError
from .models import (
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
from .pit import require_aware

__all__ = ["SealedData", "SealedMarket", "seal"]


class SealedData(DataError):
    """A read past the instant a sealed market ends at. Never tried on another provider."""

    fallback = False


class SealedMarket:
    """``inner`` ending at ``until`` (see the module docstring)."""

    def __init__(self, inner: MarketData, until: datetime) -> None:
        self.inner, self.until = inner, require_aware(until)

    def __repr__(self) -> str:
        return f"SealedMarket({self.inner!r}, until={self.until.isoformat()})"

    def _check(self, what: str, symbol: str, as_of: datetime) -> None:
        if as_of > self.until:
            raise SealedData(
                f"{what} of {symbol} as of {as_of.isoformat()}: this view of the market ends "
                f"at {self.until.isoformat()} (what follows is sealed); ask as of that instant "
                "or earlier",
                provider=self.inner.name,
            )

    @property
    def name(self) -> str:
        return self.inner.name

    def supports(self, kind: DataKind) -> bool:
        return self.inner.supports(kind)

    def universe(self) -> list[str]:
        return self.inner.universe()

    def coverage(self) -> list[Coverage]:
        last = self.until.date()
        return [
            c.model_copy(update={"end": min(c.end, last), "rows": None})
            if c.end is not None and c.end > last
            else c
            for c in self.inner.coverage()
        ]

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


class _SealedIvHistory(SealedMarket):
    """A sealed provider that also computes IV histories in one pass."""

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


def seal(market: MarketData, until: datetime) -> MarketData:
    """``market`` as it stood at ``until``: later reads raise :class:`SealedData`."""
    if isinstance(market, ProviderChain):
        order = {kind: [p.name for p in market.order_for(kind)] for kind in DataKind}
        return ProviderChain([seal(p, until) for p in market.providers], order=order)
    if isinstance(market, IvHistorySource):
        return _SealedIvHistory(market, until)
    return SealedMarket(market, until)
