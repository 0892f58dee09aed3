"""The paper account's promises: cash-secured puts, point-in-time trade dates, prices
above 0, explicit accounts, and order logs of the older schema that keep working."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from alphadesk.portfolio import (
    AccountExists,
    AccountNotFound,
    Contract,
    InsufficientCash,
    OrderRejected,
    OrderRequest,
    PaperPortfolio,
)

KO = Contract(symbol="KO")
NVDA_PUT = Contract(symbol="NVDA", right="put", strike=130, expiration=date(2021, 7, 16))


def _day(text: str) -> datetime:
    return datetime.fromisoformat(f"{text}T20:00:00+00:00")


def _order(contract: Contract, side: str, qty: float, price: float, day: str) -> OrderRequest:
    return OrderRequest(contract=contract, side=side, quantity=qty, price=price, as_of=_day(day))  # type: ignore[arg-type]


@pytest.fixture
def book(tmp_path: Path) -> PaperPortfolio:
    return PaperPortfolio(tmp_path / "p.sqlite")


def test_a_short_put_reserves_strike_times_100_per_contract(book: PaperPortfolio) -> None:
    with pytest.raises(InsufficientCash) as refused:
        book.place(_order(NVDA_PUT, "sell", 1000, 2.5, "2021-06-30"))
    # 1,000 x 130 x 100 = $13M of collateral, less $250,000 of premium.
    assert refused.value.needed == pytest.approx(13_000_000 - 250_000)
    assert refused.value.free == pytest.approx(100_000)
    message = str(refused.value)
    assert "$12,750,000.00" in message and "$100,000.00 free" in message
    assert "at most 7 contracts" in message  # 7 x (13,000 - 250) = 89,250
    assert book.orders() == []

    book.place(_order(NVDA_PUT, "sell", 7, 2.5, "2021-06-30"))
    value = book.value({}, as_of=_day("2021-07-01"))
    assert value.collateral == pytest.approx(7 * 130 * 100)
    assert value.cash == pytest.approx(100_000 + 7 * 250)
    free = value.cash - value.collateral  # 10,750
    with pytest.raises(InsufficientCash, match=r"reserved for short puts"):
        book.place(_order(KO, "buy", 300, 50.0, "2021-07-01"))  # $15,000 > free
    book.place(_order(KO, "buy", 200, 50.0, "2021-07-01"))  # $10,000 fits
    assert book.value({}).cash - book.value({}, as_of=_day("2021-07-01")).collateral == (
        pytest.approx(free - 10_000)
    )


def test_collateral_is_released_when_the_put_is_bought_back_or_expires(
    book: PaperPortfolio,
) -> None:
    book.place(_order(NVDA_PUT, "sell", 7, 2.5, "2021-06-30"))
    # Bought back: 2 contracts' collateral (26,000) is free again.
    book.place(_order(NVDA_PUT, "buy", 2, 1.0, "2021-07-02"))
    assert book.value({}, as_of=_day("2021-07-02")).collateral == pytest.approx(5 * 13_000)
    with pytest.raises(InsufficientCash):
        book.place(_order(KO, "buy", 1000, 50.0, "2021-07-06"))  # $50,000 > 36,550 free
    # After the close of its expiration day the put holds nothing back.
    assert book.value({}, as_of=_day("2021-07-16")).collateral == pytest.approx(0)
    book.place(_order(KO, "buy", 1000, 50.0, "2021-07-19"))


def test_two_concurrent_put_sales_cannot_share_the_collateral(book: PaperPortfolio) -> None:
    def sell(_: int) -> bool:
        try:
            book.place(_order(NVDA_PUT, "sell", 5, 1.0, "2021-06-30"))  # 65,000 each
        except InsufficientCash:
            return False
        return True

    with ThreadPoolExecutor(max_workers=6) as pool:
        filled = sum(pool.map(sell, range(6)))
    assert filled == 1
    value = book.value({}, as_of=_day("2021-07-01"))
    assert value.cash >= value.collateral


def test_a_valuation_sees_only_the_orders_traded_by_its_instant(book: PaperPortfolio) -> None:
    book.place(_order(KO, "buy", 100, 61.078, "2022-06-30"))
    book.place(_order(KO, "sell", 40, 54.785, "2022-09-30"))
    early = book.value({"KO": 50.0}, as_of=_day("2021-06-30"))
    assert early.positions == [] and early.cash == 100_000 and early.orders == 0
    middle = book.value({"KO": 60.0}, as_of=_day("2022-07-29"))
    assert [(p.key, p.quantity) for p in middle.positions] == [("KO", 100)]
    assert book.positions(as_of=_day("2022-09-30"))[1][0].quantity == 60
    assert [o.as_of for o in book.orders(as_of=_day("2022-07-01"))] == [_day("2022-06-30")]


def test_a_sale_is_checked_against_the_shares_held_at_its_trade_date(
    book: PaperPortfolio,
) -> None:
    book.place(_order(KO, "buy", 100, 61.078, "2022-06-30"))
    with pytest.raises(OrderRejected, match=r"sell 100 KO on 2015-06-30: the account held 0"):
        book.place(_order(KO, "sell", 100, 40.0, "2015-06-30"))
    assert len(book.orders()) == 1


def test_a_back_dated_order_that_breaks_a_later_one_is_refused(book: PaperPortfolio) -> None:
    first = book.place(_order(KO, "buy", 100, 50.0, "2020-06-30"))
    later = book.place(_order(KO, "sell", 100, 55.0, "2022-06-30"))
    # On 2021-06-30 the account holds 100, but then the 2022 sale would sell 50 it lacks.
    with pytest.raises(OrderRejected, match=rf"would break a later one, {later.id} "):
        book.place(_order(KO, "sell", 50, 52.0, "2021-06-30"))
    assert [o.id for o in book.orders()] == [first.id, later.id]
    # Cash too: a back-dated buy that spends what a later buy paid with.
    book.open_account("small", cash=10_000)
    book.place(_order(KO, "buy", 150, 50.0, "2022-06-30"), account="small")  # $7,500
    with pytest.raises(InsufficientCash, match="would break a later one"):
        book.place(_order(KO, "buy", 100, 50.0, "2018-01-02"), account="small")  # $5,000
    book.place(_order(KO, "buy", 40, 50.0, "2018-01-02"), account="small")  # leaves enough
    assert [o.as_of.year for o in book.orders("small")] == [2018, 2022]


def test_orders_are_listed_by_trade_date_and_keep_when_they_were_recorded(
    book: PaperPortfolio,
) -> None:
    late = book.place(_order(KO, "buy", 1, 50.0, "2022-06-30"))
    early = book.place(_order(KO, "buy", 1, 50.0, "2020-06-30"))
    listed = book.orders()
    assert [o.id for o in listed] == [early.id, late.id]
    assert listed[0].placed_at > listed[1].placed_at  # recorded later, traded earlier


def test_a_price_of_zero_is_refused_and_force_is_recorded(book: PaperPortfolio) -> None:
    with pytest.raises(OrderRejected, match="above 0"):
        book.place(_order(KO, "buy", 1, 0.0, "2021-06-30"))
    forced = _order(KO, "buy", 1, 5.0, "2021-06-30").model_copy(
        update={"forced": True, "price_check": "no data for KO"}
    )
    book.place(forced)
    stored = book.orders()[0]
    assert stored.forced and stored.price_check == "no data for KO"


def test_accounts_are_opened_explicitly(book: PaperPortfolio) -> None:
    with pytest.raises(AccountNotFound, match=r"'typo' \(accounts: none yet\)"):
        book.place(_order(KO, "buy", 1, 50.0, "2021-06-30"), account="typo")
    book.open_account("ira", cash=5_000)
    with pytest.raises(AccountExists, match="already open"):
        book.open_account("ira")
    with pytest.raises(AccountNotFound, match=r"accounts: ira\)"):
        book.value({}, account="iar")
    with pytest.raises(AccountNotFound):
        book.reset("iar", 1.0)
    # The default account opens itself on first use, with $100,000.
    book.place(_order(KO, "buy", 1, 50.0, "2021-06-30"))
    assert [(a.name, a.starting_cash) for a in book.accounts()] == [
        ("ira", 5_000),
        ("paper", 100_000),
    ]
    assert book.value({}, account="ira").cash == 5_000


_OLD_SCHEMA = """
CREATE TABLE portfolio_accounts (name TEXT PRIMARY KEY, starting_cash REAL NOT NULL,
    created_at TEXT NOT NULL);
CREATE TABLE portfolio_orders (id INTEGER PRIMARY KEY AUTOINCREMENT,
    account TEXT NOT NULL REFERENCES portfolio_accounts(name), placed_at TEXT NOT NULL,
    as_of TEXT, body TEXT NOT NULL);
"""


def test_an_order_log_of_the_older_schema_is_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(_OLD_SCHEMA)
    db.execute(
        "INSERT INTO portfolio_accounts VALUES ('paper', 100000, '2026-01-01T00:00:00+00:00')"
    )
    old_bodies = [  # as the first version wrote them: no forced, no price_check
        ('{"contract":{"symbol":"KO"},"side":"buy","quantity":100,"price":61.078,"fees":0,'
         '"as_of":"2022-06-30T16:00:00-04:00","source":"manual","note":""}'),
        ('{"contract":{"symbol":"KO"},"side":"sell","quantity":40,"price":54.785,"fees":0,'
         '"as_of":null,"source":"manual","note":""}'),
    ]  # fmt: skip
    db.execute(
        "INSERT INTO portfolio_orders (account, placed_at, as_of, body) VALUES (?,?,?,?)",
        ("paper", "2026-01-02T10:00:00+00:00", "2022-06-30T16:00:00-04:00", old_bodies[0]),
    )
    db.execute(
        "INSERT INTO portfolio_orders (account, placed_at, as_of, body) VALUES (?,?,?,?)",
        ("paper", "2026-01-03T10:00:00+00:00", None, old_bodies[1]),
    )
    db.commit()
    db.close()

    book = PaperPortfolio(path)
    orders = book.orders()
    assert [o.quantity for o in orders] == [100, 40]
    # The trade date: the fill instant when there was one, else when it was placed.
    assert orders[0].as_of == datetime(2022, 6, 30, 20, tzinfo=UTC)
    assert orders[1].as_of == datetime(2026, 1, 3, 10, tzinfo=UTC)
    assert not any(o.forced for o in orders)
    assert book.positions()[1][0].quantity == 60
    assert book.value({}, as_of=_day("2025-01-01")).positions[0].quantity == 100
    PaperPortfolio(path)  # opening it again changes nothing
    assert [o.id for o in PaperPortfolio(path).orders()] == [o.id for o in orders]
