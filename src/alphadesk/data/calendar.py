"""Trading days, session closes and option expirations from the XNYS exchange calendar.

Every daily bar is stamped with the instant it became known: the close of its session
(16:00 New York, 13:00 on early-close days). A date that is not an XNYS session (a foreign
holiday, a data glitch, a date outside the calendar) is stamped with the following
midnight, which is never too early.
"""

from __future__ import annotations

import functools
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

from pydantic import BaseModel

from .pit import require_aware

if TYPE_CHECKING:
    import exchange_calendars as xcals
    import pandas as pd

__all__ = [
    "NEW_YORK",
    "MarketStatus",
    "bar_close_instants",
    "end_of_day",
    "expiration_dates",
    "local_date",
    "market_status",
    "session_close",
    "sessions_between",
    "trading_days_between",
    "xnys",
]

NEW_YORK = "America/New_York"
_CALENDAR_START = "1970-01-02"
_CALENDAR_YEARS_AHEAD = 2


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
    import pandas as pd

    closes = _closes_by_date()
    key = pd.Timestamp(day)
    if key not in closes.index:
        raise ValueError(f"{day} is not an XNYS trading day; pick a session date")
    return closes.loc[key].to_pydatetime()


def sessions_between(start: date, end: date) -> list[date]:
    """XNYS trading days from ``start`` to ``end``, both included."""
    import pandas as pd

    index = _closes_by_date().index
    window = index[(index >= pd.Timestamp(start)) & (index <= pd.Timestamp(end))]
    return [ts.date() for ts in window]


def trading_days_between(as_of: datetime, expiration: date) -> int:
    """Trading sessions whose close lies after ``as_of``, up to and including ``expiration``."""
    import pandas as pd

    as_of = require_aware(as_of)
    closes = _closes_by_date()  # sorted by date, and so by close time
    through = int(closes.index.searchsorted(pd.Timestamp(expiration), side="right"))
    closed = int(closes.searchsorted(pd.Timestamp(as_of), side="right"))
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
    import pandas as pd

    as_of = require_aware(as_of)
    today = local_date(as_of)
    last = today + timedelta(days=max_days)
    sessions = set(sessions_between(today - timedelta(days=7), last + timedelta(days=7)))
    closes = _closes_by_date()
    found: list[tuple[date, bool]] = []
    friday = today + timedelta(days=(4 - today.weekday()) % 7)
    while friday <= last + timedelta(days=3):
        monthly = friday == _third_friday(friday.year, friday.month)
        expiry = _last_session_on_or_before(friday, sessions)
        if (
            (weeklies or monthly)
            and expiry is not None
            and expiry <= last
            and closes.loc[pd.Timestamp(expiry)] > as_of
        ):
            found.append((expiry, monthly))
        friday += timedelta(days=7)
    return found


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
    """Open or closed at ``as_of`` (XNYS regular hours), with the next open and close."""
    import pandas as pd

    as_of = require_aware(as_of)
    cal = xnys()
    minute = pd.Timestamp(as_of).tz_convert(UTC).floor("min")
    is_open = bool(cal.is_open_on_minute(minute))
    session = cal.minute_to_session(minute, direction="none").date() if is_open else None
    return MarketStatus(
        as_of=as_of,
        is_open=is_open,
        session=session,
        next_open=cal.next_open(minute).to_pydatetime(),
        next_close=cal.next_close(minute).to_pydatetime(),
        previous_close=cal.previous_close(minute).to_pydatetime(),
    )
