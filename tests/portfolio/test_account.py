"""The paper portfolio: P&L against a hand computation; concurrent orders lose nothing."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from alphadesk.portfolio import Contract, OrderRejected, OrderRequest, PaperPortfolio

AAPL = Contract(symbol="AAPL")
PUT = Contract(symbol="SPY", right="put", strike=450, expiration=date(2024, 12, 20))
BEFORE_EXPIRY = datetime(2024, 11, 29, 18, tzinfo=UTC)  # the puts trade before they expire


def _order(contract: Contract, side: str, qty: float, price: float, **kw: object) -> OrderRequest:
    return OrderRequest(contract=contract, side=side, quantity=qty, price=price, **kw)  # type: ignore[arg-type]


def test_cash_positions_and_pnl_match_a_hand_computation(tmp_path: Path) -> None:
    book = PaperPortfolio(tmp_path / "p.sqlite")
    book.reset(cash=100_000)
    book.place(_order(AAPL, "buy", 10, 100.0))
    book.place(_order(AAPL, "buy", 10, 110.0, fees=1.0))
    book.place(_order(AAPL, "sell", 5, 120.0))
    book.place(_order(PUT, "sell", 2, 3.50, as_of=BEFORE_EXPIRY))  # sell to open 2: +$700
    # Buy back 1: realise (3.50-1.25)*100 = 225.
    book.place(_order(PUT, "buy", 1, 1.25, as_of=BEFORE_EXPIRY))

    value = book.value({"AAPL": 115.0, PUT.key: 2.00})
    # Hand computation.
    # AAPL: average cost (10*100 + 10*110)/20 = 105; sold 5 at 120: realised 5*15 = 75.
    # Cash: 100000 - 1000 - 1100 - 1 + 600 + 700 - 125 = 99074.
    assert value.cash == pytest.approx(99_074.0)
    rows = {r.key: r for r in value.positions}
    assert rows["AAPL"].quantity == 15 and rows["AAPL"].average_cost == pytest.approx(105.0)
    assert rows["AAPL"].unrealized_pnl == pytest.approx(15 * (115 - 105))  # 150
    put = rows[PUT.key]
    assert put.quantity == -1 and put.average_cost == pytest.approx(3.50)
    assert put.market_value == pytest.approx(-200.0)  # short 1 at a 2.00 mark
    assert put.unrealized_pnl == pytest.approx(350.0 - 200.0)  # 150
    assert value.realized_pnl == pytest.approx(75 + 225)
    # Account value = cash + positions = 99074 + 1725 - 200 = 100599
    assert value.account_value == pytest.approx(100_599.0)
    # ... and equals the start plus every P&L, less the $1 fee.
    assert value.total_pnl == pytest.approx(75 + 225 + 150 + 150 - 1)


def test_a_position_without_a_mark_is_held_at_cost_and_listed(tmp_path: Path) -> None:
    book = PaperPortfolio(tmp_path / "p.sqlite")
    book.place(_order(AAPL, "buy", 3, 50.0))
    value = book.value({})
    assert value.unpriced == ["AAPL"] and value.positions[0].unrealized_pnl == 0
    assert value.account_value == pytest.approx(100_000.0)


def test_orders_the_paper_account_cannot_fill_are_refused_with_the_reason(tmp_path: Path) -> None:
    book = PaperPortfolio(tmp_path / "p.sqlite")
    book.reset(cash=1_000)
    with pytest.raises(OrderRejected, match="not enough free cash"):
        book.place(_order(AAPL, "buy", 100, 50.0))
    with pytest.raises(OrderRejected, match="held 0"):
        book.place(_order(AAPL, "sell", 1, 50.0))
    assert book.orders() == []
    with pytest.raises(ValueError, match="right"):
        Contract(symbol="SPY", strike=450)


def _place_many(path: str, worker: int, count: int) -> None:
    book = PaperPortfolio(Path(path))
    for i in range(count):
        book.place(_order(AAPL, "buy", 1, 10.0 + worker, note=f"{worker}-{i}"))


@pytest.mark.slow
def test_concurrent_orders_from_threads_and_processes_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite"
    book = PaperPortfolio(path)
    book.reset(cash=1_000_000)
    workers, per_worker = 4, 15
    ctx = multiprocessing.get_context("spawn")
    processes = [
        ctx.Process(target=_place_many, args=(str(path), w, per_worker)) for w in range(workers)
    ]
    for p in processes:
        p.start()
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda w: _place_many(str(path), 10 + w, per_worker), range(workers)))
    for p in processes:
        p.join(timeout=60)
        assert p.exitcode == 0
    orders = book.orders()
    assert len(orders) == 2 * workers * per_worker
    assert len({o.note for o in orders}) == len(orders)
    spent = sum(o.price for o in orders)
    cash, positions = book.positions()
    assert cash == pytest.approx(1_000_000 - spent)
    assert positions[0].quantity == len(orders)


def test_concurrent_buys_never_spend_the_same_cash_twice(tmp_path: Path) -> None:
    book = PaperPortfolio(tmp_path / "p.sqlite")
    book.reset(cash=1_000)

    def buy(_: int) -> bool:
        try:
            book.place(_order(AAPL, "buy", 1, 100.0))
        except OrderRejected:
            return False
        return True

    with ThreadPoolExecutor(max_workers=8) as pool:
        filled = sum(pool.map(buy, range(20)))
    assert filled == 10
    assert book.positions()[0] == pytest.approx(0.0)
