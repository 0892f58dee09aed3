"""Short, flat and gappy series: every bar function returns a result or raises a clear
analytics error, never an obscure exception or a numpy warning."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alphadesk import analytics as an
from alphadesk.analytics.errors import AnalyticsError, InsufficientData

BAR_FUNCTIONS: dict[str, Callable[[pd.DataFrame], Any]] = {
    "sma": an.sma,
    "ema": an.ema,
    "rsi": an.rsi,
    "macd": an.macd,
    "bollinger": an.bollinger,
    "atr": an.atr,
    "adx": an.adx,
    "obv": an.obv,
    "stochastic": an.stochastic,
    "kdj": an.kdj,
    "vwap": lambda b: an.vwap(b, window=5),
    "candles": an.candlestick_patterns,
    "hv_close": an.hv_close_to_close,
    "hv_parkinson": an.hv_parkinson,
    "hv_garman_klass": an.hv_garman_klass,
    "hv_yang_zhang": an.hv_yang_zhang,
    "swings": an.swing_points,
    "fibonacci": an.fibonacci_from_bars,
    "support_resistance": an.support_resistance,
    "support_line": lambda b: an.trendline(b, "support"),
    "resistance_line": lambda b: an.trendline(b, "resistance"),
    "trend": an.trend_assessment,
    "extension": an.extension_from_support,
    "confluence": an.confluence_zones,
    "patterns": an.detect_patterns,
}


@st.composite
def daily_bars(draw: st.DrawFn) -> pd.DataFrame:
    """Short to medium series: flat, random walks with price gaps, missing dates, and
    close-only or OHLCV columns."""
    n = draw(st.integers(0, 90))
    shape = draw(st.sampled_from(["flat", "walk", "gaps"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    steps = np.zeros(n) if shape == "flat" else rng.normal(0, 0.02, n)
    if shape == "gaps" and n:
        jumps = rng.random(n) < 0.05
        steps[jumps] += rng.choice([-0.3, 0.3], jumps.sum())
    close = 50.0 * np.exp(np.cumsum(steps))
    open_ = np.concatenate([close[:1], close[:-1]]) if n else close
    wick = 0.0 if shape == "flat" else 0.01
    dates = pd.bdate_range("2020-01-01", periods=n * 2 + 1, tz="UTC")
    keep = np.sort(rng.choice(len(dates), n, replace=False))  # missing sessions
    bars = pd.DataFrame(
        {
            "open": open_,
            "high": np.maximum(open_, close) * (1 + wick),
            "low": np.minimum(open_, close) * (1 - wick),
            "close": close,
            "volume": rng.integers(0, 1_000_000, n).astype(float),
        },
        index=dates[keep],
    )
    return bars[["close"]] if draw(st.booleans()) else bars


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bars=daily_bars())
@pytest.mark.slow
def test_bar_functions_fail_only_with_clear_errors(bars: pd.DataFrame) -> None:
    for name, fn in BAR_FUNCTIONS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            try:
                fn(bars)
            except AnalyticsError as exc:
                assert str(exc), name
            except Exception as exc:  # pragma: no cover - the failure being tested for
                pytest.fail(f"{name} raised {type(exc).__name__}: {exc} on {len(bars)} bars")


@pytest.mark.parametrize("n", [0, 1, 5])
def test_insufficient_data_says_needed_and_given(n: int) -> None:
    index = pd.bdate_range("2024-01-01", periods=n, tz="UTC")
    bars = pd.DataFrame(
        {c: np.linspace(10, 11, n) for c in ("open", "high", "low", "close")}, index=index
    )
    with pytest.raises(InsufficientData) as info:
        an.trend_assessment(bars)
    assert (info.value.needed, info.value.given) == (60, n)
    assert re.search(rf"needs at least 60 bars, but {n} were given", str(info.value))
    assert isinstance(info.value, ValueError)
