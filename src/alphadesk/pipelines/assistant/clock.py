"""The instant a question is answered at: the data's "now" for what it is about.

A question about no symbol is about the market (the S&P 500 and the VIX). A market
question about SPY itself is dated by SPY's data alone (the indices do not hold it back to
their last date); a 0DTE trade also reads the VIX and the index, so they date it too. SPY
is modeled from the index where no provider covers it, so the index's coverage then
decides its date.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from alphadesk.data.base import MarketData
from alphadesk.data.current import resolve_as_of as _resolve

__all__ = ["MARKET_SYMBOLS", "market_symbols", "resolve_as_of"]

MARKET_SYMBOLS = ("^GSPC", "^VIX")
_SPY, _INDEX = "SPY", "^GSPC"


def market_symbols(symbols: list[str], categories: Sequence[str]) -> list[str]:
    """The symbols whose data dates a market question: SPY alone when it is the subject,
    else the question's symbols and the market's indices."""
    if _SPY in symbols and "zero_dte" not in categories:
        return list(symbols)
    return [*symbols, *MARKET_SYMBOLS]


def resolve_as_of(
    market: MarketData, requested: datetime | None, symbols: list[str], now: datetime
) -> tuple[datetime, str | None]:
    """The instant to answer at and, when it is not the one asked for, why."""
    wanted = list(dict.fromkeys(symbols)) or list(MARKET_SYMBOLS)
    if _SPY in wanted and requested is None and not _covered(market, _SPY):
        wanted = list(dict.fromkeys(_INDEX if s == _SPY else s for s in wanted))
    return _resolve(market, requested, wanted, now)


def _covered(market: MarketData, symbol: str) -> bool:
    return any(c.symbol == symbol for c in market.coverage())
