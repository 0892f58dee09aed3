"""Chart patterns on constructed series whose answer is known, and on real bars."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
import talib

from alphadesk.analytics.patterns import (
    ChartPattern,
    _backfilled,
    detect_patterns,
    double_tops_bottoms,
    flags,
    head_and_shoulders,
    triangles_channels,
)

PathBuilder = Callable[..., pd.DataFrame]


def _only(patterns: list[ChartPattern], name: str) -> ChartPattern:
    found = [p for p in patterns if p.name == name]
    assert len(found) == 1, [p.name for p in patterns]
    return found[0]


def test_clean_double_bottom(path: PathBuilder) -> None:
    bars = path([(0, 120), (20, 100), (35, 112), (50, 100.5), (70, 125)])
    p = _only(double_tops_bottoms(bars), "double_bottom")
    assert p.direction == "bullish" and p.status == "confirmed"
    assert p.neckline == p.breakout_level == pytest.approx(112.3)
    depth = 112.3 - (99.7 + 100.2) / 2
    assert p.target == pytest.approx(112.3 + depth)
    assert p.invalidation == pytest.approx(99.7)
    assert [d for d, _ in p.points] == [bars.index[20], bars.index[35], bars.index[50]]
    assert p.confirmed_date is not None and p.confirmed_date > bars.index[50]
    assert bars["close"][p.confirmed_date] > p.neckline
    assert 0.6 < p.confidence <= 1


def test_double_bottom_still_forming(path: PathBuilder) -> None:
    bars = path([(0, 120), (20, 100), (35, 112), (50, 100.5), (58, 106)])
    p = _only(double_tops_bottoms(bars), "double_bottom")
    assert p.status == "forming" and p.confirmed_date is None
    confirmed = _only(
        double_tops_bottoms(path([(0, 120), (20, 100), (35, 112), (50, 100.5), (70, 125)])),
        "double_bottom",
    )
    assert p.confidence < confirmed.confidence


def test_double_top(path: PathBuilder) -> None:
    bars = path([(0, 80), (20, 100), (35, 88), (50, 99.6), (70, 75)])
    p = _only(double_tops_bottoms(bars), "double_top")
    assert p.direction == "bearish" and p.status == "confirmed"
    assert p.breakout_level == pytest.approx(87.7)
    assert p.target < p.breakout_level < p.invalidation == pytest.approx(100.3)


def test_unequal_lows_are_not_a_double_bottom(path: PathBuilder) -> None:
    bars = path([(0, 120), (20, 100), (35, 112), (50, 106), (70, 125)])
    assert not [p for p in double_tops_bottoms(bars) if p.name == "double_bottom"]


def test_head_and_shoulders(path: PathBuilder) -> None:
    bars = path(
        [(0, 80), (15, 100), (25, 92), (40, 110), (55, 92.5), (70, 100.5), (80, 95), (95, 80)]
    )
    p = _only(head_and_shoulders(bars), "head_and_shoulders")
    assert p.direction == "bearish" and p.status == "confirmed"
    neck_at_rs = 91.7 + (92.2 - 91.7) / 30 * 45  # the line through both troughs
    assert p.neckline == pytest.approx(neck_at_rs)
    head_height = 110.3 - (91.7 + (92.2 - 91.7) / 30 * 15)
    assert p.target == pytest.approx(p.breakout_level - head_height)
    assert p.invalidation == pytest.approx(100.8)  # the right shoulder
    assert [price for _, price in p.points] == pytest.approx([100.3, 91.7, 110.3, 92.2, 100.8])
    assert p.confidence > 0.8


def test_inverse_head_and_shoulders(path: PathBuilder) -> None:
    bars = path(
        [(0, 120), (15, 100), (25, 108), (40, 90), (55, 107.5), (70, 99.5), (80, 105), (95, 120)]
    )
    p = _only(head_and_shoulders(bars), "inverse_head_and_shoulders")
    assert p.direction == "bullish" and p.status == "confirmed"
    assert p.target > p.breakout_level > p.invalidation


def test_ascending_triangle(path: PathBuilder) -> None:
    bars = path(
        [
            (0, 90),
            (10, 110),
            (20, 95),
            (30, 110),
            (40, 100),
            (50, 110),
            (60, 104),
            (70, 110),
            (75, 107),
        ]
    )
    (p,) = triangles_channels(bars)
    assert (p.name, p.direction, p.status) == ("ascending_triangle", "bullish", "forming")
    assert p.breakout_level == pytest.approx(110.3)
    assert p.target > p.breakout_level > p.invalidation


def test_descending_triangle(path: PathBuilder) -> None:
    bars = path(
        [
            (0, 120),
            (10, 100),
            (20, 115),
            (30, 100),
            (40, 110),
            (50, 100),
            (60, 106),
            (70, 100),
            (75, 103),
        ]
    )
    (p,) = triangles_channels(bars)
    assert (p.name, p.direction) == ("descending_triangle", "bearish")
    assert p.breakout_level == pytest.approx(99.7)
    assert p.target < p.breakout_level < p.invalidation


def test_symmetric_triangle_takes_the_prior_direction(path: PathBuilder) -> None:
    bars = path([(0, 60), (30, 100), (40, 80), (50, 96), (60, 84), (70, 92), (80, 87), (85, 89)])
    (p,) = triangles_channels(bars)
    assert (p.name, p.direction) == ("symmetric_triangle", "bullish")


def test_channels(path: PathBuilder) -> None:
    flat = path(
        [
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
    )
    (p,) = triangles_channels(flat)
    assert p.name == "horizontal_channel"
    assert p.breakout_level == pytest.approx(110.3) and p.invalidation == pytest.approx(99.7)
    rising = path(
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
    (p,) = triangles_channels(rising)
    assert (p.name, p.direction) == ("ascending_channel", "bullish")


def test_bull_and_bear_flags(path: PathBuilder) -> None:
    bull = path([(0, 100), (30, 101), (40, 115), (52, 111), (53, 111.5)])
    (p,) = flags(bull)
    assert (p.name, p.direction) == ("bull_flag", "bullish")
    assert p.points[1] == (bull.index[40], pytest.approx(115.3))  # the pole's top
    assert p.target - p.breakout_level == pytest.approx(115.3 - p.points[0][1])
    bear = path([(0, 120), (30, 119), (40, 105), (52, 109), (53, 108.7)])
    (p,) = flags(bear)
    assert (p.name, p.direction) == ("bear_flag", "bearish")
    assert p.target < p.breakout_level < p.invalidation


def test_a_straight_line_has_no_pattern(path: PathBuilder) -> None:
    assert detect_patterns(path([(0, 100), (120, 160)])) == []


def test_patterns_on_real_data_are_well_formed(
    real_daily: dict[str, pd.DataFrame],
    real_close_only: dict[str, pd.DataFrame],
) -> None:
    names = set()
    for bars in (*real_daily.values(), *real_close_only.values()):
        window = bars.iloc[-750:]
        low = window["low" if "low" in window else "close"].min()
        high = window["high" if "high" in window else "close"].max()
        for p in detect_patterns(window):
            names.add(p.name)
            assert 0.0 <= p.confidence <= 1.0
            assert all(math.isfinite(x) for x in (p.breakout_level, p.target, p.invalidation))
            assert low <= p.breakout_level <= high or p.name.endswith(("channel", "triangle"))
            assert window.index[0] <= p.start_date <= p.end_date <= window.index[-1]
            sign = 1 if p.direction == "bullish" else -1
            if p.direction != "neutral":
                assert sign * (p.target - p.breakout_level) > 0
    assert {"double_top", "double_bottom"} <= names


@pytest.mark.parametrize(
    "values",
    [
        [math.nan, math.nan, 1.0, 2.0, math.nan, 3.0],
        [1.0, math.nan, math.nan],
        [math.nan, math.nan],
        [4.0, 5.0],
    ],
)
def test_backfilled_values_match_pandas_bfill(values: list[float]) -> None:
    expected = pd.Series(values).bfill().to_numpy()
    np.testing.assert_array_equal(_backfilled(np.array(values)), expected)


def test_backfilled_atr_matches_pandas_on_real_bars(real_daily: dict[str, pd.DataFrame]) -> None:
    bars = real_daily["AAPL"].iloc[-300:]
    atr = talib.ATR(*(bars[c].to_numpy() for c in ("high", "low", "close")), timeperiod=14)
    np.testing.assert_array_equal(_backfilled(atr), pd.Series(atr).bfill().to_numpy())
