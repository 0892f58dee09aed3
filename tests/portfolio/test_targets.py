"""Target weights to orders: a hand-computed rebalance, the checker's words, and, over
random targets, holdings, cash and prices, order sets that never spend cash the book does
not have (costs included), never buy a name above the cap, never trade more than the
turnover cap and never sell short; each checked by replaying the orders here."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alphadesk.portfolio import OrderRequest
from alphadesk.portfolio.targets import (
    BookLimits,
    TargetWeight,
    check_targets,
    nav_of,
    orders_for_targets,
)

SYMBOLS = ["AAPL", "JPM", "PG", "KO", "XOM"]


def _replay(
    orders: list[OrderRequest], holdings: dict[str, float], cash: float
) -> tuple[dict[str, float], list[float]]:
    """Shares after the orders, and the cash after each one (fees included)."""
    shares, balances = dict(holdings), []
    for order in orders:
        signed = order.quantity if order.side == "buy" else -order.quantity
        shares[order.contract.symbol] = shares.get(order.contract.symbol, 0.0) + signed
        cash -= signed * order.price + order.fees
        balances.append(cash)
    return shares, balances


def test_an_empty_book_buys_each_target_in_whole_shares_within_the_cash() -> None:
    limits = BookLimits(max_weight=0.4, cost_bps=10)
    prices = {"AAPL": 211.45, "JPM": 264.30}
    targets = [
        TargetWeight(symbol="AAPL", weight=0.4, reason="desk BUY"),
        TargetWeight(symbol="JPM", weight=0.3, reason="desk BUY"),
    ]
    orders = orders_for_targets(targets, {}, 100_000.0, prices, limits, source="test")
    # 40,000 / 211.45 = 189.17 -> 189; 30,000 / 264.30 = 113.51 -> 113
    assert [(o.side, o.contract.symbol, o.quantity) for o in orders] == [
        ("buy", "AAPL", 189.0),
        ("buy", "JPM", 113.0),
    ]
    assert orders[0].fees == pytest.approx(189 * 211.45 * 0.001)
    assert orders[0].note == "desk BUY" and orders[0].source == "test"
    assert check_targets(targets, {}, 100_000.0, prices, limits) == []


def test_sales_come_first_and_pay_for_the_buys() -> None:
    limits = BookLimits(max_weight=1.0, min_trade=0, max_turnover=2.0)
    prices = {"AAPL": 100.0, "JPM": 50.0}
    orders = orders_for_targets({"AAPL": 0.0, "JPM": 1.0}, {"AAPL": 100.0}, 0.0, prices, limits)
    # The sale leaves $9,999 after its 1 bp; 200 JPM would need $10,001 with theirs.
    assert [(o.side, o.contract.symbol, o.quantity) for o in orders] == [
        ("sell", "AAPL", 100.0),
        ("buy", "JPM", 199.0),
    ]
    _, balances = _replay(orders, {"AAPL": 100.0}, 0.0)
    assert min(balances) >= 0


def test_the_checker_says_what_breaks_which_limit_and_how_to_fix_it() -> None:
    limits = BookLimits(max_weight=0.25, max_turnover=0.6, min_trade=500)
    prices = {"AAPL": 200.0, "JPM": 250.0, "PG": 160.0}
    holdings = {"PG": 100.0}  # $16,000 of a $100,000 book: 0.16
    targets = [
        TargetWeight(symbol="AAPL", weight=0.40, reason="x"),
        TargetWeight(symbol="JPM", weight=-0.1, reason="x"),
        TargetWeight(symbol="PG", weight=0.162, reason="x"),
        TargetWeight(symbol="NVDA", weight=0.1, reason="x"),
    ]
    assert check_targets(targets, holdings, 84_000.0, prices, limits) == [
        "no price for NVDA: name only these symbols: AAPL, JPM, PG"
    ]
    problems = check_targets(targets[:3], holdings, 84_000.0, prices, limits)
    assert problems[0].startswith("AAPL: weight 0.4000 is above the cap of 0.2500 per name")
    assert "JPM: weight -0.1000 is a short sale" in problems[1]
    assert problems[2].startswith("PG: moving from 0.1600 to 0.1620 trades $200.00, below")
    assert len(problems) == 3
    big = {"AAPL": 0.25, "JPM": 0.25, "PG": 0.0}
    (turnover,) = check_targets(big, holdings, 84_000.0, prices, limits)
    assert "trades $66,000.00, 66.0% of the NAV" in turnover and "turnover cap of 60%" in turnover


def test_the_checker_counts_costs_against_the_cash() -> None:
    limits = BookLimits(max_weight=1.0, cost_bps=10)
    (problem,) = check_targets({"AAPL": 1.0}, {}, 10_000.0, {"AAPL": 100.0}, limits)
    assert "costs of $10.00 included" in problem and "cash after would be -$10.00" in problem
    assert check_targets({"AAPL": 0.99}, {}, 10_000.0, {"AAPL": 100.0}, limits) == []


def test_a_book_worth_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="worth"):
        orders_for_targets({"AAPL": 0.1}, {}, 0.0, {"AAPL": 1.0}, BookLimits())


limits_st = st.builds(
    BookLimits,
    max_weight=st.floats(0.05, 1.0),
    allow_short=st.booleans(),
    max_gross=st.floats(0.5, 2.0),
    min_trade=st.floats(0, 5_000),
    max_turnover=st.floats(0.05, 2.0),
    cost_bps=st.floats(0, 100),
    fractional=st.booleans(),
)
weights_st = st.dictionaries(st.sampled_from(SYMBOLS), st.floats(-1.0, 1.0), max_size=5)
holdings_st = st.dictionaries(st.sampled_from(SYMBOLS), st.integers(0, 2_000).map(float))
prices_st = st.fixed_dictionaries({s: st.floats(1.0, 2_000.0) for s in SYMBOLS})


@settings(max_examples=400, deadline=None)
@given(weights_st, holdings_st, st.floats(0, 1_000_000), prices_st, limits_st)
def test_no_order_set_exceeds_the_cash_the_cap_or_the_turnover(
    weights: dict[str, float],
    holdings: dict[str, float],
    cash: float,
    prices: dict[str, float],
    limits: BookLimits,
) -> None:
    nav = nav_of(cash, holdings, prices)
    if nav <= 1.0:
        return
    orders = orders_for_targets(weights, holdings, cash, prices, limits)
    shares, balances = _replay(orders, holdings, cash)
    floor = limits.cash_floor(nav)
    assert all(b >= floor - 1e-6 for b in balances), (balances, floor)
    traded = sum(o.quantity * o.price for o in orders)
    assert traded <= limits.max_turnover * nav + 1e-6
    for order in orders:
        symbol = order.contract.symbol
        assert order.fees == pytest.approx(order.quantity * order.price * limits.cost_rate)
        assert (
            abs(shares[symbol]) * prices[symbol] / nav
            <= max(limits.max_weight, abs(holdings.get(symbol, 0.0)) * prices[symbol] / nav) + 1e-9
        ), "an order took a name above the cap"
        if order.side == "buy" and holdings.get(symbol, 0.0) >= 0:
            assert shares[symbol] * prices[symbol] / nav <= limits.max_weight + 1e-9
        if not limits.allow_short:
            assert shares[symbol] >= -1e-9, "sold short"
        closes = abs(shares[symbol]) < 1e-9
        assert order.quantity * order.price >= limits.min_trade - 1e-6 or closes
    gross_before = sum(abs(q) * prices[s] for s, q in holdings.items()) / nav
    gross_after = sum(abs(q) * prices[s] for s, q in shares.items()) / nav
    assert gross_after <= max(limits.max_gross, gross_before) + 1e-9
    sides = [o.side for o in orders]
    assert sides == sorted(sides, key=lambda side: side == "buy"), "sales come first"
