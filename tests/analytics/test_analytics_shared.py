"""Intermediates shared by the computations over one frame: computed once inside
``shared_intermediates``, never served stale outside it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from alphadesk.analytics import confluence_zones, shared_intermediates, support_resistance
from alphadesk.analytics.errors import InsufficientData, InvalidInput
from alphadesk.analytics.swings import price_columns, swing_points


def _bars(n: int = 160, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    close = 100 * np.exp(np.cumsum(rng.normal(0, 0.015, n)))
    spread = close * rng.uniform(0.003, 0.02, n)
    index = pd.date_range("2020-01-01", periods=n, freq="B", tz="America/New_York")
    return pd.DataFrame(
        {"open": close, "high": close + spread, "low": close - spread, "close": close},
        index=index,
    )


def test_inside_the_block_a_result_is_computed_once_per_frame_and_arguments() -> None:
    bars, other = _bars(), _bars(seed=8)
    with shared_intermediates({}):
        first = swing_points(bars, 3)
        assert swing_points(bars, lookback=3) is first
        assert swing_points(bars, 5) is not first
        assert swing_points(other, 3) is not first
        # Defaults are filled in: the call confluence_zones makes is the tool's own call.
        assert support_resistance(bars) is support_resistance(bars, num_levels=5)


def test_shared_results_equal_the_results_computed_alone() -> None:
    bars = _bars()
    alone = (confluence_zones(bars), support_resistance(bars, num_levels=3))
    with shared_intermediates({}):
        shared = (confluence_zones(bars), support_resistance(bars, num_levels=3))
    assert shared == alone


def test_outside_the_block_a_frame_changed_in_place_is_computed_afresh() -> None:
    bars = _bars()
    before = swing_points(bars, 3)
    assert swing_points(bars, 3) is not before
    bars.iloc[-40:, :] *= 1.5  # a new high in the last bars: a new swing high
    assert swing_points(bars, 3) != before


def test_inside_the_block_the_prices_are_validated_once_and_errors_keep_their_words() -> None:
    bars, short = _bars(), _bars(n=10)
    with shared_intermediates({}):
        frame, source = price_columns(bars, "one", 5)
        assert price_columns(bars, "two", 20)[0] is frame and source == "high_low"
        with pytest.raises(InsufficientData, match=r"fibonacci needs at least 12"):
            price_columns(short, "fibonacci", 12)
        closes = bars[["close"]].copy()
        closes.iloc[3, 0] = -1.0
        with pytest.raises(InvalidInput, match=r"^trend: prices must be positive"):
            price_columns(closes, "trend", 5)


def test_a_close_only_series_gives_its_close_as_high_low_and_close() -> None:
    bars = _bars()[["close"]]
    with shared_intermediates({}):
        frame, source = price_columns(bars, "levels", 1)
    expected = pd.DataFrame({"high": bars["close"], "low": bars["close"], "close": bars["close"]})
    assert source == "close"
    pd.testing.assert_frame_equal(frame, expected, check_column_type=False)
