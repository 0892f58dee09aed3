"""The SQLite cache: immutable history, a TTL for live data, the filter after the cache."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from alphadesk.data import Bars, News, NewsItem, Provenance
from alphadesk.data.cache import DataCache, cache_key
from alphadesk.data.pit import point_in_time

FETCHED = datetime(2024, 6, 14, 17, 0, tzinfo=UTC)
TTL = timedelta(minutes=10)


def _news() -> News:
    provenance = Provenance(provider="yahoo", origin="observed", retrieved_at=FETCHED)
    items = [
        NewsItem(known_at=datetime(2024, 6, d, 12, tzinfo=UTC), title=f"day {d}")
        for d in (10, 12, 14)
    ]
    return News(symbol="AAPL", items=items, provenance=provenance)


def _bars() -> Bars:
    index = pd.date_range("2024-06-10 16:00", periods=4, freq="D", tz="America/New_York")
    frame = pd.DataFrame({"close": [1.0, 2.0, 3.0, 4.0], "volume": [10.0, 20, 30, 40]}, index=index)
    provenance = Provenance(provider="yahoo", origin="observed", retrieved_at=FETCHED)
    return Bars.create("AAPL", "1d", frame, provenance)


@pytest.fixture
def cache(tmp_path: Path) -> DataCache:
    return DataCache(tmp_path / "sub" / "market_cache.sqlite")


def test_history_is_immutable(cache: DataCache) -> None:
    cache.put("k", _news(), FETCHED)
    years_later = FETCHED + timedelta(days=900)
    # A question about an instant before the fetch: everything known then is in the entry.
    assert cache.get("k", FETCHED - timedelta(days=3), TTL, now=years_later) is not None
    assert cache.get("k", FETCHED, TTL, now=years_later) is not None


def test_live_data_expires(cache: DataCache) -> None:
    cache.put("k", _news(), FETCHED)
    later = FETCHED + timedelta(minutes=5)
    assert cache.get("k", later, TTL, now=later) is not None
    much_later = FETCHED + timedelta(minutes=11)
    assert cache.get("k", much_later, TTL, now=much_later) is None
    assert cache.get("missing", later, TTL, now=later) is None


def test_point_in_time_applies_after_the_cache(cache: DataCache) -> None:
    cache.put("k", _news(), FETCHED)
    as_of = datetime(2024, 6, 12, 13, tzinfo=UTC)
    cached = cache.get("k", as_of, TTL, now=FETCHED + timedelta(days=30))
    assert isinstance(cached, News) and len(cached.items) == 3  # the whole answer is stored
    assert [n.title for n in point_in_time(cached, as_of).items] == ["day 10", "day 12"]


def test_bars_round_trip_exactly(cache: DataCache) -> None:
    bars = _bars()
    cache.put("b", bars, FETCHED)
    back = cache.get("b", FETCHED, TTL, now=FETCHED)
    assert isinstance(back, Bars)
    pd.testing.assert_frame_equal(back.frame, bars.frame, check_freq=False)
    assert back.fields == bars.fields and back.provenance == bars.provenance


def test_get_or_fetch_fetches_once(cache: DataCache) -> None:
    calls: list[int] = []

    def fetch() -> News:
        calls.append(1)
        return _news()

    for _ in range(3):
        cache.get_or_fetch("k", FETCHED, TTL, fetch, now=lambda: FETCHED)
    assert len(calls) == 1
    cache.get_or_fetch(
        "k", FETCHED + timedelta(hours=1), TTL, fetch, now=lambda: FETCHED + timedelta(hours=1)
    )
    assert len(calls) == 2
    assert cache.clear() == 1


def test_an_unreadable_entry_is_refetched(cache: DataCache) -> None:
    cache.put("k", _news(), FETCHED)
    with sqlite3.connect(cache.path) as con:
        con.execute("UPDATE entries SET body = ? WHERE key = 'k'", (b"{not json",))
    assert cache.get("k", FETCHED, TTL, now=FETCHED) is None


def test_only_known_result_types_are_stored(cache: DataCache) -> None:
    with pytest.raises(TypeError):
        cache.put("k", {"a": 1}, FETCHED)
    with pytest.raises(ValueError, match="naive"):
        cache.put("k", _news(), datetime(2024, 1, 1))


def test_keys_include_what_changes_the_answer() -> None:
    assert cache_key("yahoo", "intraday_bars", "AAPL", interval="5m") != cache_key(
        "yahoo", "intraday_bars", "AAPL", interval="1m"
    )
    assert cache_key("yahoo", "news", "AAPL") != cache_key("sec", "news", "AAPL")
