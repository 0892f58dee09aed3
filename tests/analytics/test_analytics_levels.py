"""Swing points, Fibonacci, support/resistance, trendlines and trend on series with known
answers."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alphadesk.analytics.errors import InsufficientData, InvalidInput
from alphadesk.analytics.indicators import atr
from alphadesk.analytics.levels import (
    confluence_zones,
    extension_from_support,
    support_resistance,
)
from alphadesk.analytics.swings import (
    fibonacci_from_bars,
    fibonacci_levels,
    swing_points,
    zigzag,
)
from alphadesk.analytics.trend import trend_assessment, trendline

PathBuilder = Callable[..., pd.DataFrame]
RANGE = [
    (0, 100),
    (10, 110),
    (20, 100),
    (30, 110),
    (40, 100),
    (50, 110),
    (60, 100),
    (70, 110),
    (80, 100),
    (85, 105),
]


def test_swing_points_find_a_known_structure(path: PathBuilder) -> None:
    bars = path([(0, 100), (10, 110), (20, 100), (30, 115), (40, 95), (50, 105)])
    sw = swing_points(bars, lookback=5)
    assert [(p.index, p.price) for p in sw.highs] == [(10, 110.3), (30, 115.3)]
    assert [(p.index, p.price) for p in sw.lows] == [(20, 99.7), (40, 94.7)]
    assert sw.highs[0].date == bars.index[10] and sw.source == "high_low"
    assert [p.kind for p in zigzag(sw)] == ["high", "low", "high", "low"]


@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(st.integers(-3, 3), min_size=0, max_size=40),
    lookback=st.integers(1, 6),
)
def test_swing_points_are_the_bars_dominating_their_neighbours(
    steps: list[int], lookback: int
) -> None:
    """Against the definition, bar by bar: a swing high beats the ``lookback`` highs
    before it strictly and is not exceeded by the ``lookback`` after it (plateaus and
    short series included)."""
    closes = 100.0 + np.cumsum(steps, dtype=float)
    index = pd.date_range("2024-01-02", periods=len(closes), freq="B", tz="America/New_York")
    bars = pd.DataFrame({"high": closes + 1, "low": closes - 1, "close": closes}, index=index)
    if len(bars) < 2 * lookback + 1:
        with pytest.raises(InsufficientData):
            swing_points(bars, lookback=lookback)
        return
    sw = swing_points(bars, lookback=lookback)
    for kind, sign, found in (("high", 1, sw.highs), ("low", -1, sw.lows)):
        v = sign * bars[kind].to_numpy()
        expected = [
            i
            for i in range(lookback, len(v) - lookback)
            if v[i] > max(v[i - lookback : i]) and v[i] >= max(v[i + 1 : i + 1 + lookback])
        ]
        assert [p.index for p in found] == expected
        assert [p.price for p in found] == [bars[kind].iloc[i] for i in expected]


def test_swing_points_on_a_close_only_series_say_so(path: PathBuilder) -> None:
    bars = path([(0, 100), (10, 110), (20, 100), (30, 115)])[["close"]]
    sw = swing_points(bars, lookback=5)
    assert sw.source == "close"
    assert [(p.index, p.price) for p in sw.highs] == [(10, 110.0)]


def test_zigzag_keeps_the_extreme_of_consecutive_swings(path: PathBuilder) -> None:
    # Two highs in a row (108 then 112) with a shallow dip that is not a 3-bar swing low.
    bars = path([(0, 100), (8, 108), (10, 107.5), (16, 112), (26, 100), (34, 104)])
    sw = swing_points(bars, lookback=3)
    highs = [p.price for p in zigzag(sw) if p.kind == "high"]
    assert highs == [112.3]


def test_fibonacci_levels_up_and_down() -> None:
    up = fibonacci_levels(200.0, 100.0, "up")
    assert [lv.price for lv in up.retracements] == pytest.approx(
        [200, 176.4, 161.8, 150, 138.2, 121.4, 100]
    )
    assert [lv.label for lv in up.retracements][:3] == ["0%", "23.6%", "38.2%"]
    assert [lv.price for lv in up.extensions] == pytest.approx([227.2, 241.4, 261.8, 300, 361.8])
    down = fibonacci_levels(200.0, 100.0, "down")
    assert down.retracements[4].price == pytest.approx(161.8)
    assert down.extensions[0].price == pytest.approx(72.8)
    # extensions that would fall to or below zero are left out
    assert len(fibonacci_levels(200.0, 100.0, "down").extensions) == 3
    with pytest.raises(InvalidInput, match="above"):
        fibonacci_levels(100.0, 100.0, "up")
    with pytest.raises(InvalidInput, match="direction"):
        fibonacci_levels(110.0, 100.0, "sideways")  # type: ignore[arg-type]


@settings(max_examples=80, deadline=None)
@given(
    low=st.floats(0.01, 1e5), span=st.floats(1e-3, 10.0), direction=st.sampled_from(["up", "down"])
)
def test_fibonacci_levels_are_monotone(low: float, span: float, direction: str) -> None:
    high = low * (1 + span)
    fib = fibonacci_levels(high, low, direction)  # type: ignore[arg-type]
    retr = np.array([lv.price for lv in fib.retracements])
    ext = np.array([lv.price for lv in fib.extensions])
    sign = -1 if direction == "up" else 1  # up: retracements fall from the high
    assert np.all(sign * np.diff(retr) > 0)
    assert retr.min() == pytest.approx(low) and retr.max() == pytest.approx(high)
    if ext.size:
        assert np.all(-sign * np.diff(ext) > 0)
        assert (ext.min() > high) if direction == "up" else (ext.max() < low)
        assert np.all(ext > 0)


def test_fibonacci_from_bars_measures_the_biggest_swing(path: PathBuilder) -> None:
    bars = path([(0, 120), (15, 90), (40, 150), (55, 130)])
    fib = fibonacci_from_bars(bars)
    assert (fib.swing_low, fib.swing_high, fib.direction) == (89.7, 150.3, "up")
    assert (fib.low_date, fib.high_date) == (bars.index[15], bars.index[40])
    assert fibonacci_from_bars(bars, window=20).direction == "down"


def test_flat_range_zones_count_their_touches(path: PathBuilder) -> None:
    sr = support_resistance(path(RANGE))
    assert sr.current_price == 105.0
    (support,), (resistance,) = sr.support, sr.resistance
    assert support.price == pytest.approx(99.7) and support.touches == 4
    assert resistance.price == pytest.approx(110.3) and resistance.touches == 4
    assert support.label == resistance.label == "strong"
    assert support.low <= support.price <= support.high
    assert 0 <= support.strength <= 1
    assert support.bars_since_touch == 5 and support.last_touch == path(RANGE).index[80]


def test_support_resistance_on_a_flat_series_is_empty() -> None:
    index = pd.bdate_range("2024-01-01", periods=60, tz="UTC")
    flat = pd.DataFrame({c: 20.0 for c in ("open", "high", "low", "close")}, index=index)
    sr = support_resistance(flat)
    assert sr.support == () and sr.resistance == () and sr.atr == 0.0


def test_support_trendline_through_rising_lows(path: PathBuilder) -> None:
    bars = path(
        [
            (0, 100),
            (10, 110),
            (20, 104),
            (30, 114),
            (40, 108),
            (50, 118),
            (60, 112),
            (70, 122),
            (80, 116),
            (88, 121),
        ]
    )
    line = trendline(bars, "support", lookback=5)
    assert line.slope == pytest.approx(0.2)  # the lows rise 4 every 20 bars
    assert line.r2 == pytest.approx(1.0) and line.touches == line.pivots == 4
    assert line.value_now == pytest.approx(103.7 + 0.2 * (88 - 20))
    assert not line.broken
    res = trendline(bars, "resistance", lookback=5)
    assert res.slope == pytest.approx(0.2) and res.r2 == pytest.approx(1.0)


def test_trendline_needs_two_swings(path: PathBuilder) -> None:
    bars = path([(0, 100), (30, 130)])
    with pytest.raises(InsufficientData, match="swing lows"):
        trendline(bars, "support")


def test_trend_assessment(path: PathBuilder) -> None:
    up = trend_assessment(path([(0, 50), (250, 150)], noise=0.3))
    assert (up.direction, up.quality) == ("up", "strong")
    assert up.sma_slow is not None and up.adx is not None and up.score > 0.9
    down = trend_assessment(path([(0, 150), (120, 80)], noise=0.3))
    assert down.direction == "down" and down.sma_slow is None
    assert "sma_200" not in down.basis
    side = trend_assessment(path(RANGE))
    assert side.direction == "sideways"
    close_only = trend_assessment(path([(0, 50), (250, 150)])[["close"]])
    assert close_only.adx is None and close_only.direction == "up"
    with pytest.raises(InsufficientData):
        trend_assessment(path([(0, 50), (40, 60)]))


def test_extension_from_support(path: PathBuilder) -> None:
    bars = path([(0, 100), (40, 140)])
    atr_now = atr(bars).iloc[-1]
    ext = extension_from_support(bars, support=130.0)
    assert ext.atr_multiple == pytest.approx((140 - 130) / atr_now)
    assert ext.support_source == "given"
    assert ext.risk == "high"
    assert extension_from_support(path(RANGE)).support_source == "zone"
    assert extension_from_support(bars).support_source == "recent_low"


def test_confluence_of_support_and_the_swing_low(path: PathBuilder) -> None:
    zones = confluence_zones(path(RANGE))
    support = [z for z in zones if "support" in z.sources]
    assert support and "fib_100%" in support[0].sources
    assert support[0].kind == "support" and set(support[0].families) >= {"fib", "sr"}


def _check_levels_inside(bars: pd.DataFrame) -> None:
    low = bars["low" if "low" in bars else "close"].min()
    high = bars["high" if "high" in bars else "close"].max()
    sr = support_resistance(bars)
    for z in (*sr.support, *sr.resistance):
        assert low <= z.price <= high and math.isfinite(z.strength)
    assert all(z.price < sr.current_price for z in sr.support)
    fib = fibonacci_from_bars(bars)
    assert all(low <= lv.price <= high for lv in fib.retracements)
    for zone in confluence_zones(bars):
        assert math.isfinite(zone.price)
    trend = trend_assessment(bars)
    assert trend.direction in ("up", "down", "sideways") and math.isfinite(trend.score)
    for kind in ("support", "resistance"):
        line = trendline(bars, kind)
        assert math.isfinite(line.value_now) and 0 <= line.r2 <= 1


def test_levels_on_real_data_lie_in_the_traded_range(
    real_daily: dict[str, pd.DataFrame],
    real_close_only: dict[str, pd.DataFrame],
) -> None:
    for bars in (*real_daily.values(), *real_close_only.values()):
        for end in (260, len(bars) // 2, len(bars)):
            _check_levels_inside(bars.iloc[max(end - 126, 0) : end])
    assert support_resistance(real_close_only["JNJ"].iloc[-250:]).source == "close"
