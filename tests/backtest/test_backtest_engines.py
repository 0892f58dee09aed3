"""The fast path against Backtrader itself: same fills, same round trips, same value.

Every baseline on several bundled symbols, with percentage and per-share commissions,
slippage, long/flat and long/short, fractional, all-in and fixed-share sizing. All-in
sizing with costs makes Backtrader refuse orders for want of cash, so those cases also
pin the refusal rules.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from alphadesk.backtest import (
    STRATEGIES,
    BacktestConfig,
    BacktestResult,
    Costs,
    Sizing,
    run_positions,
    run_strategy,
)
from alphadesk.backtest.reference import run_backtrader

CASES = {
    "AAPL long/flat, no costs": ("AAPL", "2004-01-01", "2007-12-31", BacktestConfig()),
    "NVDA long/short, 0.1% + slippage": (
        "NVDA",
        "2012-01-01",
        "2015-12-31",
        BacktestConfig(costs=Costs(0.001, slippage=0.0005), long_short=True),
    ),
    "MSFT long/short, per share, 50 shares": (
        "MSFT",
        "2005-01-01",
        "2008-12-31",
        BacktestConfig(
            cash=10_000,
            costs=Costs(0.005, "per_share", slippage=0.001),
            sizing=Sizing("shares", shares=50),
            long_short=True,
        ),
    ),
    "AMZN all-in, 0.2% + slippage (refusals)": (
        "AMZN",
        "2011-01-01",
        "2014-12-31",
        BacktestConfig(costs=Costs(0.002, slippage=0.001), sizing=Sizing.all_in()),
    ),
}


def _fills(result: BacktestResult) -> list[tuple[object, ...]]:
    return [(f.time, f.size, f.price, f.commission, f.slippage) for f in result.fills]


def assert_same(fast: BacktestResult, reference: BacktestResult) -> None:
    assert fast.engine == "fast" and reference.engine == "backtrader"
    assert _fills(fast) == _fills(reference)
    assert fast.trades == reference.trades  # dates, sizes, prices, P&L, commissions
    assert abs(fast.final_value - reference.final_value) < 0.005  # to the cent
    assert fast.final_value == reference.final_value  # in fact to the last bit
    pd.testing.assert_series_equal(fast.equity, reference.equity, check_exact=True)
    pd.testing.assert_series_equal(fast.position, reference.position, check_exact=True)
    assert fast.rejected == reference.rejected


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_fast_path_matches_backtrader(bars, case: str, strategy: str) -> None:
    symbol, first, last, config = CASES[case]
    frame = bars(symbol, first, last)
    fast = run_strategy(strategy, frame, config=config)
    reference = run_strategy(strategy, frame, config=config, engine="backtrader")
    assert_same(fast, reference)
    assert fast.fills, "every case trades at least once"
    if strategy != "buy_hold":
        assert len(fast.closed_trades) >= 2


def test_refusals_happen_and_match(bars) -> None:
    """All-in with commission: Backtrader refuses buys the cash cannot cover."""
    symbol, first, last, config = CASES["AMZN all-in, 0.2% + slippage (refusals)"]
    result = run_strategy("sma_cross", bars(symbol, first, last), config=config)
    assert result.rejected > 0


def test_reversals_are_one_fill(bars) -> None:
    symbol, first, last, config = CASES["NVDA long/short, 0.1% + slippage"]
    result = run_strategy("macd", bars(symbol, first, last), config=config)
    sizes = result.position.to_numpy()
    flips = np.flatnonzero(sizes[1:] * sizes[:-1] < 0)
    assert flips.size > 0
    assert any(abs(f.size) > abs(result.trades[0].size) for f in result.fills)


def test_fills_at_next_open_with_costs(bars) -> None:
    """The first buy of buy & hold: ordered at bar 0's close, filled at bar 1's open."""
    frame = bars("AAPL", "2004-01-01", "2004-12-31")
    config = BacktestConfig(cash=50_000, costs=Costs(0.001, slippage=0.002))
    fill = run_strategy("buy_hold", frame, config=config).fills[0]
    open_, high = frame["open"].iloc[1], frame["high"].iloc[1]
    price = min(open_ * 1.002, high)
    assert fill.time == frame.index[1]
    assert fill.price == pytest.approx(price, rel=1e-12)
    assert fill.size == int(0.95 * 50_000 // frame["close"].iloc[0])
    assert fill.commission == pytest.approx(fill.size * price * 0.001, rel=1e-12)


def test_arbitrary_target_series_by_date(bars) -> None:
    """Decisions by date (as a desk makes them) hold until the next; both engines agree."""
    frame = bars("NVDA", "2016-01-01", "2018-12-31")
    days = frame.index[[5, 60, 61, 200, 310, 450, 600]]
    decisions = pd.Series([1, 0, -1, 1, -1, 0, 1], index=days)
    config = BacktestConfig(costs=Costs(0.0005, slippage=0.0002), long_short=True)
    fast = run_positions(frame, decisions, config)
    assert_same(fast, run_backtrader(frame, decisions, config))
    assert [f.time for f in fast.fills] == list(frame.index[[6, 61, 62, 201, 311, 451, 601]])
    assert (fast.position.iloc[:6] == 0).all()


def test_target_outside_minus_one_to_one_is_refused(bars) -> None:
    frame = bars("AAPL", "2004-01-01", "2004-03-31")
    with pytest.raises(ValueError, match="-1, 0 or 1"):
        run_positions(frame, np.full(len(frame), 2.0))


def test_decisions_between_bars_apply_from_the_next_close(bars) -> None:
    frame = bars("AAPL", "2005-01-01", "2005-06-30")
    noon = frame.index[10] - pd.Timedelta(hours=4)  # during bar 10's session
    fast = run_positions(frame, pd.Series([1], index=[noon]))
    assert fast.fills[0].time == frame.index[11]  # decided by bar 10's close, filled next open
    with pytest.raises(ValueError, match="time zone"):
        run_positions(frame, pd.Series([1], index=[noon.tz_localize(None)]))
