"""Trading days, session closes and option expirations from the XNYS exchange calendar.

Every daily bar is stamped with the instant it became known: the close of its session
(16:00 New York, 13:00 on early-close days). A date that is not an XNYS session (a foreign
holiday, a data glitch, a date outside the calendar) is stamped with the following
midnight, which is never too early.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel

from .pit import require_aware

if TYPE_CHECKING:
    import exchange_calendars as xcals
    import pandas as pd
    from numpy.typing import NDArray

__all__ = [
    "NEW_YORK",
    "MarketStatus",
    "bar_close_instants",
    "close_on_or_before",
    "end_of_day",
    "expiration_dates",
    "is_session",
    "local_date",
    "market_status",
    "next_session_open",
    "session_close",
    "sessions_between",
    "trading_days_between",
    "xnys",
]

NEW_YORK = "America/New_York"
_CALENDAR_START = "1970-01-02"
_CALENDAR_YEARS_AHEAD = 2
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@functools.cache
def xnys() -> xcals.ExchangeCalendar:
    """The New York Stock Exchange calendar (built once per process, about 0.1 s)."""
    import exchange_calendars
    import pandas as pd

    end = pd.Timestamp.now(tz=UTC).normalize().tz_localize(None) + pd.DateOffset(
        years=_CALENDAR_YEARS_AHEAD
    )
    return exchange_calendars.get_calendar("XNYS", start=_CALENDAR_START, end=end)


def _closes_by_date() -> pd.Series:
    return xnys().schedule["close"]


@dataclass(frozen=True, slots=True)
class _Sessions:
    """The XNYS sessions as sorted arrays: the lookups below are a binary search each,
    without pandas' per-call overhead (a modeled chain asks hundreds of them)."""

    days: NDArray[np.int64]  # proleptic ordinals of the session dates
    closes: NDArray[np.int64]  # their close instants, ns since the epoch (UTC)

    def index_of(self, day: date) -> int | None:
        i = int(np.searchsorted(self.days, day.toordinal()))
        return i if i < len(self.days) and self.days[i] == day.toordinal() else None

    def close(self, i: int) -> datetime:
        return datetime.fromtimestamp(int(self.closes[i]) // 1_000_000_000, UTC)


@functools.cache
def _sessions() -> _Sessions:
    closes = _closes_by_date()
    days = np.array([d.toordinal() for d in closes.index.date], dtype=np.int64)
    return _Sessions(days, np.asarray(closes.array.asi8, dtype=np.int64))


def _nanos(instant: datetime) -> int:
    """``instant`` in ns since the epoch (exact for whole microseconds)."""
    delta = require_aware(instant) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def bar_close_instants(dates: pd.DatetimeIndex, tz: str = NEW_YORK) -> pd.DatetimeIndex:
    """The instant each daily bar became known, in ``tz``.

    Args:
        dates: Trading dates (naive, or tz-aware at midnight in ``tz``).
        tz: The time zone the dates are local to.

    Returns:
        XNYS session closes where the date is a session and ``tz`` is New York; else the
        midnight that ends the date in ``tz`` (conservative: nothing is known early).
    """
    import pandas as pd

    naive = dates.tz_localize(None) if dates.tz is not None else dates
    naive = naive.normalize()
    fallback = (naive + pd.Timedelta(days=1)).tz_localize(tz)
    if tz != NEW_YORK:
        return pd.DatetimeIndex(fallback)
    closes = _closes_by_date().reindex(naive)
    merged = closes.where(closes.notna(), pd.Series(fallback.tz_convert(UTC), index=naive))
    return pd.DatetimeIndex(merged).tz_convert(tz)


def session_close(day: date) -> datetime:
    """The close of the XNYS session on ``day``.

    Raises:
        ValueError: ``day`` is not a trading day.
    """
    sessions = _sessions()
    i = sessions.index_of(day)
    if i is None:
        raise ValueError(f"{day} is not an XNYS trading day; pick a session date")
    return sessions.close(i)


def close_on_or_before(day: date) -> datetime:
    """The close of the last XNYS session on or before ``day``: what a date means as an
    ``as_of`` (data known at that day's close; a day without a session, the one before).

    Raises:
        ValueError: no session in the ten days up to ``day`` (outside the calendar).
    """
    try:
        earlier = sessions_between(day - timedelta(days=10), day)
    except OverflowError:
        earlier = []
    if not earlier:
        raise ValueError(
            f"no trading session on or before {day}; pick a date the exchange was open "
            f"(the calendar covers {_CALENDAR_START} to {_CALENDAR_YEARS_AHEAD} years ahead)"
        )
    return session_close(earlier[-1])


def is_session(day: date) -> bool | None:
    """Whether ``day`` is an XNYS trading day; None past the calendar's end (it covers
    1970-01-02 to two years ahead), where it cannot say."""
    sessions = _sessions()
    if day.toordinal() > sessions.days[-1]:
        return None
    return sessions.index_of(day) is not None


def sessions_between(start: date, end: date) -> list[date]:
    """XNYS trading days from ``start`` to ``end``, both included."""
    days = _sessions().days
    first = int(np.searchsorted(days, start.toordinal(), side="left"))
    last = int(np.searchsorted(days, end.toordinal(), side="right"))
    return [date.fromordinal(int(d)) for d in days[first:last]]


def trading_days_between(as_of: datetime, expiration: date) -> int:
    """Trading sessions whose close lies after ``as_of``, up to and including ``expiration``."""
    sessions = _sessions()  # sorted by date, and so by close time
    through = int(np.searchsorted(sessions.days, expiration.toordinal(), side="right"))
    closed = int(np.searchsorted(sessions.closes, _nanos(as_of), side="right"))
    return max(0, through - closed)


def _last_session_on_or_before(day: date, sessions: set[date]) -> date | None:
    for back in range(7):
        candidate = day - timedelta(days=back)
        if candidate in sessions:
            return candidate
    return None


def _third_friday(year: int, month: int) -> date:
    first = date(year, month, 1)
    offset = (4 - first.weekday()) % 7  # Friday is weekday 4
    return first + timedelta(days=offset + 14)


def expiration_dates(
    as_of: datetime, max_days: int, *, weeklies: bool = True
) -> list[tuple[date, bool]]:
    """Listed expirations after ``as_of`` within ``max_days`` calendar days.

    Monthlies expire on the third Friday, weeklies on every other Friday; when the Friday
    is a holiday the expiration moves to the session before it (Good Friday -> Thursday).

    Args:
        as_of: Now (tz-aware); an expiration whose session has closed is excluded.
        max_days: Horizon in calendar days from the New York date of ``as_of``.
        weeklies: Include weekly expirations, not only monthlies.

    Returns:
        ``(expiration, is_monthly)`` pairs in date order.
    """
    as_of = require_aware(as_of)
    today = local_date(as_of)
    last = today + timedelta(days=max_days)
    sessions = set(sessions_between(today - timedelta(days=7), last + timedelta(days=7)))
    calendar, now = _sessions(), _nanos(as_of)
    found: list[tuple[date, bool]] = []
    friday = today + timedelta(days=(4 - today.weekday()) % 7)
    while friday <= last + timedelta(days=3):
        monthly = friday == _third_friday(friday.year, friday.month)
        expiry = _last_session_on_or_before(friday, sessions)
        if (
            (weeklies or monthly)
            and expiry is not None
            and expiry <= last
            and calendar.closes[calendar.index_of(expiry)] > now
        ):
            found.append((expiry, monthly))
        friday += timedelta(days=7)
    return found


def next_session_open(day: date) -> datetime:
    """The open of the first XNYS session after ``day``: when a document dated ``day``,
    with no time of day, is surely public before anyone trades on it."""
    return _next_open(day.toordinal())


@functools.cache
def _next_open(ordinal: int) -> datetime:
    opens = xnys().schedule["open"]
    days = _sessions().days
    i = int(np.searchsorted(days, ordinal, side="right"))
    if i >= len(days):
        raise ValueError(f"{date.fromordinal(ordinal)} is past the XNYS calendar's end")
    return opens.iloc[i].to_pydatetime()


def end_of_day(day: date) -> datetime:
    """The midnight that ends ``day`` in New York: when a same-day release is surely public."""
    from zoneinfo import ZoneInfo

    return datetime.combine(day + timedelta(days=1), datetime.min.time(), ZoneInfo(NEW_YORK))


def local_date(instant: datetime) -> date:
    """The New York calendar date of ``instant``."""
    from zoneinfo import ZoneInfo

    return require_aware(instant).astimezone(ZoneInfo(NEW_YORK)).date()


class MarketStatus(BaseModel):
    """Whether the New York market is open at an instant, and its next transitions."""

    as_of: datetime
    is_open: bool
    session: date | None
    next_open: datetime
    next_close: datetime
    previous_close: datetime


def market_status(as_of: datetime) -> MarketStatus:
    """Open or closed at ``as_of`` (XNYS regular hours, from its open minute to before its
    close), with the next open and close: binary searches in the schedule, where the
    calendar's own minute lookups build an array of every trading minute since 1970
    (150 MB in each process that asks)."""
    as_of = require_aware(as_of)
    opens, closes = _hours()
    minute = _nanos(as_of) // 60_000_000_000 * 60_000_000_000
    i = int(np.searchsorted(closes, minute, side="right"))  # the first close after it
    is_open = i < len(opens) and opens[i] <= minute
    sessions = _sessions()
    return MarketStatus(
        as_of=as_of,
        is_open=is_open,
        session=date.fromordinal(int(sessions.days[i])) if is_open else None,
        next_open=_instant(opens[int(np.searchsorted(opens, minute, side="right"))]),
        next_close=_instant(closes[i]),
        previous_close=_instant(closes[int(np.searchsorted(closes, minute)) - 1]),
    )


@functools.cache
def _hours() -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Each session's open and close, ns since the epoch (UTC), in session order."""
    schedule = xnys().schedule
    return (
        np.asarray(schedule["open"].array.asi8, dtype=np.int64),
        np.asarray(schedule["close"].array.asi8, dtype=np.int64),
    )


def _instant(nanos: np.int64) -> datetime:
    return datetime.fromtimestamp(int(nanos) // 1_000_000_000, UTC)
