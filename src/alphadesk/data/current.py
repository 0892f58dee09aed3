"""The instant "now" means for the data at hand.

An explicit ``as_of`` wins. Otherwise now, if the providers have current data for the
symbols asked about; when every provider is offline or stale (the bundled data ends in the
past), the close of the last session the data covers for all of them, with a note saying
so, so that old data is never passed off as today's.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from .base import MarketData
from .calendar import session_close, sessions_between
from .errors import DataError

__all__ = ["resolve_as_of"]


def resolve_as_of(
    market: MarketData, requested: datetime | None, symbols: list[str], now: datetime
) -> tuple[datetime, str | None]:
    """The instant to analyse at and, when it is not the one asked for, why."""
    if requested is not None:
        return requested, None
    try:
        for symbol in symbols:
            market.daily_bars(symbol, now, start=(now - timedelta(days=10)).date())
    except DataError:
        pass
    else:
        return now, None
    ends: dict[str, date] = {}
    for cover in market.coverage():
        if cover.symbol in symbols and cover.end is not None:
            ends[cover.symbol] = max(cover.end, ends.get(cover.symbol, cover.end))
    if set(ends) != set(symbols):
        return now, None  # a symbol no provider covers: the run reports it as missing data
    sessions = sessions_between(min(ends.values()) - timedelta(days=10), min(ends.values()))
    if not sessions:
        return now, None
    day = sessions[-1]
    note = (
        f"No provider has current data, so this is as of {day.isoformat()}, the last date "
        f"the data covers for {', '.join(sorted(ends))}."
    )
    return session_close(day), note
