"""Index membership at a date, against the package it was converted from."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from tests.support.requires import from_test_extra

from alphadesk.data.models import Coverage
from alphadesk.data.universe import IndexMembership, bundled_membership, with_data
from alphadesk.pipelines.screen.models import ScreenRequest

MEMBERSHIP = bundled_membership()


@pytest.mark.parametrize("index", ["sp500", "nasdaq100", "dow30"])
@pytest.mark.parametrize("day", ["2000-06-30", "2008-09-15", "2015-06-30", "2022-06-08"])
def test_members_match_the_source_package(index: str, day: str) -> None:
    ic = from_test_extra("index_constitution")
    theirs = sorted(ic.constituents_at(index, day)["symbol"])
    ours = sorted(m.current for m in MEMBERSHIP.members(index, date.fromisoformat(day)))
    assert ours == theirs


def test_members_carry_the_ticker_of_their_day() -> None:
    day = date(2020, 1, 2)
    sp500 = {m.current: m.symbol for m in MEMBERSHIP.members("sp500", day)}
    assert sp500["META"] == "FB"  # renamed 2022-06-09
    assert sp500["ELV"] == "ANTM"  # ANTM -> ELV 2022-06-28, after WLP -> ANTM 2014-12-03
    assert MEMBERSHIP.ticker_on("ELV", date(2010, 1, 4)) == "WLP"
    assert MEMBERSHIP.ticker_on("GOOGL", date(2013, 3, 1)) == "GOOG"  # class A, pre-2014
    assert MEMBERSHIP.ticker_on("META", date(2023, 1, 3)) == "META"


def test_a_member_that_later_left_is_a_member_while_it_was_one() -> None:
    """Survivorship: Range Resources left the S&P 500 on 2018-06-18."""
    assert "RRC" in {m.symbol for m in MEMBERSHIP.members("sp500", date(2015, 6, 30))}
    assert "RRC" not in {m.symbol for m in MEMBERSHIP.members("sp500", date(2018, 6, 18))}
    assert "RRC" in {m.symbol for m in MEMBERSHIP.members("sp500", date(2018, 6, 15))}


def test_members_with_and_without_data() -> None:
    members = MEMBERSHIP.members("dow30", date(2015, 6, 30))
    cov = [
        Coverage(
            symbol="KO",
            provider="t",
            fields=["close"],
            start=date(1990, 1, 2),
            end=date(2022, 12, 28),
        ),
        Coverage(
            symbol="AAPL",
            provider="t",
            fields=["close"],
            start=date(2016, 1, 4),
            end=date(2024, 1, 2),
        ),
        Coverage(
            symbol="IBM",
            provider="t",
            fields=["close"],
            start=date(2000, 1, 3),
            end=date(2015, 6, 25),
        ),
    ]
    have, lack = with_data(members, cov, date(2015, 6, 30))
    assert have == ["IBM", "KO"]  # AAPL starts later; IBM ended 5 days before: still fresh
    assert len(lack) == len(members) - 2


def test_an_unknown_index_or_a_bad_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sp500, nasdaq100, dow30"):
        MEMBERSHIP.members("ftse100", date(2015, 6, 30))
    bad = tmp_path / "membership.csv"
    bad.write_text("index,symbol,name,start,end\nsp500,X,X Corp,2015-13-01,\n")
    changes = tmp_path / "changes.csv"
    changes.write_text("date,old,new\n")
    with pytest.raises(ValueError, match=r"membership.csv:2"):
        IndexMembership(bad, changes)


def test_a_screen_of_an_index_takes_each_dates_members() -> None:
    request = ScreenRequest(
        symbols=["RRC", "KO", "NVDA"],
        dates=[datetime(2015, 6, 30, 20, tzinfo=UTC), datetime(2019, 6, 28, 20, tzinfo=UTC)],
        universe="sp500",
    )
    assert request.symbols_on(request.dates[0]) == ["RRC", "KO", "NVDA"]
    assert request.symbols_on(request.dates[1]) == ["KO", "NVDA"]  # RRC left in 2018
