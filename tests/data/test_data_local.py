"""The local provider reads the documented folder layout, point in time."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime
from pathlib import Path

import pandas as pd
import pytest
from datahelpers import write_folder

from alphadesk.data import InvalidData, NoData, NotConfigured
from alphadesk.data.providers.local import LocalProvider

AS_OF = datetime(2024, 1, 10, 21, tzinfo=UTC)


@pytest.fixture
def local(tmp_path: Path) -> LocalProvider:
    return LocalProvider(write_folder(tmp_path / "mydata"))


def test_daily_bars_from_csv_with_declared_fields(local: LocalProvider) -> None:
    bars = local.daily_bars("acme", AS_OF)
    assert len(bars) == 3
    assert bars.fields == {"open", "high", "low", "close", "adj_close", "volume"}
    assert bars.frame.index[0] == pd.Timestamp("2024-01-02 16:00", tz="America/New_York")
    assert bars.provenance.provider == "local" and bars.provenance.source.endswith("ACME.csv")
    early = local.daily_bars("ACME", datetime(2024, 1, 3, 20, 30, tzinfo=UTC))
    assert early.frame.index[-1].date() == date(2024, 1, 2)  # 3 Jan closed at 21:00 UTC


def test_close_only_parquet_stays_close_only(local: LocalProvider) -> None:
    bars = local.daily_bars("^idx", AS_OF)
    assert bars.fields == {"close"} and "high" in bars.missing
    quote = local.quote("^IDX", AS_OF)
    assert quote.price == 51.0 and quote.volume is None


def test_intraday_bars_end_at_start_plus_interval(local: LocalProvider) -> None:
    bars = local.intraday_bars("ACME", datetime(2024, 1, 4, 14, 36, tzinfo=UTC), interval="5m")
    assert list(bars.frame["close"]) == [11.1]
    assert bars.frame.index[0] == pd.Timestamp("2024-01-04 09:35", tz="America/New_York")


def test_news_and_fundamentals_point_in_time(local: LocalProvider) -> None:
    news = local.news("ACME", AS_OF, days=30)
    assert [n.title for n in news.items] == ["ACME wins a contract", "ACME guidance"]
    assert [n.title for n in local.news("ACME", AS_OF, days=3).items] == ["ACME guidance"]
    facts = local.fundamentals("ACME", AS_OF)
    latest = facts.latest("Revenues")
    assert latest is not None and latest.value == 100  # the 10-K was filed in February
    later = local.fundamentals("ACME", datetime(2024, 2, 2, 12, tzinfo=UTC)).latest("Revenues")
    assert later is not None and later.value == 130


def test_identity_from_instruments_csv(local: LocalProvider) -> None:
    acme = local.instrument("ACME", AS_OF)
    assert (acme.name, acme.exchange, acme.sector) == ("ACME Corp", "NYSE", "Industrials")
    with pytest.raises(NoData):
        local.instrument("OTHER", AS_OF)


def test_unknown_symbol_suggests_local_files(local: LocalProvider) -> None:
    with pytest.raises(NoData) as caught:
        local.daily_bars("ACMY", AS_OF)
    assert caught.value.suggestions == ["ACME"]
    assert local.universe() == ["ACME", "^IDX"]


def test_a_symbol_with_bars_only_lacks_that_kind_and_is_no_typo(local: LocalProvider) -> None:
    # ^IDX has daily bars and nothing else: not an unknown symbol that "looks like ^IDX".
    with pytest.raises(NoData) as facts:
        local.fundamentals("^IDX", AS_OF)
    message = str(facts.value)
    assert facts.value.suggestions == [] and "did you mean" not in message
    assert "has daily bars of ^IDX but no fundamentals" in message
    assert "fundamentals/^IDX.csv or fundamentals/^IDX.json" in message and "sec" in message
    with pytest.raises(NoData, match=r"no news: add news/\^IDX.jsonl .* yahoo") as news:
        local.news("^IDX", AS_OF)
    assert news.value.suggestions == []
    with pytest.raises(NoData, match=r"no 5m bars: add bars/5m/\^IDX.parquet"):
        local.intraday_bars("^IDX", AS_OF, interval="5m")


def test_missing_folder_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(NotConfigured, match="ALPHADESK_DATA__LOCAL_DIR"):
        LocalProvider(None).daily_bars("ACME", AS_OF)
    with pytest.raises(NotConfigured, match="does not exist"):
        LocalProvider(tmp_path / "nope").daily_bars("ACME", AS_OF)


def test_malformed_files_are_invalid_data(tmp_path: Path) -> None:
    root = write_folder(tmp_path / "d")
    (root / "bars" / "1d" / "BAD.csv").write_text("when,price\n2024-01-02,1\n")
    (root / "news" / "BAD.jsonl").write_text('{"title": "no time"}\n')
    (root / "bars" / "5m" / "BAD.csv").write_text("start,close\n2024-01-04T09:30:00,1\n")
    local = LocalProvider(root)
    with pytest.raises(InvalidData, match="`date` or `close_time`"):
        local.daily_bars("BAD", AS_OF)
    with pytest.raises(InvalidData, match="line 1"):
        local.news("BAD", AS_OF)
    with pytest.raises(InvalidData, match="zone"):
        local.intraday_bars("BAD", AS_OF, interval="5m")


def test_files_are_reread_when_they_change(tmp_path: Path) -> None:
    root = write_folder(tmp_path / "d")
    local = LocalProvider(root)
    assert len(local.daily_bars("ACME", AS_OF)) == 3
    path = root / "bars" / "1d" / "ACME.csv"
    path.write_text(path.read_text() + "2024-01-05,12,12.5,11.5,12.2,12.1,800\n")
    os.utime(path, (1e9, 1e9))  # a different mtime even on coarse clocks
    assert len(local.daily_bars("ACME", AS_OF)) == 4


def test_a_symbol_with_splits_in_actions_csv_is_read_as_traded(tmp_path: Path) -> None:
    root = write_folder(tmp_path / "mydata")
    (root / "actions.csv").write_text(
        "symbol,ex_date,kind,ratio,source\nACME,2024-01-04,split,2,press release\n"
    )
    local = LocalProvider(root)
    before = local.daily_bars("ACME", datetime(2024, 1, 3, 22, tzinfo=UTC))
    assert list(before.frame["close"]) == [10.5, 11.0]  # the split is not known yet
    after = local.daily_bars("ACME", AS_OF)
    assert list(after.frame["close"]) == [5.25, 5.5, 11.8]  # earlier bars halved
    assert list(after.frame["volume"]) == [2000, 2400, 900]
    assert "2:1 on 2024-01-04" in after.basis
    assert local.quote("ACME", AS_OF).price == 11.8
    # A symbol the table does not list is served as its file has it, and says so.
    idx = local.daily_bars("^IDX", AS_OF)
    assert list(idx.frame["close"]) == [50.0, 51.0] and "no splits applied" in idx.basis


def test_bars_without_an_actions_table_state_their_basis(local: LocalProvider) -> None:
    bars = local.daily_bars("ACME", AS_OF)
    assert bars.basis.startswith("as in ACME.csv: no splits applied")
    assert list(bars.frame["close"]) == [10.5, 11.0, 11.8]


def test_a_malformed_actions_csv_is_named_with_its_line(tmp_path: Path) -> None:
    root = write_folder(tmp_path / "mydata")
    (root / "actions.csv").write_text("symbol,ex_date,kind,ratio\nACME,2024-01-04,split,-2\n")
    with pytest.raises(InvalidData, match=r"actions.csv:2: split ratio must be positive"):
        LocalProvider(root).daily_bars("ACME", AS_OF)
