"""The instant a question is answered at: the data's "now" for what it is about.

A question about no symbol is about the market (the S&P 500 and the VIX); SPY is modeled
from the index, so the index's coverage decides its date.
"""

from __future__ import annotations

from datetime import datetime

from alphadesk.data.base import MarketData
from alphadesk.data.current import resolve_as_of as _resolve

__all__ = ["MARKET_SYMBOLS", "resolve_as_of"]

MARKET_SYMBOLS = ("^GSPC", "^VIX")
_PROXIES = {"SPY": "^GSPC"}


def resolve_as_of(
    market: MarketData, requested: datetime | None, symbols: list[str], now: datetime
) -> tuple[datetime, str | None]:
    """The instant to answer at and, when it is not the one asked for, why."""
    wanted = list(dict.fromkeys(_PROXIES.get(s, s) for s in symbols)) or list(MARKET_SYMBOLS)
    return _resolve(market, requested, wanted, now)
