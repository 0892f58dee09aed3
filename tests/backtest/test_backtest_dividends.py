"""Dividends as cash: a holder at the close before the ex-date is paid, a short pays."""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd
import pytest

from alphadesk.backtest import BacktestConfig, frame_from_bars, run_positions
from alphadesk.backtest.models import Costs, Sizing
from alphadesk.backtest.reference import run_backtrader
from alphadesk.data.actions import ActionTable, dividends_on_bars
from alphadesk.data.calendar import end_of_day
from alphadesk.data.providers.bundled import BUNDLED_DIR, BundledProvider

AS_OF = end_of_day(date(2025, 5, 15))
EX_DATE = date(2025, 4, 4)  # JPM: $1.40 declared 2025-03-18 (Polygon record)


def _jpm(with_dividends: bool) -> pd.DataFrame:
    bars = BundledProvider().daily_bars("JPM", AS_OF, start=date(2025, 3, 3))
    table = ActionTable.read(BUNDLED_DIR / "actions.csv")
    cash = dividends_on_bars(bars.frame.index, table.dividends("JPM"), [], AS_OF)
    frame, _ = frame_from_bars(bars, adjust=False, dividends=cash if with_dividends else None)
    return frame


@pytest.mark.parametrize("side", [1, -1])
@pytest.mark.parametrize("engine", [run_positions, run_backtrader])
def test_a_held_position_is_paid_shares_times_amount_on_the_ex_date(engine, side) -> None:
    config = BacktestConfig(
        cash=100_000.0,
        costs=Costs(),
        sizing=Sizing(kind="shares", shares=100),
        long_short=True,
    )
    frame = _jpm(with_dividends=True)
    assert frame["dividend"].sum() == 1.4  # one ex-date in the window
    ex = int(np.flatnonzero(frame.index.date == EX_DATE)[0])
    target = np.zeros(len(frame))
    target[: ex + 5] = side  # held from the first close across the ex-date
    paid = engine(frame, target, config)
    plain = engine(_jpm(with_dividends=False), target, config)
    gap = paid.equity - plain.equity
    assert (gap.iloc[:ex] == 0).all()
    assert gap.iloc[ex] == pytest.approx(side * 100 * 1.40, abs=1e-9)
    assert gap.iloc[-1] == pytest.approx(side * 100 * 1.40, abs=1e-9)


def test_the_engines_agree_with_dividends_to_the_cent() -> None:
    frame = _jpm(with_dividends=True)
    rng = np.random.default_rng(7)
    target = rng.choice([-1, 0, 1], size=len(frame))
    config = BacktestConfig(long_short=True)
    fast, reference = run_positions(frame, target, config), run_backtrader(frame, target, config)
    assert np.allclose(fast.equity.to_numpy(), reference.equity.to_numpy(), rtol=0, atol=0.005)


def test_dividends_need_as_traded_prices() -> None:
    bars = BundledProvider().daily_bars("JPM", AS_OF, start=date(2025, 3, 3))
    with pytest.raises(ValueError, match="adjust=False"):
        frame_from_bars(bars, dividends=pd.Series(0.0, index=bars.frame.index))


def test_an_undeclared_dividend_is_not_paid() -> None:
    bars = BundledProvider().daily_bars("JPM", AS_OF, start=date(2025, 3, 3))
    table = ActionTable.read(BUNDLED_DIR / "actions.csv")
    before = end_of_day(date(2025, 3, 17))  # declared the next day
    cash = dividends_on_bars(bars.frame.index, table.dividends("JPM"), [], before)
    assert cash.sum() == 0.0
