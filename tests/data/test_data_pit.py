"""Point in time: nothing dated after ``as_of`` ever leaves a provider (property tests)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd
import pytest
from datahelpers import (
    NOW,
    UA,
    FakeYahoo,
    fixed_clock,
    make_fake_ticker,
    serve_edgar,
    serve_sec_documents,
    write_folder,
    yahoo_daily_frame,
    yahoo_info,
    yahoo_options,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alphadesk.data import (
    Bars,
    DataError,
    MarketData,
    News,
    NewsItem,
    NoData,
    OptionChain,
    Provenance,
    ProviderChain,
    Quote,
    point_in_time,
)
from alphadesk.data.models import Snapshot, Timeline
from alphadesk.data.options_model import ModeledOptions
from alphadesk.data.pit import LIVE_GRACE, require_aware
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.data.providers.local import LocalProvider
from alphadesk.data.providers.sec import SecProvider
from alphadesk.data.providers.yahoo import YahooProvider

ZONES = st.sampled_from([UTC, ZoneInfo("America/New_York"), ZoneInfo("Asia/Tokyo")])
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_known_at(result: Any, as_of: datetime) -> None:
    """Every date in ``result`` is at or before ``as_of``."""
    if isinstance(result, Bars):
        assert len(result) > 0
        assert result.frame.index.max() <= pd.Timestamp(as_of)
    elif isinstance(result, Timeline):
        assert all(item.known_at <= as_of for item in result.items)
    elif isinstance(result, Snapshot):
        assert result.observed_at <= as_of
        if isinstance(result, OptionChain):
            assert all(
                c.last_trade_at is None or c.last_trade_at <= as_of for c in result.contracts
            )
    else:
        raise AssertionError(f"unexpected result {type(result).__name__}")


def _methods(market: MarketData) -> dict[str, Callable[[str, datetime], Any]]:
    return {
        "daily_bars": market.daily_bars,
        "intraday_bars": lambda s, t: market.intraday_bars(s, t, interval="5m"),
        "quote": market.quote,
        "instrument": market.instrument,
        "option_chain": lambda s, t: market.option_chain(s, t, max_dte=30),
        "news": lambda s, t: market.news(s, t, days=3650),
        "fundamentals": market.fundamentals,
        "earnings": market.earnings,
        "analyst_ratings": market.analyst_ratings,
        "filings": market.filings,
        "short_interest": market.short_interest,
    }


def _check(market: MarketData, symbol: str, as_of: datetime, method: str) -> None:
    try:
        result = _methods(market)[method](symbol, as_of)
    except DataError:
        return  # no answer is an honest answer
    assert_known_at(result, as_of)


@pytest.fixture(scope="module")
def offline_market(tmp_path_factory: pytest.TempPathFactory) -> ProviderChain:
    local = LocalProvider(write_folder(tmp_path_factory.mktemp("pit") / "d"))
    bundled = BundledProvider()
    return ProviderChain([local, bundled, ModeledOptions(ProviderChain([local, bundled]))])


@PROPERTY
@given(
    symbol=st.sampled_from([*BundledProvider().universe(), "ACME", "^IDX", "NOPE"]),
    as_of=st.datetimes(
        min_value=datetime(1989, 6, 1), max_value=datetime(2026, 1, 1), timezones=ZONES
    ),
    method=st.sampled_from(["daily_bars", "quote", "instrument", "option_chain"]),
)
def test_offline_providers_never_return_the_future(
    offline_market: ProviderChain, symbol: str, as_of: datetime, method: str
) -> None:
    _check(offline_market, symbol, as_of, method)


@PROPERTY
@given(
    as_of=st.datetimes(
        min_value=datetime(2023, 12, 25), max_value=datetime(2024, 2, 20), timezones=ZONES
    ),
    method=st.sampled_from(
        ["daily_bars", "intraday_bars", "quote", "news", "fundamentals", "instrument"]
    ),
)
def test_local_files_never_return_the_future(
    offline_market: ProviderChain, as_of: datetime, method: str
) -> None:
    _check(offline_market, "ACME", as_of, method)


@pytest.fixture(scope="module")
def yahoo_market() -> Iterator[YahooProvider]:
    import yfinance

    fake = FakeYahoo()
    fake.daily["AAPL"] = yahoo_daily_frame(days=400)
    fake.news["AAPL"] = [
        {"content": {"title": f"n{i}", "pubDate": (NOW - timedelta(days=i, hours=3)).isoformat()}}
        for i in range(0, 60, 3)
    ]
    index = pd.DatetimeIndex(
        ["2024-08-01 16:00", "2024-05-02 16:00", "2024-02-01 16:00"], name="Earnings Date"
    ).tz_localize("America/New_York")
    fake.earnings["AAPL"] = pd.DataFrame(
        {"EPS Estimate": [1.3, 1.5, 2.1], "Reported EPS": [None, 1.53, 2.18]}, index=index
    )
    fake.ratings["AAPL"] = pd.DataFrame(
        {"Firm": ["A", "B", "C"], "ToGrade": ["Buy"] * 3, "Action": ["up"] * 3},
        index=pd.DatetimeIndex(["2024-06-12", "2024-04-03 13:05", "2024-01-02"]),
    )
    yahoo_info(fake)
    yahoo_options(fake)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yfinance, "Ticker", make_fake_ticker(fake))
        yield YahooProvider(clock=fixed_clock(), sleep=lambda _: None)


@PROPERTY
@given(
    as_of=st.datetimes(
        min_value=datetime(2023, 3, 1), max_value=datetime(2024, 6, 15), timezones=ZONES
    ),
    method=st.sampled_from(
        [
            "daily_bars",
            "news",
            "earnings",
            "analyst_ratings",
            "quote",
            "option_chain",
            "short_interest",
            "instrument",
        ]
    ),
)
def test_yahoo_never_returns_the_future(
    yahoo_market: YahooProvider, as_of: datetime, method: str
) -> None:
    try:
        result = _methods(yahoo_market)[method]("AAPL", as_of)
    except DataError:
        return
    if isinstance(result, Snapshot):  # a live snapshot: within the grace of a live run
        assert result.observed_at <= as_of + LIVE_GRACE
        assert as_of >= NOW - LIVE_GRACE
    else:
        assert_known_at(result, as_of)


@pytest.fixture(scope="module")
def sec_market() -> Iterator[SecProvider]:
    with serve_edgar() as edgar:
        serve_sec_documents(edgar)
        yield SecProvider(
            UA, data_url=edgar.url, www_url=edgar.url, clock=fixed_clock(), sleep=lambda _: None
        )


@PROPERTY
@given(
    as_of=st.datetimes(
        min_value=datetime(2011, 1, 1), max_value=datetime(2024, 6, 15), timezones=ZONES
    ),
    method=st.sampled_from(["filings", "fundamentals", "instrument"]),
)
@pytest.mark.slow
def test_sec_never_returns_the_future(
    sec_market: SecProvider, as_of: datetime, method: str
) -> None:
    _check(sec_market, "AAPL", as_of, method)


# -- the rule itself -------------------------------------------------------------------------

PROVENANCE = Provenance(provider="t", origin="observed", retrieved_at=NOW)


def test_naive_as_of_is_refused_everywhere() -> None:
    with pytest.raises(ValueError, match="naive"):
        require_aware(datetime(2020, 1, 1))
    with pytest.raises(TypeError, match="datetime"):
        require_aware("2020-01-01")
    with pytest.raises(ValueError, match="naive"):
        BundledProvider().daily_bars("AAPL", datetime(2012, 1, 3))


def test_timeline_filter_and_empty_answers() -> None:
    items = [NewsItem(known_at=NOW - timedelta(days=d), title=str(d)) for d in (3, 1)]
    news = News(symbol="X", items=items, provenance=PROVENANCE)
    assert [n.title for n in point_in_time(news, NOW - timedelta(days=2)).items] == ["3"]
    with pytest.raises(NoData, match="records start"):
        point_in_time(news, NOW - timedelta(days=5))
    empty = News(symbol="X", items=[], provenance=PROVENANCE)
    assert point_in_time(empty, NOW).items == []  # no news is an answer, not an error


def test_live_snapshots_get_a_grace_and_nothing_else_does() -> None:
    live = Quote(symbol="X", observed_at=NOW, provenance=PROVENANCE, price=1.0, basis="last_trade")
    assert point_in_time(live, NOW - timedelta(minutes=10)) is live
    with pytest.raises(NoData):
        point_in_time(live, NOW - LIVE_GRACE - timedelta(seconds=1))
    recorded = live.model_copy(
        update={
            "provenance": PROVENANCE.model_copy(update={"retrieved_at": NOW + timedelta(days=1)})
        }
    )  # read later from a record
    with pytest.raises(NoData):
        point_in_time(recorded, NOW - timedelta(minutes=1))


def test_unknown_result_types_have_no_rule() -> None:
    with pytest.raises(TypeError):
        point_in_time({"price": 1}, NOW)


def test_path_is_not_a_result() -> None:
    with pytest.raises(TypeError):
        point_in_time(Path("."), NOW)
