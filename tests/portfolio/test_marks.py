"""A SPY position's mark: the S&P 500 index / 10 stands in only for the same session."""

from __future__ import annotations

from datetime import UTC, datetime

from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.portfolio.marks import marks
from alphadesk.portfolio.models import Contract

MARKET = build_provider(Settings())
SPY = Contract(symbol="SPY")


def test_spy_is_the_index_over_ten_of_the_same_session() -> None:
    close = datetime(2018, 12, 28, 21, tzinfo=UTC)
    index = MARKET.quote("^GSPC", close).price
    found = marks(MARKET, [SPY], close)["SPY"]
    assert found.price == index / 10
    assert "modeled" in found.basis and "2018-12-28" in found.basis


def test_an_older_index_close_is_not_todays_spy() -> None:
    # The bundled index ends 2018-12-31; on 2019-01-04 its last close is four sessions old.
    found = marks(MARKET, [SPY], datetime(2019, 1, 4, 21, tzinfo=UTC))["SPY"]
    assert found.price is None
    assert "2019-01-04" in found.basis and "2018-12-31" in found.basis
