"""The instant a question is answered at.

An explicit ``as_of`` wins. Otherwise now, if the providers have current data for what the
question is about; when every provider is offline or stale (the bundled data ends in the
past), the last session the data covers for those symbols, said in a note so the answer
never passes old data for today's.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from alphadesk.data.base import MarketData
from alphadesk.data.calendar import session_close, sessions_between
from alphadesk.data.errors import DataError

__all__ = ["MARKET_SYMBOLS", "resolve_as_of"]

MARKET_SYMBOLS = ("^GSPC", "^VIX")
_PROXIES = {"SPY": "^GSPC"}


def _last_session(day: date) -> date | None:
    sessions = sessions_between(day - timedelta(days=10), day)
    return sessions[-1] if sessions else None


def resolve_as_of(
    market: MarketData, requested: datetime | None, symbols: list[str], now: datetime
) -> tuple[datetime, str | None]:
    """The instant to answer at and, when it is not the one asked for, why."""
    if requested is not None:
        return requested, None
    wanted = list(dict.fromkeys(_PROXIES.get(s, s) for s in symbols)) or list(MARKET_SYMBOLS)
    try:
        for symbol in wanted:
            market.daily_bars(symbol, now, start=(now - timedelta(days=10)).date())
    except DataError:
        pass
    else:
        return now, None
    ends: dict[str, date] = {}
    for cover in market.coverage():
        if cover.symbol in wanted and cover.end is not None:
            ends[cover.symbol] = max(cover.end, ends.get(cover.symbol, cover.end))
    if not ends:
        return now, f"no provider has current data for {', '.join(wanted)}"
    day = _last_session(min(ends.values()))
    if day is None:
        return now, f"no trading session in the data for {', '.join(wanted)}"
    note = (
        f"No provider has current data, so this answer is as of {day.isoformat()}, the last "
        f"date the bundled data covers for {', '.join(sorted(ends))}."
    )
    return session_close(day), note
