"""The paper account accepts only what can happen: an option expires on a trading day and
trades on or before it, every amount is finite and bounded; and an account holding rows an
older version accepted still values, naming each row it leaves out."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close
from alphadesk.portfolio import (
    Contract,
    DamagedAccount,
    OrderRejected,
    OrderRequest,
    PaperPortfolio,
    account_report,
)
from tests.support.old_rows import write_account, write_order

MARKET = build_provider(Settings())
TRADED = session_close(date(2021, 6, 30))


def _put(expiration: date, strike: float = 5) -> Contract:
    return Contract(symbol="KO", right="put", strike=strike, expiration=expiration)


def _sell(contract: Contract, quantity: float = 5, price: float = 4.90) -> OrderRequest:
    return OrderRequest(contract=contract, side="sell", quantity=quantity, price=price,
                        as_of=TRADED)  # fmt: skip


@pytest.fixture
def book(tmp_path: Path) -> PaperPortfolio:
    portfolio = PaperPortfolio(tmp_path / "p.sqlite")
    portfolio.open_account("small", 1_000)
    return portfolio


@pytest.mark.parametrize(
    ("expiration", "words"),
    [
        (date(2021, 7, 17), "2021-07-17 is not an XNYS trading day"),  # a Saturday
        (date(2021, 7, 5), "the session before it is 2021-07-02"),  # Independence Day, observed
        (date(1990, 1, 1), "1990-01-01 is not an XNYS trading day"),
    ],
)
def test_an_expiration_that_is_not_a_trading_day_is_refused(
    book: PaperPortfolio, expiration: date, words: str
) -> None:
    order = _sell(_put(expiration), quantity=1, price=0.05).model_copy(
        update={"side": "buy", "forced": True}  # force is about the price, not the contract
    )
    with pytest.raises(OrderRejected, match=words):
        book.place(order, "small")
    assert book.orders("small") == []


def test_an_option_that_expired_before_the_trade_date_cannot_be_sold(book: PaperPortfolio) -> None:
    words = "expired on 2021-06-18, before the trade date 2021-06-30"
    with pytest.raises(OrderRejected, match=words):
        book.place(_sell(_put(date(2021, 6, 18))), "small")
    assert book.orders("small") == [] and book.positions("small")[0] == 1_000
    # Expiring on the trade date itself is allowed (and secured: 5 x 5 x 100 > $1,000 - premium).
    same_day = _sell(_put(date(2021, 6, 30)), quantity=1, price=0.01)
    assert book.place(same_day, "small").contract.expiration == date(2021, 6, 30)


@pytest.mark.parametrize("cash", [math.inf, -math.inf, math.nan, 1e13])
def test_starting_cash_is_a_finite_amount(book: PaperPortfolio, cash: float) -> None:
    with pytest.raises(ValueError, match="starting cash must be an amount from"):
        book.open_account("rich", cash)
    with pytest.raises(ValueError, match="starting cash must be an amount from"):
        book.reset("small", cash)
    assert "rich" not in [a.name for a in book.accounts()]
    assert book.starting_cash("small") == 1_000


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("quantity", math.inf, "finite number"),
        ("quantity", math.nan, "finite number"),
        ("quantity", 1e308, "less than or equal to 1000000000"),
        ("price", math.inf, "finite number"),
        ("price", 1e308, "less than or equal to 1000000000"),
        ("fees", math.inf, "finite number"),
    ],
)
def test_order_amounts_are_finite_and_bounded(field: str, value: float, words: str) -> None:
    fields = {"contract": Contract(symbol="KO"), "side": "buy", "quantity": 1, "price": 50.0}
    with pytest.raises(ValidationError, match=words):
        OrderRequest.model_validate(fields | {field: value, "as_of": TRADED})
    with pytest.raises(ValidationError, match="finite number"):
        Contract(symbol="KO", right="put", strike=math.inf, expiration=date(2021, 7, 16))


def test_an_account_with_rows_an_older_version_accepted_still_values(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite"
    write_account(path, "old", 1_000)
    saturday = {"contract": {"symbol": "KO", "right": "put", "strike": 60,
                             "expiration": "2021-07-17"},
                "side": "buy", "quantity": 1, "price": 5.5}  # fmt: skip
    kept = write_order(path, "old", "2021-06-30", saturday)
    expired = write_order(path, "old", "2021-06-30", {
        "contract": {"symbol": "KO", "right": "put", "strike": 5, "expiration": "2021-06-18"},
        "side": "sell", "quantity": 5, "price": 4.9})  # fmt: skip
    huge = write_order(path, "old", "2021-06-30", {"contract": {"symbol": "KO"}, "side": "buy",
                                                   "quantity": 1e308, "price": 1e-308})  # fmt: skip
    garbled = write_order(path, "old", "2021-06-30", "{not an order")

    book = PaperPortfolio(path)
    report = account_report(book, MARKET, session_close(date(2021, 7, 30)), "old")

    # The Saturday put settles at the close of the session before, Friday 2021-07-16, and
    # says so; the three impossible rows change nothing and are each named.
    friday = MARKET.daily_bars("KO", session_close(date(2021, 7, 16)))
    close = float(friday.frame.iloc[-1][friday.price_field()])
    (held,) = report.positions
    assert held.position == "KO 2021-07-17 60P" and held.mark == pytest.approx(60 - close, abs=1e-4)
    assert "2021-07-17 is not a trading day: settled at the close of 2021-07-16" in held.mark_basis
    assert report.cash == 1_000 - 550
    assert report.account_value == pytest.approx(450 + 100 * (60 - close), abs=0.01)
    assert [o.id for o in book.orders("old")] == [kept] and report.orders == 1
    notes = "\n".join(report.missing)
    assert f"order {expired} left out: KO 2021-06-18 5P expired on 2021-06-18" in notes
    assert f"order {huge} left out: it does not read as an order (quantity:" in notes
    assert f"order {garbled} left out: it does not read as an order" in notes
    assert all(math.isfinite(v) for v in (report.cash, report.account_value, report.total_pnl))
    # New orders are checked against the kept rows only: the $450 left buys 8 shares at $54.
    book.place(OrderRequest(contract=Contract(symbol="KO"), side="buy", quantity=8, price=54,
                            as_of=TRADED), "old")  # fmt: skip
    assert book.positions("old")[0] == pytest.approx(450 - 8 * 54)


def test_an_account_whose_starting_cash_is_not_an_amount_says_how_to_repair_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "p.sqlite"
    write_account(path, "broken", math.inf)
    book = PaperPortfolio(path)
    with pytest.raises(DamagedAccount, match=r"'broken' has a stored starting cash of inf.*reset"):
        account_report(book, MARKET, datetime(2021, 7, 30, 20, tzinfo=UTC), "broken")
    with pytest.raises(DamagedAccount):
        book.place(_sell(_put(date(2021, 7, 16)), quantity=1, price=0.05), "broken")
    listed = {a.name: a for a in book.accounts()}["broken"]
    assert listed.starting_cash is None and "reset" in (listed.damaged or "")
    assert "Infinity" not in listed.model_dump_json()
    book.reset("broken", 2_000)  # repairs it
    assert {a.name: a for a in book.accounts()}["broken"].damaged is None
    assert account_report(book, MARKET, TRADED, "broken").account_value == 2_000
