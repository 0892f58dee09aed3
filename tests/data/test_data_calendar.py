"""Trading days, bar close instants, expirations and market status (XNYS)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pandas as pd
import pytest

from alphadesk.data import market_status
from alphadesk.data.calendar import (
    bar_close_instants,
    end_of_day,
    expiration_dates,
    sessions_between,
    trading_days_between,
)


def test_bar_close_instants_follow_the_exchange() -> None:
    dates = pd.DatetimeIndex(["2019-11-29", "2019-12-02", "2019-12-25", "2019-12-28"])
    closes = bar_close_instants(dates)
    assert closes[0] == pd.Timestamp("2019-11-29 13:00", tz="America/New_York")  # early close
    assert closes[1] == pd.Timestamp("2019-12-02 16:00", tz="America/New_York")
    # Not sessions (Christmas, a Saturday): known at the end of the day, never earlier.
    assert closes[2] == pd.Timestamp("2019-12-26 00:00", tz="America/New_York")
    assert closes[3] == pd.Timestamp("2019-12-29 00:00", tz="America/New_York")
    utc = bar_close_instants(pd.DatetimeIndex(["2020-01-01"]), tz="UTC")
    assert utc[0] == pd.Timestamp("2020-01-02", tz="UTC")


def test_sessions_and_trading_days() -> None:
    assert sessions_between(date(2024, 6, 17), date(2024, 6, 21)) == [
        date(2024, 6, 17),
        date(2024, 6, 18),
        date(2024, 6, 20),
        date(2024, 6, 21),
    ]
    monday_noon = datetime(2024, 6, 17, 16, tzinfo=UTC)
    assert trading_days_between(monday_noon, date(2024, 6, 21)) == 4
    after_close = datetime(2024, 6, 17, 21, tzinfo=UTC)
    assert trading_days_between(after_close, date(2024, 6, 21)) == 3


def test_expirations_are_sessions_with_holiday_shifts() -> None:
    as_of = datetime(2014, 4, 1, 14, tzinfo=UTC)
    found = expiration_dates(as_of, 40)
    days = [d for d, _ in found]
    assert date(2014, 4, 17) in days  # Good Friday 18 April: the monthly moves to Thursday
    assert dict(found)[date(2014, 4, 17)] is True
    assert dict(found)[date(2014, 4, 11)] is False
    sessions = set(sessions_between(date(2014, 4, 1), date(2014, 5, 31)))
    assert all(d in sessions for d in days)
    monthlies = [d for d, m in expiration_dates(as_of, 40, weeklies=False) if m]
    assert monthlies == [date(2014, 4, 17)]


def test_an_expiration_is_gone_once_its_session_closed() -> None:
    friday_close = datetime(2024, 6, 14, 20, 0, 1, tzinfo=UTC)
    assert date(2024, 6, 14) not in [d for d, _ in expiration_dates(friday_close, 10)]
    friday_noon = datetime(2024, 6, 14, 16, tzinfo=UTC)
    assert date(2024, 6, 14) in [d for d, _ in expiration_dates(friday_noon, 10)]


def test_market_status() -> None:
    open_ = market_status(datetime(2024, 6, 14, 17, 30, tzinfo=UTC))
    assert open_.is_open and open_.session == date(2024, 6, 14)
    assert open_.next_close == datetime(2024, 6, 14, 20, 0, tzinfo=UTC)
    weekend = market_status(datetime(2024, 6, 15, 12, tzinfo=UTC))
    assert not weekend.is_open and weekend.session is None
    assert weekend.next_open == datetime(2024, 6, 17, 13, 30, tzinfo=UTC)


def test_end_of_day_is_new_york_midnight() -> None:
    assert end_of_day(date(2024, 1, 5)) == datetime(2024, 1, 6, 5, 0, tzinfo=UTC)


def _library_status(as_of: datetime) -> tuple[bool, date | None, datetime, datetime, datetime]:
    """The same answer from exchange_calendars' own minute lookups (the reference)."""
    import pandas as pd

    from alphadesk.data.calendar import xnys

    cal, minute = xnys(), pd.Timestamp(as_of).tz_convert(UTC).floor("min")
    is_open = bool(cal.is_open_on_minute(minute))
    session = cal.minute_to_session(minute, direction="none").date() if is_open else None
    return (is_open, session, cal.next_open(minute).to_pydatetime(),
            cal.next_close(minute).to_pydatetime(),
            cal.previous_close(minute).to_pydatetime())  # fmt: skip


@pytest.mark.parametrize(
    "as_of",
    [
        datetime(2024, 6, 14, 13, 30, tzinfo=UTC),  # the open minute
        datetime(2024, 6, 14, 13, 29, 59, tzinfo=UTC),  # just before it
        datetime(2024, 6, 14, 19, 59, 30, tzinfo=UTC),  # the last minute
        datetime(2024, 6, 14, 20, 0, tzinfo=UTC),  # the close: closed
        datetime(2024, 7, 4, 15, 0, tzinfo=UTC),  # a holiday
        datetime(2024, 11, 29, 17, 59, tzinfo=UTC),  # an early close's last minute
        datetime(2024, 11, 29, 18, 0, tzinfo=UTC),  # and its close
        datetime(2024, 12, 31, 23, 0, tzinfo=UTC),  # a year's end
        datetime(1999, 3, 8, 15, 0, tzinfo=UTC),
        datetime(2020, 3, 9, 14, 0, tzinfo=UTC),
    ],
)
def test_market_status_agrees_with_the_calendars_minutes(as_of: datetime) -> None:
    status = market_status(as_of)
    found = (status.is_open, status.session, status.next_open, status.next_close,
             status.previous_close)  # fmt: skip
    assert found == _library_status(as_of)
