"""The bundled 2025 data of the StockBench snapshot: bars, news, dividends and seams."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alphadesk.data import ProviderChain
from alphadesk.data.actions import ActionTable
from alphadesk.data.calendar import end_of_day
from alphadesk.data.errors import NoData, SkippedFile
from alphadesk.data.providers.bundled import BUNDLED_DIR, BundledProvider
from alphadesk.data.providers.local import LocalProvider

NY = ZoneInfo("America/New_York")

MANIFEST = json.loads((BUNDLED_DIR / "manifest.json").read_text())
NEWS = pd.read_parquet(BUNDLED_DIR / "news.parquet")
DOW20 = ("GS", "MSFT", "HD", "V", "SHW", "CAT", "MCD", "UNH", "AXP", "AMGN",
         "TRV", "CRM", "JPM", "IBM", "HON", "BA", "AMZN", "AAPL", "PG", "JNJ")  # fmt: skip

# (open, close, vwap, volume) as in the snapshot's storage/parquet/<SYM>/day/<DATE>.parquet
# at commit f5a11b3e7e89 of github.com/ChenYXxxx/stockbench.
SOURCE = {
    ("AAPL", "2025-03-03"): (241.79, 238.03, 239.9029, 47183985.0),
    ("AAPL", "2025-05-15"): (210.95, 211.45, 211.308, 45029473.0),
    ("AAPL", "2025-06-30"): (202.01, 205.17, 203.3565, 91912816.0),
    ("JPM", "2025-03-03"): (264.0, 260.62, 262.1876, 9058307.0),
    ("JPM", "2025-05-15"): (266.97, 267.49, 266.9842, 9214641.0),
    ("JPM", "2025-06-30"): (290.4, 289.91, 290.3436, 12689156.0),
    ("GS", "2025-03-03"): (622.4, 605.26, 612.116, 3152334.0),
    ("GS", "2025-05-15"): (609.73, 615.9, 615.6683, 2428097.0),
    ("GS", "2025-06-30"): (714.265, 707.75, 707.2893, 3976416.0),
    ("MSFT", "2025-03-03"): (398.82, 388.49, 391.4831, 23007726.0),
    ("MSFT", "2025-05-15"): (450.765, 453.13, 453.4481, 21992323.0),
    ("MSFT", "2025-06-30"): (497.04, 497.41, 497.6606, 28368991.0),
}


@pytest.fixture(scope="module")
def bundled() -> BundledProvider:
    return BundledProvider()


@pytest.mark.parametrize(("symbol", "day"), sorted(SOURCE))
def test_2025_bars_are_the_source_values_exactly(
    bundled: BundledProvider, symbol: str, day: str
) -> None:
    bars = bundled.daily_bars(symbol, end_of_day(date.fromisoformat(day)))
    last = bars.frame.iloc[-1]
    assert bars.frame.index[-1].date() == date.fromisoformat(day)
    assert (last["open"], last["close"], last["vwap"], last["volume"]) == SOURCE[(symbol, day)]


def test_every_dow_stock_has_2025_bars_news_and_an_identity(bundled: BundledProvider) -> None:
    as_of = end_of_day(date(2025, 7, 31))
    for symbol in DOW20:
        assert bundled.quote(symbol, as_of).price > 0
        assert bundled.instrument(symbol, as_of).name
        assert len(bundled.news(symbol, as_of, days=240, limit=1000)) > 100


def test_spy_has_real_bars_only_on_the_days_the_source_has(bundled: BundledProvider) -> None:
    bars = bundled.daily_bars("SPY", end_of_day(date(2025, 3, 7)))
    assert len(bars) == 14
    assert bars.frame["close"].iloc[-1] == 575.92
    with pytest.raises(NoData, match="more than 10 days"):
        bundled.daily_bars("SPY", end_of_day(date(2025, 6, 30)))


def test_the_aapl_seam_overlaps_and_agrees() -> None:
    aapl = next(e for e in MANIFEST["bars"] if e["symbol"] == "AAPL")
    seam = aapl["prices"]["seams"][-1]
    assert seam["package"] == "stockbench" and seam["common_days"] == 11
    assert seam["max_close_gap"] < 0.005
    assert aapl["ranges"][0] == ["2000-03-01", "2025-01-08"]  # no hole at the seam


def test_a_read_across_a_hole_says_so(bundled: BundledProvider) -> None:
    jpm = bundled.daily_bars("JPM", end_of_day(date(2025, 5, 15)), start=date(2022, 6, 1))
    assert any("after 2022-12-28 until 2024-12-13" in n for n in jpm.provenance.notes)
    # A window inside one run says nothing of holes.
    recent = bundled.daily_bars("JPM", end_of_day(date(2025, 5, 15)), start=date(2025, 3, 1))
    assert not any("hole" in n for n in recent.provenance.notes)


def test_data_list_shows_each_range_and_the_news(bundled: BundledProvider) -> None:
    rows = {c.symbol: c for c in bundled.coverage()}
    assert rows["MSFT"].ranges[0] == (date(2000, 3, 1), date(2013, 3, 1))
    assert rows["MSFT"].ranges[1][0] == date(2024, 12, 13)
    assert rows["JPM"].news == "2024-12-31..2025-07-28 (333 items)"
    assert rows["^VIX"].news is None


def test_a_finnhub_item_is_known_at_its_epoch_instant(bundled: BundledProvider) -> None:
    # Snapshot: published_utc "2025-01-06T04:48:00" (UTC+8), datetime 1736110080.
    title = "Here’s what’s worth streaming on Netflix, Max, Disney+ and more in January 2025"
    true = datetime(2025, 1, 5, 20, 48, tzinfo=UTC)
    assert true.timestamp() == 1736110080
    before = bundled.news("AAPL", true - timedelta(seconds=1), days=2, limit=100)
    at = bundled.news("AAPL", true, days=2, limit=100)
    assert title not in {i.title for i in before.items}
    assert [i.known_at for i in at.items if i.title == title] == [true]


@settings(max_examples=60, deadline=None)
@given(
    symbol=st.sampled_from(DOW20),
    minutes=st.integers(min_value=0, max_value=260 * 24 * 60),
    days=st.integers(min_value=1, max_value=30),
)
def test_no_news_item_after_as_of_is_served(symbol: str, minutes: int, days: int) -> None:
    as_of = datetime(2024, 12, 1, tzinfo=UTC) + timedelta(minutes=minutes)
    rows = NEWS[NEWS["symbol"] == symbol]["published_at"]
    try:
        served = BundledProvider().news(symbol, as_of, days=days, limit=10_000)
    except NoData:  # nothing of this symbol had been published yet
        assert (rows > pd.Timestamp(as_of)).all()
        return
    assert all(item.known_at <= as_of for item in served.items)
    # Independent count from the file: everything published in the window, nothing else.
    window = rows[(rows <= pd.Timestamp(as_of)) & (rows >= pd.Timestamp(as_of - timedelta(days)))]
    assert len(served.items) == len(window)


def test_news_for_a_symbol_without_it_names_what_covers_it(bundled: BundledProvider) -> None:
    with pytest.raises(NoData, match="bundled has no news for KO"):
        bundled.news("KO", end_of_day(date(2025, 5, 15)))


def test_dividends_are_read_with_their_declaration() -> None:
    table = ActionTable.read(BUNDLED_DIR / "actions.csv")
    april = [d for d in table.dividends("JPM") if d.ex_date == date(2025, 4, 4)]
    assert [(d.amount, d.declared, d.pay_date) for d in april] == [
        (1.4, date(2025, 3, 18), date(2025, 4, 30))
    ]
    before = end_of_day(date(2025, 3, 17))
    assert date(2025, 4, 4) not in {d.ex_date for d in table.dividends_known("JPM", before)}
    assert table.dividends("AMZN") == []
    assert len(table.dividends("PG")) >= 85  # from 2003


def test_a_truncated_local_news_file_is_named_and_skipped(tmp_path: object) -> None:
    from pathlib import Path

    root = Path(str(tmp_path))
    (root / "news").mkdir()
    path = root / "news" / "JPM.jsonl"
    path.write_text('{"published_at": "2025-05-14T10:00:00+00:00", "title": "ok"}\n{"publ')
    chain = ProviderChain([LocalProvider(root), BundledProvider()])
    news = chain.news("JPM", end_of_day(date(2025, 5, 15)))
    assert news.provenance.provider == "bundled"
    assert any(str(path) in a.message for a in news.provenance.attempts)
    with pytest.raises(SkippedFile, match=r"JPM\.jsonl, line 2"):
        LocalProvider(root).news("JPM", end_of_day(date(2025, 5, 15)))


def test_a_malformed_local_dividend_row_is_named_and_skipped(tmp_path: object) -> None:
    from pathlib import Path

    root = Path(str(tmp_path))
    (root / "bars" / "1d").mkdir(parents=True)
    (root / "bars" / "1d" / "JPM.csv").write_text("date,close\n2025-05-15,1.0\n")
    (root / "actions.csv").write_text(
        "symbol,ex_date,kind,ratio,amount\nJPM,2025-04-04,dividend,,-1.4\n"
    )
    chain = ProviderChain([LocalProvider(root), BundledProvider()])
    bars = chain.daily_bars("JPM", end_of_day(date(2025, 5, 15)))
    assert bars.provenance.provider == "bundled"
    assert any("actions.csv:2" in a.message for a in bars.provenance.attempts)


# Published closes of 2015-12-31 (NYSE official closes, as quoted by the exchanges' and
# newspapers' year-end tables): independent of every bundled source.
PUBLISHED_2015 = {"JPM": 66.03, "JNJ": 102.72, "PG": 79.41, "HD": 132.25, "UNH": 117.64}


@pytest.mark.parametrize("symbol", sorted(PUBLISHED_2015))
def test_an_adjusted_close_series_is_served_as_traded_in_2015(
    bundled: BundledProvider, symbol: str
) -> None:
    quote = bundled.quote(symbol, end_of_day(date(2015, 12, 31)))
    assert quote.basis == "close"
    assert quote.price == pytest.approx(PUBLISHED_2015[symbol], rel=0.01)
    entry = next(e for e in MANIFEST["bars"] if e["symbol"] == symbol)
    assert "derived from the adjusted close" in entry["prices"]["source_basis"]


def test_before_the_first_dividend_record_only_the_adjusted_close_is_served(
    bundled: BundledProvider,
) -> None:
    bars = bundled.daily_bars("JPM", end_of_day(date(2000, 12, 29)))
    assert bars.fields == {"adj_close"}


def test_the_fundamentals_analyst_has_figures_for_every_dow_stock_in_2025(
    bundled: BundledProvider,
) -> None:
    from alphadesk.data.fundamentals import statements

    as_of = end_of_day(date(2025, 5, 15))
    for symbol in DOW20:
        figures = {f.name for f in statements(bundled.fundamentals(symbol, as_of), as_of).figures}
        assert {"revenue", "net_income"} <= figures, symbol


def test_a_polygon_statement_counts_from_its_acceptance(bundled: BundledProvider) -> None:
    # GS's 10-Q for 2025 Q1: accepted 2025-05-02T20:53:13Z (Polygon's acceptance_datetime).
    accepted = datetime(2025, 5, 2, 20, 53, 13, tzinfo=UTC)
    before = bundled.fundamentals("GS", accepted - timedelta(seconds=1))
    at = bundled.fundamentals("GS", accepted)
    q1 = date(2025, 3, 31)
    assert not any(f.end == q1 for f in before.items)
    revenue = [f for f in at.items if f.end == q1 and f.concept == "Revenues"]
    assert [(f.value, f.known_at) for f in revenue] == [(15062000000.0, accepted)]


def test_the_provider_lists_the_dividends_declared_by_as_of(bundled: BundledProvider) -> None:
    declared = bundled.dividends("JPM", end_of_day(date(2025, 5, 19)))  # Q3's declared then
    assert [(d.ex_date, d.amount) for d in declared.items[-2:]] == [
        (date(2025, 4, 4), 1.4),
        (date(2025, 7, 3), 1.4),
    ]
    assert declared.items[-1].known_at == datetime(2025, 5, 19, 9, 30, tzinfo=NY)
    before = bundled.dividends("JPM", end_of_day(date(2025, 5, 16)))  # declared on the 19th
    assert before.items[-1].ex_date == date(2025, 4, 4)
    with pytest.raises(NoData, match="no dividend records for KO"):
        bundled.dividends("KO", end_of_day(date(2025, 5, 19)))


def test_dividends_pass_through_the_chain_and_its_wrappers(tmp_path: object) -> None:
    from pathlib import Path

    from alphadesk.data.sealed import SealedMarket

    root = Path(str(tmp_path))
    (root / "actions.csv").write_text(
        "symbol,ex_date,kind,ratio,amount,declared\nKO,2025-03-14,dividend,,0.51,2025-02-13\n"
    )
    as_of = end_of_day(date(2025, 5, 19))
    chain = SealedMarket(ProviderChain([LocalProvider(root), BundledProvider()]), as_of)
    ko = chain.dividends("KO", as_of)  # the local folder's record
    assert (ko.provenance.provider, [(d.ex_date, d.amount) for d in ko.items]) == (
        "local",
        [(date(2025, 3, 14), 0.51)],
    )
    jpm = chain.dividends("JPM", as_of)  # none local: the chain falls through to bundled
    assert jpm.provenance.provider == "bundled"
    assert "lists no dividends of JPM" in jpm.provenance.attempts[0].message
    assert (date(2025, 7, 3), 1.4) in [(d.ex_date, d.amount) for d in jpm.items]
    unconfigured = ProviderChain([LocalProvider(None), BundledProvider()])
    assert unconfigured.dividends("JPM", as_of).provenance.attempts[0].error == "NotConfigured"
    with pytest.raises(NoData, match="no dividend records for AMZN"):
        ProviderChain([LocalProvider(root), BundledProvider()]).dividends("AMZN", as_of)


def test_a_dividend_before_a_split_is_on_the_as_of_basis(bundled: BundledProvider) -> None:
    # AAPL paid $0.82 ex 2020-08-07, before its 4-for-1 split of 2020-08-31.
    before = bundled.dividends("AAPL", end_of_day(date(2020, 8, 28)))
    after = bundled.dividends("AAPL", end_of_day(date(2020, 9, 30)))
    [b] = [r for r in before.items if r.ex_date == date(2020, 8, 7)]
    [a] = [r for r in after.items if r.ex_date == date(2020, 8, 7)]
    assert (b.amount, b.basis_amount) == (0.82, 0.82)
    assert (a.amount, a.basis_amount) == (0.82, pytest.approx(0.82 / 4))
