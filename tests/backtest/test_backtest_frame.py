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
    """AAPL split 2:1 on 28 Feb 2005: the raw close halves, the adjusted one does not."""
    raw = _bars("AAPL", date(2005, 2, 1), date(2005, 3, 31))
    frame, notes = frame_from_bars(raw)
    day = pd.Timestamp("2005-02-28 16:00", tz="America/New_York")
    before = frame.index[frame.index.get_loc(day) - 1]
    raw_drop = raw.frame["close"][day] / raw.frame["close"][before] - 1
    adjusted_drop = frame["close"][day] / frame["close"][before] - 1
    assert raw_drop < -0.45
    assert abs(adjusted_drop) < 0.05
    # The last bar keeps the source's prices; the high-low range keeps its shape.
    assert frame["close"].iloc[-1] == pytest.approx(raw.frame["close"].iloc[-1], rel=1e-12)
    ratio = frame["high"] / frame["low"]
    np.testing.assert_allclose(ratio, raw.frame["high"] / raw.frame["low"], rtol=1e-12)
    assert any("adjusted" in n for n in notes)
    assert not any("adjusted" in n for n in frame_from_bars(raw, adjust=False)[1])


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
