"""Random order sequences, placed out of trade-date order: the account never has less cash
than its open short puts need, never sells shares it lacks, and a valuation at any instant
equals a replay (written here, independently) of only the orders traded up to it."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alphadesk.portfolio import Contract, OrderRejected, OrderRequest, PaperPortfolio

pytestmark = pytest.mark.slow

START = date(2021, 1, 4)
CASH = 20_000.0
CONTRACTS = [  # options expire on sessions (Fridays)
    Contract(symbol="KO"),
    Contract(symbol="JPM"),
    Contract(symbol="KO", right="put", strike=50, expiration=START + timedelta(days=18)),
    Contract(symbol="JPM", right="put", strike=140, expiration=START + timedelta(days=45)),
    Contract(symbol="JPM", right="call", strike=160, expiration=START + timedelta(days=45)),
]
NEW_YORK = ZoneInfo("America/New_York")


def _instant(day: int, hour: int) -> datetime:
    return datetime.combine(START + timedelta(days=day), time(hour), NEW_YORK)


orders = st.builds(
    OrderRequest,
    contract=st.sampled_from(CONTRACTS),
    side=st.sampled_from(["buy", "sell"]),
    quantity=st.integers(1, 60).map(float),
    price=st.sampled_from([0.5, 1.25, 3.0, 45.0, 52.5, 140.0]),
    fees=st.sampled_from([0.0, 1.0]),
    as_of=st.builds(_instant, st.integers(0, 60), st.sampled_from([10, 16])),
)


@dataclass
class _Replay:
    """The account from first principles: cash, signed quantity per contract."""

    cash: float
    held: dict[Contract, float]

    def collateral(self, at: datetime) -> float:
        return sum(
            -qty * c.strike * 100
            for c, qty in self.held.items()
            if c.right == "put" and qty < 0 and c.strike and c.expiration
            if at < datetime.combine(c.expiration, time(16), NEW_YORK)
        )


def _replay(placed: list[OrderRequest], at: datetime) -> _Replay:
    state = _Replay(cash=CASH, held={})
    for order in placed:
        if order.as_of is not None and order.as_of <= at:
            sign = 1 if order.side == "buy" else -1
            mult = 100 if order.contract.right else 1
            state.cash -= sign * order.quantity * order.price * mult + order.fees
            state.held[order.contract] = state.held.get(order.contract, 0.0) + sign * order.quantity
    return state


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequence=st.lists(orders, min_size=1, max_size=14), marks=st.lists(st.floats(0.1, 200)))
def test_random_orders_keep_the_account_secured_and_point_in_time(
    sequence: list[OrderRequest], marks: list[float]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        book = PaperPortfolio(Path(folder) / "p.sqlite")
        book.open_account("prop", cash=CASH)
        accepted: list[OrderRequest] = []
        for order in sequence:
            try:
                book.place(order, account="prop")
            except OrderRejected:
                continue
            accepted.append(order)
        stored = book.orders("prop")
        assert len(stored) == len(accepted)
        assert [o.as_of for o in stored] == sorted(o.as_of for o in accepted if o.as_of)

        price = {c.key: marks[i % len(marks)] if marks else None for i, c in enumerate(CONTRACTS)}
        instants = {o.as_of for o in accepted if o.as_of} | {
            _instant(day, 17) for day in range(-1, 62, 7)
        }
        for at in sorted(instants):
            state = _replay(accepted, at)
            assert state.cash >= state.collateral(at) - 1e-6, at
            assert all(q >= -1e-9 for c, q in state.held.items() if not c.right), at
            value = book.value(price, account="prop", as_of=at)
            assert value.cash == pytest.approx(state.cash)
            assert value.collateral == pytest.approx(state.collateral(at))
            held = {p.contract: p.quantity for p in value.positions}
            assert held == {c: q for c, q in state.held.items() if abs(q) > 1e-9}
            worth = sum(
                q * (price[c.key] if price[c.key] is not None else 0) * (100 if c.right else 1)
                for c, q in state.held.items()
            )
            if marks:
                assert value.account_value == pytest.approx(state.cash + worth)
            assert value.orders == sum(1 for o in accepted if o.as_of and o.as_of <= at)
