"""Bars made ready to trade: split adjustment within the window, close-only series."""

from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np
import pandas as pd
import pytest

from alphadesk.backtest import BacktestDataError, frame_from_bars, run_strategy
from alphadesk.backtest.frame import validate_frame
from alphadesk.data.providers.bundled import BundledProvider


def _bars(symbol: str, first: date, last: date):
    end = datetime.combine(last, datetime.max.time(), tzinfo=UTC)
    return BundledProvider().daily_bars(symbol, end).since(first)


def test_the_aapl_split_of_2005_is_not_a_crash() -> None:
    """AAPL split 2:1 on 28 Feb 2005: the as-traded close halves, the served bars do not."""
    from alphadesk.data.providers.bundled import BUNDLED_DIR

    day = pd.Timestamp("2005-02-28 16:00", tz="America/New_York")
    stored = pd.read_parquet(BUNDLED_DIR / "bars" / "AAPL.parquet")["close"]
    before = stored.index[stored.index.get_loc(day) - 1]
    assert stored[day] / stored[before] - 1 < -0.45
    served = _bars("AAPL", date(2005, 2, 1), date(2005, 3, 31))
    assert "2:1 on 2005-02-28" in served.basis
    frame, notes = frame_from_bars(served)
    assert abs(frame["close"][day] / frame["close"][before] - 1) < 0.05
    # The last bar keeps the prices that traded; the high-low range keeps its shape.
    assert frame["close"].iloc[-1] == stored.loc[: frame.index[-1]].iloc[-1]
    ratio = frame["high"] / frame["low"]
    np.testing.assert_allclose(ratio, served.frame["high"] / served.frame["low"], rtol=1e-12)
    assert not any("adjusted" in n for n in notes)  # no dividend then: nothing left to do


def test_dividends_in_the_window_are_adjusted_to_the_last_close() -> None:
    """AAPL paid its first dividends in 2012: the window's closes are scaled by them."""
    bars = _bars("AAPL", date(2012, 6, 1), date(2013, 3, 1))
    frame, notes = frame_from_bars(bars)
    assert any("adjusted" in n for n in notes)
    assert frame["close"].iloc[-1] == pytest.approx(bars.frame["close"].iloc[-1], rel=1e-12)
    assert (frame["close"].iloc[:10] < bars.frame["close"].iloc[:10]).all()
    assert not any("adjusted" in n for n in frame_from_bars(bars, adjust=False)[1])


def test_close_only_series_fill_at_the_next_close() -> None:
    frame, notes = frame_from_bars(_bars("KO", date(2010, 1, 1), date(2012, 12, 31)))
    assert (frame["open"] == frame["close"]).all() and (frame["high"] == frame["low"]).all()
    assert any("close-only" in n for n in notes)
    result = run_strategy("sma_cross", frame)
    fill = result.fills[0]
    assert fill.price == frame["close"][fill.time]


def test_unusable_frames_are_refused_with_a_reason() -> None:
    index = pd.date_range("2024-01-01", periods=3, freq="B", tz="UTC")
    good = pd.DataFrame({c: [1.0, 2.0, 3.0] for c in ("open", "high", "low", "close")}, index)
    assert "volume" in validate_frame(good).columns
    with pytest.raises(BacktestDataError, match="lack"):
        validate_frame(good.drop(columns="open"))
    with pytest.raises(BacktestDataError, match="at least 2"):
        validate_frame(good.iloc[:1])
    with pytest.raises(BacktestDataError, match="positive and finite"):
        validate_frame(good.assign(close=[1.0, np.nan, 3.0]))
    with pytest.raises(BacktestDataError, match="increasing"):
        validate_frame(good.iloc[::-1])
