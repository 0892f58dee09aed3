"""The disguised market: the bundled data (and a local folder's news) under other names,
price levels and years, with every ratio and return exactly as it was."""

from __future__ import annotations

import csv
import json
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from alphadesk.data import NoData, ProviderChain
from alphadesk.data.calendar import session_close
from alphadesk.data.disguise import Disguise
from alphadesk.data.disguised import DisguisedMarket, disguise_of, disguised_provider
from alphadesk.data.fundamentals import statements
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.data.providers.local import LocalProvider

NY = ZoneInfo("America/New_York")
AS_OF = session_close(date(2012, 5, 25))


@pytest.fixture(scope="module")
def real() -> BundledProvider:
    return BundledProvider()


@pytest.fixture(scope="module")
def disguise(real: BundledProvider) -> Disguise:
    return disguise_of(real, ["AAPL", "IBM"], seed=3)


@pytest.fixture(scope="module")
def seen(real: BundledProvider, disguise: Disguise) -> ProviderChain:
    return disguised_provider(real, disguise)


def test_prices_are_rescaled_so_levels_differ_and_returns_are_identical(
    real: BundledProvider, disguise: Disguise, seen: ProviderChain
) -> None:
    bars = real.daily_bars("AAPL", AS_OF, start=date(2012, 1, 1))
    fake = seen.daily_bars(disguise.symbol("AAPL"), disguise.instant(AS_OF), start=date(1984, 1, 1))
    factor = disguise.factor("AAPL")
    assert not 1 / 1.5 < factor < 1.5
    assert fake.symbol == disguise.symbol("AAPL") != "AAPL"
    assert len(fake) == len(bars)
    for field in ("open", "high", "low", "close", "adj_close"):
        ours, theirs = bars.frame[field].to_numpy(), fake.frame[field].to_numpy()
        assert not np.allclose(ours, theirs)  # the levels moved
        np.testing.assert_allclose(theirs / ours, factor, rtol=1e-12)
        np.testing.assert_allclose(
            np.diff(theirs) / theirs[:-1], np.diff(ours) / ours[:-1], rtol=1e-9, atol=1e-15
        )
    np.testing.assert_array_equal(fake.frame["volume"], bars.frame["volume"])


def test_dates_move_28_years_keeping_month_day_weekday_and_the_close_of_day(
    real: BundledProvider, disguise: Disguise, seen: ProviderChain
) -> None:
    bars = real.daily_bars("IBM", AS_OF, start=date(2011, 1, 1))
    fake = seen.daily_bars(disguise.symbol("IBM"), disguise.instant(AS_OF), start=date(1983, 1, 1))
    for ours, theirs in zip(bars.frame.index, fake.frame.index, strict=True):
        a, b = ours.tz_convert(NY), theirs.tz_convert(NY)
        assert b.year == a.year - 28
        assert (b.month, b.day, b.weekday()) == (a.month, a.day, a.weekday())
        assert (b.hour, b.minute) == (a.hour, a.minute)  # 16:00 stays 16:00 (and 13:00)
    # The whole disguise is a bijection.
    assert disguise.real_instant(disguise.instant(AS_OF)) == AS_OF
    assert disguise.real_symbol(disguise.symbol("IBM")) == "IBM"
    leap = date(2012, 2, 29)
    assert disguise.day(leap) == date(1984, 2, 29) and disguise.real_day(date(1984, 2, 29)) == leap


def test_names_are_stable_random_and_never_a_real_ticker(real: BundledProvider) -> None:
    first = disguise_of(real, ["AAPL", "IBM"], seed=3)
    again = disguise_of(real, ["AAPL", "IBM"], seed=3)
    other = disguise_of(real, ["AAPL", "IBM"], seed=4)
    assert first.names == again.names and first.factors == again.factors
    assert first.names["AAPL"] != other.names["AAPL"]
    bundled = Path(__file__).parents[2] / "src/alphadesk/data/bundled"
    with (bundled / "membership.csv").open() as handle:
        known = {row["symbol"] for row in csv.DictReader(handle)} | set(real.universe())
    assert len(known) > 500
    fakes = [f for s, f in first.names.items() if not s.startswith("^")]
    assert len(set(fakes)) == len(fakes)
    assert not set(fakes) & known
    # Market indices keep their names (a desk reads them by name); the VIX its level.
    assert first.names["^GSPC"] == "^GSPC" and first.factors["^VIX"] == 1.0
    assert first.factors["^GSPC"] != 1.0


def test_an_unknown_disguised_symbol_is_no_data(seen: ProviderChain) -> None:
    with pytest.raises(NoData):
        seen.daily_bars("AAPL", AS_OF)  # the real name means nothing in the disguise


def test_fundamentals_scale_dollars_not_shares_so_every_multiple_is_the_same(
    real: BundledProvider, disguise: Disguise, seen: ProviderChain
) -> None:
    facts = real.fundamentals("AAPL", AS_OF)
    fake = seen.fundamentals(disguise.symbol("AAPL"), disguise.instant(AS_OF))
    factor = disguise.factor("AAPL")
    assert len(fake) == len(facts)
    for ours, theirs in zip(facts.items, fake.items, strict=True):
        scale = factor if "USD" in ours.unit else 1.0
        assert theirs.value == pytest.approx(ours.value * scale, rel=1e-12)
        assert theirs.end == disguise.day(ours.end) and theirs.filed == disguise.day(ours.filed)
        assert theirs.known_at == disguise.instant(ours.known_at)
        if ours.fiscal_year is not None:
            assert theirs.fiscal_year == ours.fiscal_year - 28
        assert theirs.accession_number != ours.accession_number
    price = float(real.daily_bars("AAPL", AS_OF).prices().iloc[-1])
    a = statements(facts, AS_OF, (price, AS_OF.date(), "close"))
    b = statements(
        fake, disguise.instant(AS_OF), (price * factor, disguise.day(AS_OF.date()), "close")
    )
    assert a.valuation is not None and b.valuation is not None
    for ratio in ("pe_ratio", "ps_ratio", "pb_ratio", "ev_to_ebitda", "fcf_yield_pct"):
        ours, theirs = getattr(a.valuation, ratio), getattr(b.valuation, ratio)
        assert theirs == pytest.approx(ours, rel=1e-9), ratio
    assert b.valuation.market_cap == pytest.approx(a.valuation.market_cap * factor)
    assert b.net_margin_pct == pytest.approx(a.net_margin_pct)
    assert b.revenue_growth_pct == pytest.approx(a.revenue_growth_pct)


def test_news_is_rewritten_with_the_same_disguise(tmp_path: Path) -> None:
    (tmp_path / "news").mkdir()
    story = {
        "published_at": "2012-05-24T14:00:00-04:00",
        "title": "Apple Inc. (AAPL) beats; IBM lags",
        "summary": "Apple paid $2.65 a share on 2012-05-17 and said 2013 looks better. "
        "It trades at $2012.50.",
        "publisher": "Wire",
        "url": "https://example.com/apple-2012",
        "tickers": ["AAPL", "IBM", "ZZZZ"],
    }
    (tmp_path / "news" / "AAPL.jsonl").write_text(json.dumps(story) + "\n")
    real = ProviderChain([LocalProvider(tmp_path), BundledProvider()])
    disguise = disguise_of(real, ["AAPL", "IBM"], seed=3)
    seen = DisguisedMarket(real, disguise)
    (item,) = seen.news(disguise.symbol("AAPL"), disguise.instant(AS_OF), days=7).items
    company = disguise.company("AAPL")
    short = company.removesuffix(" Inc.")
    assert (
        item.title == f"{company} ({disguise.symbol('AAPL')}) beats; {disguise.symbol('IBM')} lags"
    )
    paid = f"{2.65 * disguise.factor('AAPL'):,.2f}"
    price = f"{2012.50 * disguise.factor('AAPL'):,.2f}"  # an amount, not a year
    assert item.summary == (
        f"{short} paid ${paid} a share on 1984-05-17 and said 1985 looks better. "
        f"It trades at ${price}."
    )
    assert item.url is None
    assert item.tickers == [disguise.symbol("AAPL"), disguise.symbol("IBM")]
    assert item.known_at == datetime(1984, 5, 24, 14, tzinfo=NY)


def test_errors_and_notes_speak_the_disguise(
    real: BundledProvider, disguise: Disguise, seen: ProviderChain
) -> None:
    with pytest.raises(NoData) as caught:
        seen.earnings(disguise.symbol("IBM"), disguise.instant(AS_OF))  # none bundled
    message = str(caught.value)
    assert "IBM" not in message and "AAPL" not in message
    assert disguise.symbol("IBM") in message
    bars = seen.daily_bars(disguise.symbol("AAPL"), disguise.instant(AS_OF))
    said = " ".join([bars.basis, bars.provenance.source, *bars.provenance.notes])
    assert "AAPL" not in said and "Apple" not in said
    identity = seen.instrument(disguise.symbol("AAPL"), disguise.instant(AS_OF))
    assert identity.name == disguise.company("AAPL") and "Apple" not in identity.name


def test_option_chains_are_modeled_on_the_disguised_bars(
    disguise: Disguise, seen: ProviderChain
) -> None:
    at = disguise.instant(AS_OF)
    chain = seen.option_chain(disguise.symbol("IBM"), at, min_dte=20, max_dte=40)
    spot = float(seen.daily_bars(disguise.symbol("IBM"), at).prices().iloc[-1])
    assert chain.provenance.origin == "modeled"
    assert chain.underlying_price == pytest.approx(spot)
    assert all(e.year == 1984 for e in chain.expirations)
    strikes = [c.strike for c in chain.contracts]
    assert min(strikes) < spot < max(strikes)
    # Monthly expirations are still third Fridays.
    assert all(e.weekday() in (3, 4) for e in chain.expirations)
    assert disguise.real_day(chain.expirations[0]) > AS_OF.date()


def test_filings_earnings_and_quotes_name_no_filer_and_keep_their_times(
    real: BundledProvider, disguise: Disguise, seen: ProviderChain
) -> None:
    fake, at = disguise.symbol("AAPL"), disguise.instant(AS_OF)
    filings = real.filings("AAPL", AS_OF)
    hidden = seen.filings(fake, at)
    assert len(hidden) == len(filings) > 0
    for ours, theirs in zip(filings.items, hidden.items, strict=True):
        assert theirs.known_at == disguise.instant(ours.known_at)
        assert theirs.known_at.astimezone(NY).time() == ours.known_at.astimezone(NY).time()
        assert theirs.filing_date == disguise.day(ours.filing_date)
        assert (theirs.form, theirs.items) == (ours.form, ours.items)
        # An accession number starts with the filer's CIK and the year; the address too.
        assert theirs.accession_number != ours.accession_number
        assert theirs.url is None and theirs.primary_document is None
    assert len({f.accession_number for f in hidden.items}) == len(hidden)
    earnings = real.earnings("AAPL", AS_OF)
    moved = seen.earnings(fake, at)
    assert [e.time for e in moved.items] == [disguise.instant(e.time) for e in earnings.items]
    quote = real.quote("AAPL", AS_OF)
    disguised = seen.quote(fake, at)
    assert disguised.price == pytest.approx(quote.price * disguise.factor("AAPL"))
    assert disguised.volume == quote.volume
    assert disguised.observed_at == disguise.instant(quote.observed_at)


def test_dividends_are_disguised_like_the_prices() -> None:
    from alphadesk.data.calendar import end_of_day

    real = BundledProvider()
    disguise = disguise_of(real, ["JPM"], seed=3)
    as_of = end_of_day(date(2025, 5, 19))
    seen = disguised_provider(real, disguise).dividends(
        disguise.names["JPM"], disguise.instant(as_of)
    )
    truth = real.dividends("JPM", as_of)
    factor = disguise.factor("JPM")
    assert [(d.ex_date, d.amount, d.basis_amount) for d in seen.items] == [
        (
            disguise.day(d.ex_date),
            pytest.approx(d.amount * factor),
            pytest.approx(d.basis_amount * factor),
        )
        for d in truth.items
    ]
    assert seen.symbol == disguise.names["JPM"] != "JPM"
