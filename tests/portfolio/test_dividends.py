"""Cash dividends in the paper account, on JPM's real records (Polygon via the bundled
StockBench data): $1.40 ex 2025-04-04 (declared 2025-03-18) and $1.40 ex 2025-07-03
(declared 2025-05-19). Expected cash is computed by hand: shares x amount."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close
from alphadesk.portfolio import (
    Contract,
    Order,
    OrderLog,
    OrderRequest,
    PaperPortfolio,
    account_dividends,
    account_report,
)

MARKET = build_provider(Settings())
JPM = Contract(symbol="JPM")
AMZN = Contract(symbol="AMZN")


def _buy(book: PaperPortfolio, contract: Contract, qty: float, price: float, day: date) -> None:
    book.place(
        OrderRequest(
            contract=contract, side="buy", quantity=qty, price=price, as_of=session_close(day)
        )
    )


def test_a_long_position_over_the_ex_date_gets_shares_times_the_amount(tmp_path: Path) -> None:
    book = PaperPortfolio(tmp_path / "p.sqlite")
    _buy(book, JPM, 100, 243.66, date(2025, 4, 1))  # the close of 2025-04-01
    before = account_report(book, MARKET, session_close(date(2025, 4, 3)), "paper")
    on = account_report(book, MARKET, session_close(date(2025, 4, 4)), "paper")
    assert before.dividends == []
    assert on.cash - before.cash == pytest.approx(100 * 1.40)
    assert on.cash == pytest.approx(100_000 - 24_366 + 140)
    [paid] = on.dividends
    assert (paid.symbol, paid.ex_date, paid.shares, paid.amount, paid.cash) == (
        "JPM",
        date(2025, 4, 4),
        100,
        1.40,
        140.0,
    )
    assert on.account_value == pytest.approx(on.cash + 100 * 210.28)  # the ex-date close
    assert any(b.startswith("JPM: dividends from bundled") for b in on.dividend_basis)


def test_a_dividend_is_credited_only_once_declared_and_gone_ex(tmp_path: Path) -> None:
    book = PaperPortfolio(tmp_path / "p.sqlite")
    _buy(book, JPM, 10, 243.66, date(2025, 4, 1))
    # The July dividend was declared on 2025-05-19: unknown as of the 16th.
    may_16 = account_report(book, MARKET, session_close(date(2025, 5, 16)), "paper")
    assert [d.ex_date for d in may_16.dividends] == [date(2025, 4, 4)]
    # Declared by the 19th, but not ex until July 3: still one credit.
    may_19 = account_report(book, MARKET, session_close(date(2025, 5, 19)), "paper")
    assert [d.ex_date for d in may_19.dividends] == [date(2025, 4, 4)]
    july_3 = account_report(book, MARKET, session_close(date(2025, 7, 3)), "paper")
    assert [d.ex_date for d in july_3.dividends] == [date(2025, 4, 4), date(2025, 7, 3)]
    assert july_3.cash - may_19.cash == pytest.approx(10 * 1.40)


def test_shares_bought_on_the_ex_date_get_nothing(tmp_path: Path) -> None:
    book = PaperPortfolio(tmp_path / "p.sqlite")
    _buy(book, JPM, 100, 210.28, date(2025, 4, 4))  # after the record close
    report = account_report(book, MARKET, session_close(date(2025, 4, 30)), "paper")
    assert report.dividends == []
    assert report.cash == pytest.approx(100_000 - 21_028)


def _order(order_id: int, side: str, qty: float, price: float, day: date) -> Order:
    return Order(
        id=order_id,
        account="short",
        contract=JPM,
        side=side,  # type: ignore[arg-type]
        quantity=qty,
        price=price,
        as_of=session_close(day),
        placed_at=datetime(2025, 8, 1, tzinfo=UTC),
    )


def test_a_short_position_pays_the_dividend() -> None:
    # The paper account refuses short stock sales; the replay still pays a short's
    # dividend (a log carrying one, e.g. written by another tool).
    log = OrderLog("short", 100_000.0, [_order(1, "sell", 50, 243.66, date(2025, 4, 1))], [])
    as_of = session_close(date(2025, 4, 7))
    credits, _ = account_dividends(log, MARKET, as_of)
    value = log.value({"JPM": 214.44}, as_of, credits)
    [paid] = value.dividends
    assert (paid.shares, paid.cash) == (-50, pytest.approx(-50 * 1.40))
    assert value.cash == pytest.approx(100_000 + 50 * 243.66 - 70.0)
    # Covered before the ex-date: nothing to pay.
    orders = [
        _order(1, "sell", 50, 243.66, date(2025, 4, 1)),
        _order(2, "buy", 50, 245.82, date(2025, 4, 2)),
    ]
    covered = OrderLog("short", 100_000.0, orders, [])
    assert covered.value({}, as_of, credits).dividends == []


def test_a_stock_without_dividend_records_says_so(tmp_path: Path) -> None:
    book = PaperPortfolio(tmp_path / "p.sqlite")
    _buy(book, AMZN, 10, 190.0, date(2025, 4, 1))
    report = account_report(book, MARKET, session_close(date(2025, 7, 31)), "paper")
    assert report.dividends == []
    assert any(b.startswith("no dividend records for AMZN") for b in report.dividend_basis)


def test_cash_a_dividend_brought_can_be_spent_after_its_ex_date(tmp_path: Path) -> None:
    from alphadesk.portfolio import InsufficientCash
    from alphadesk.portfolio.placing import place

    book = PaperPortfolio(tmp_path / "p.sqlite")
    book.reset(cash=24_366)  # exactly 100 JPM at the close of 2025-04-01
    place(book, MARKET, OrderRequest(contract=JPM, side="buy", quantity=100, price=243.66,
                                     as_of=session_close(date(2025, 4, 1))))  # fmt: skip
    # The $140 of 2025-04-04 buys no share before the ex-date and one share (210.28) after.
    with pytest.raises(InsufficientCash):
        place(book, MARKET, OrderRequest(contract=JPM, side="buy", quantity=1, price=243.0,
                                         as_of=session_close(date(2025, 4, 2))))  # fmt: skip
    with pytest.raises(InsufficientCash):  # 140 < 2 x 210.28
        place(book, MARKET, OrderRequest(contract=JPM, side="buy", quantity=2, price=210.28,
                                         as_of=session_close(date(2025, 4, 4))))  # fmt: skip
    after = session_close(date(2025, 4, 4))
    placed = place(book, MARKET, OrderRequest(contract=JPM, side="buy", quantity=0.5,
                                              price=210.28, as_of=after))  # fmt: skip
    assert placed.quantity == 0.5
