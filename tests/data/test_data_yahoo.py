"""The yahoo provider at its boundary: yfinance patched at its API, no network."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yfinance
from datahelpers import (
    NOW,
    FakeYahoo,
    fixed_clock,
    yahoo_daily_frame,
    yahoo_info,
    yahoo_options,
)

from alphadesk.data import (
    MalformedResponse,
    NoData,
    ProviderUnavailable,
    RateLimited,
)
from alphadesk.data.cache import DataCache
from alphadesk.data.chain import ProviderChain
from alphadesk.data.options_model import ModeledOptions
from alphadesk.data.providers._yahoo_parse import discount_to_continuous
from alphadesk.data.providers.yahoo import YahooProvider


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def yahoo(fake_yahoo: FakeYahoo, sleeps: list[float]) -> YahooProvider:
    fake_yahoo.daily["AAPL"] = yahoo_daily_frame()
    return YahooProvider(clock=fixed_clock(), sleep=sleeps.append, backoff_s=0.5)


def test_daily_bars_are_stamped_at_the_close_and_the_open_session_is_dropped(
    yahoo: YahooProvider,
) -> None:
    bars = yahoo.daily_bars("aapl", NOW)
    last = bars.frame.index[-1]
    assert last == pd.Timestamp("2024-06-13 16:00", tz="America/New_York")  # not the 14th
    assert bars.fields == {"open", "high", "low", "close", "adj_close", "volume"}
    assert bars.frame["adj_close"].iloc[-1] == bars.frame["close"].iloc[-1] - 0.25
    assert bars.provenance.provider == "yahoo" and bars.provenance.origin == "observed"
    earlier = yahoo.daily_bars("AAPL", datetime(2024, 6, 5, 19, tzinfo=UTC))
    assert earlier.frame.index[-1].date() == date(2024, 6, 4)


def test_intraday_bars_are_indexed_by_their_end(
    yahoo: YahooProvider, fake_yahoo: FakeYahoo
) -> None:
    starts = pd.date_range(
        "2024-06-14 09:30", "2024-06-14 13:25", freq="5min", tz="America/New_York", name="Datetime"
    )
    prices = 200 + np.arange(len(starts), dtype=float)
    fake_yahoo.intraday["AAPL"] = pd.DataFrame(
        {
            "Open": prices,
            "High": prices + 1,
            "Low": prices - 1,
            "Close": prices,
            "Adj Close": prices,
            "Volume": 1000,
        },
        index=starts,
    )
    bars = yahoo.intraday_bars("AAPL", NOW, interval="5m")
    assert bars.frame.index[0] == pd.Timestamp("2024-06-14 09:35", tz="America/New_York")
    assert bars.frame.index[-1] == pd.Timestamp("2024-06-14 13:30", tz="America/New_York")
    at_ten = yahoo.intraday_bars("AAPL", datetime(2024, 6, 14, 14, 2, tzinfo=UTC), interval="5m")
    assert at_ten.frame.index[-1] == pd.Timestamp("2024-06-14 10:00", tz="America/New_York")
    with pytest.raises(ValueError, match="intraday interval"):
        yahoo.intraday_bars("AAPL", NOW, interval="1d")


def test_live_snapshots_are_served_live_only(yahoo: YahooProvider, fake_yahoo: FakeYahoo) -> None:
    yahoo_info(fake_yahoo)
    quote = yahoo.quote("AAPL", NOW - timedelta(minutes=5))  # a run that started 5 min ago
    assert (quote.price, quote.bid, quote.ask, quote.basis) == (
        212.49,
        212.45,
        212.52,
        "last_trade",
    )
    assert quote.observed_at == NOW
    short = yahoo.short_interest("AAPL", NOW)
    assert short.shares_short == 95_000_000 and short.settlement_date == date(2024, 5, 29)
    identity = yahoo.instrument("AAPL", NOW)
    assert (identity.name, identity.asset_type, identity.sector) == (
        "Apple Inc.",
        "equity",
        "Technology",
    )
    calls_before = len(fake_yahoo.calls)
    for method in (yahoo.quote, yahoo.short_interest, yahoo.instrument):
        with pytest.raises(NoData, match="only the current"):
            method("AAPL", NOW - timedelta(days=1))
    assert len(fake_yahoo.calls) == calls_before  # refused without asking Yahoo


def test_observed_chain_has_computed_greeks(yahoo: YahooProvider, fake_yahoo: FakeYahoo) -> None:
    yahoo_info(fake_yahoo)
    yahoo_options(fake_yahoo)
    chain = yahoo.option_chain("AAPL", NOW, max_dte=60)
    assert chain.provenance.origin == "observed"
    assert chain.expirations == [date(2024, 6, 21), date(2024, 7, 19)]  # Dec is past 60 DTE
    assert ("AAPL", "option_chain:2024-12-20") not in fake_yahoo.calls
    assert chain.underlying_price == 212.5
    assert chain.rate == pytest.approx(discount_to_continuous(5.21))
    assert 0.05 < chain.rate < 0.056
    put = next(c for c in chain.select("put", date(2024, 6, 21)) if c.strike == 200.0)
    assert put.iv == 0.25 and put.delta is not None and -0.5 < put.delta < 0
    # Sessions left: 14 (still open), 17, 18, 20, 21; 19 June (Juneteenth) is a holiday.
    assert put.dte == 7 and put.trading_days == 5 and put.contract_symbol
    bad_iv = next(c for c in chain.select("put", date(2024, 6, 21)) if c.strike == 220.0)
    assert bad_iv.iv is None and bad_iv.delta is None  # Yahoo's 1e-5 placeholder is no IV
    assert next(c for c in chain.contracts if c.strike == 190.0).volume is None
    assert any("Greeks computed" in n for n in chain.provenance.notes)


def test_historical_chain_falls_back_to_the_model(
    yahoo: YahooProvider, fake_yahoo: FakeYahoo
) -> None:
    from alphadesk.data.providers.bundled import BundledProvider

    bundled = BundledProvider()
    chain = ProviderChain([yahoo, bundled, ModeledOptions(ProviderChain([bundled]))])
    result = chain.option_chain("AAPL", datetime(2012, 6, 1, 21, tzinfo=UTC))
    assert result.provenance.origin == "modeled"
    assert [a.provider for a in result.provenance.attempts] == ["yahoo"]
    assert result.provenance.attempts[0].error == "NoData"
    assert fake_yahoo.calls == []


def test_news_in_both_shapes_and_point_in_time(yahoo: YahooProvider, fake_yahoo: FakeYahoo) -> None:
    fake_yahoo.news["AAPL"] = [
        {
            "id": "a",
            "content": {
                "title": "Apple unveils new chips",
                "pubDate": "2024-06-14T15:10:00Z",
                "provider": {"displayName": "Reuters"},
                "canonicalUrl": {"url": "https://example.com/a"},
                "summary": "Chips.",
            },
        },
        {
            "uuid": "b",
            "title": "Apple shares rise",
            "publisher": "Bloomberg",
            "link": "https://example.com/b",
            "providerPublishTime": 1_718_200_000,
            "relatedTickers": ["AAPL"],
        },  # 2024-06-12 13:46 UTC
        {"id": "c", "content": {"title": "no date"}},
        {"id": "d", "content": {"title": "Later today", "pubDate": "2024-06-14T19:00:00Z"}},
    ]
    news = yahoo.news("AAPL", NOW)
    assert [n.title for n in news.items] == ["Apple shares rise", "Apple unveils new chips"]
    assert news.items[1].publisher == "Reuters" and news.items[0].tickers == ["AAPL"]
    assert [n.title for n in yahoo.news("AAPL", datetime(2024, 6, 13, tzinfo=UTC)).items] == [
        "Apple shares rise"
    ]
    with pytest.raises(NoData, match="records start"):
        yahoo.news("AAPL", datetime(2024, 6, 1, tzinfo=UTC))


def test_earnings_hide_the_future_and_unreported_results(
    yahoo: YahooProvider, fake_yahoo: FakeYahoo
) -> None:
    index = pd.DatetimeIndex(
        ["2024-08-01 16:00", "2024-05-02 16:00", "2024-02-01 16:00"], name="Earnings Date"
    ).tz_localize("America/New_York")
    fake_yahoo.earnings["AAPL"] = pd.DataFrame(
        {
            "EPS Estimate": [1.35, 1.50, 2.10],
            "Reported EPS": [np.nan, 1.53, 2.18],
            "Surprise(%)": [np.nan, 2.0, 3.8],
        },
        index=index,
    )
    live = yahoo.earnings("AAPL", NOW)
    upcoming = live.upcoming(NOW)
    assert len(upcoming) == 1 and upcoming[0].eps_actual is None
    assert upcoming[0].known_at == NOW
    back_then = yahoo.earnings("AAPL", datetime(2024, 5, 2, 21, tzinfo=UTC))
    # 2 May results were out at 17:00 New York, but Yahoo's times are approximate:
    # they count from the end of that day. The August date was not announced yet.
    assert [e.time.date() for e in back_then.items] == [date(2024, 2, 1)]
    assert back_then.items[0].eps_actual == 2.18


def test_ratings_by_publication_day(yahoo: YahooProvider, fake_yahoo: FakeYahoo) -> None:
    fake_yahoo.ratings["AAPL"] = pd.DataFrame(
        {
            "Firm": ["Morgan Stanley", "Citi"],
            "ToGrade": ["Overweight", "Buy"],
            "FromGrade": ["Equal-Weight", "Buy"],
            "Action": ["up", "main"],
            "currentPriceTarget": [216.0, np.nan],
        },
        index=pd.DatetimeIndex(["2024-06-12", "2024-06-03 13:05"], name="GradeDate"),
    )
    ratings = yahoo.analyst_ratings("AAPL", NOW)
    assert [r.firm for r in ratings.items] == ["Citi", "Morgan Stanley"]
    assert ratings.items[1].price_target == 216.0
    # A date-only stamp counts from the end of that day (New York).
    on_the_day = yahoo.analyst_ratings("AAPL", datetime(2024, 6, 12, 20, tzinfo=UTC))
    assert [r.firm for r in on_the_day.items] == ["Citi"]


def test_rate_limits_back_off_then_succeed_or_raise(
    yahoo: YahooProvider, fake_yahoo: FakeYahoo, sleeps: list[float]
) -> None:
    fake_yahoo.failures = [
        yfinance.exceptions.YFRateLimitError(),
        yfinance.exceptions.YFRateLimitError(),
    ]
    assert len(yahoo.daily_bars("AAPL", NOW)) > 0
    assert sleeps == [0.5, 1.0]
    fake_yahoo.failures = [yfinance.exceptions.YFRateLimitError() for _ in range(4)]
    with pytest.raises(RateLimited, match="wait"):
        yahoo.daily_bars("AAPL", NOW)


def test_offline_is_provider_unavailable(yahoo: YahooProvider, fake_yahoo: FakeYahoo) -> None:
    fake_yahoo.failures = [ConnectionError("Failed to resolve 'query2.finance.yahoo.com'")]
    with pytest.raises(ProviderUnavailable, match="network"):
        yahoo.daily_bars("AAPL", NOW)


def test_unknown_and_malformed(yahoo: YahooProvider, fake_yahoo: FakeYahoo) -> None:
    with pytest.raises(NoData, match="ZZZZ"):
        yahoo.daily_bars("ZZZZ", NOW)
    fake_yahoo.daily["BAD"] = yahoo_daily_frame().drop(columns=["Close", "Adj Close"])
    with pytest.raises(MalformedResponse, match="Close"):
        yahoo.daily_bars("BAD", NOW)


def test_answers_are_cached_and_filtered_after_the_cache(
    fake_yahoo: FakeYahoo, tmp_path: Path
) -> None:
    fake_yahoo.daily["AAPL"] = yahoo_daily_frame()
    cache = DataCache(tmp_path / "cache.sqlite")
    yahoo = YahooProvider(cache, clock=fixed_clock())
    assert yahoo.daily_bars("AAPL", NOW).frame.index[-1].date() == date(2024, 6, 13)
    earlier = yahoo.daily_bars("AAPL", datetime(2024, 6, 5, 19, tzinfo=UTC))
    assert earlier.frame.index[-1].date() == date(2024, 6, 4)
    assert fake_yahoo.calls.count(("AAPL", "history:1d")) == 1
    fresh = YahooProvider(cache, clock=fixed_clock())  # another process, same cache file
    assert len(fresh.daily_bars("AAPL", datetime(2024, 6, 10, 21, tzinfo=UTC))) > 0
    assert fake_yahoo.calls.count(("AAPL", "history:1d")) == 1


@pytest.mark.slow
def test_importing_alphadesk_does_not_import_yfinance() -> None:
    code = (
        "import sys, alphadesk.data, alphadesk.data.providers.yahoo, alphadesk.cli.app; "
        "print('yfinance' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
