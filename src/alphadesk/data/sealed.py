"""Market data that ends at an instant: a view that cannot answer about anything later.

:func:`seal` wraps a market so that every read with an ``as_of`` after ``until`` raises
:class:`SealedData` instead of answering; since every provider returns only what was known
at ``as_of``, nothing after ``until`` can come through. A provider chain is sealed member by
member, so whoever looks inside a chain (the options tools) still sees one. Coverage is
cut at ``until`` too. The strategy lab searches through such a view, so its final holdout
stays out of reach by construction, not by convention.
"""

from __future__ import annotations

from datetime import datetime

from .base import IvHistorySource, MarketData
from .chain import ProviderChain
from .checked import CheckedIvHistory, CheckedMarket, each_member
from .errors import DataError
from .models import Coverage
from .pit import require_aware

__all__ = ["SealedData", "SealedMarket", "seal"]


class SealedData(DataError):
    """A read past the instant a sealed market ends at. Never tried on another provider."""

    fallback = False


class SealedMarket(CheckedMarket):
    """``inner`` ending at ``until`` (see the module docstring)."""

    def __init__(self, inner: MarketData, until: datetime) -> None:
        super().__init__(inner)
        self.until = require_aware(until)

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

    def coverage(self) -> list[Coverage]:
        last = self.until.date()
        return [
            c.model_copy(update={"end": min(c.end, last), "rows": None})
            if c.end is not None and c.end > last
            else c
            for c in self.inner.coverage()
        ]


class _SealedIvHistory(SealedMarket, CheckedIvHistory):
    """A sealed provider that also computes IV histories in one pass."""


def seal(market: MarketData, until: datetime) -> MarketData:
    """``market`` as it stood at ``until``: later reads raise :class:`SealedData`."""
    if isinstance(market, ProviderChain):
        return each_member(market, lambda p: seal(p, until))
    if isinstance(market, IvHistorySource):
        return _SealedIvHistory(market, until)
    return SealedMarket(market, until)
