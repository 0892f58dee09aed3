"""The evaluation trades a dividend payer as traded and credits its dividends as cash on
the ex-date to the position held; a symbol without dividend records is priced as before.
JPM's record: $1.40 ex 2025-04-04 (bundled Polygon data); its close that day, 210.28."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest

from alphadesk.backtest import frame_from_bars
from alphadesk.backtest.fast import run_positions
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close
from alphadesk.pipelines.evaluation.evaluate import _priced

MARKET = build_provider(Settings())
END = session_close(date(2025, 4, 30))


def test_a_dividend_payer_trades_as_traded_with_its_dividend_in_cash() -> None:
    bars = MARKET.daily_bars("JPM", END)
    frame, basis = _priced(MARKET, bars, END)
    ex = frame.loc[frame.index.date == date(2025, 4, 4)].iloc[0]
    assert (ex["close"], ex["dividend"]) == (210.28, pytest.approx(1.40))
    assert "credited as cash" in basis and "bundled dividend records" in basis
    window = frame.loc[frame.index >= pd.Timestamp("2025-04-01", tz=frame.index.tz)]
    long = pd.Series(1.0, index=window.index)
    credited = run_positions(window, long)
    without = run_positions(window.drop(columns="dividend"), long)
    shares = credited.position.loc[credited.position.index.date == date(2025, 4, 3)].iloc[0]
    assert shares > 0
    gained = credited.final_value - without.final_value
    assert gained == pytest.approx(shares * 1.40)


def test_a_symbol_without_dividend_records_is_priced_as_before() -> None:
    bars = MARKET.daily_bars("AMZN", END)
    frame, basis = _priced(MARKET, bars, END)
    before, _ = frame_from_bars(bars)
    pd.testing.assert_frame_equal(frame, before)
    assert "no dividend records for AMZN" in basis
