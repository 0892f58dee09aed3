"""TA-Lib indicators spot-checked against plain pandas computations on real bars."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import talib

from alphadesk.analytics.candles import candlestick_patterns
from alphadesk.analytics.errors import InsufficientData, InvalidInput, MissingColumns
from alphadesk.analytics.indicators import (
    adx,
    atr,
    bollinger,
    ema,
    kdj,
    macd,
    obv,
    rsi,
    sma,
    stochastic,
    vwap,
)
from alphadesk.analytics.snapshot import indicator_snapshot


@pytest.fixture
def bars(real_daily: dict[str, pd.DataFrame]) -> pd.DataFrame:
    return real_daily["MSFT"].iloc[-400:]


def _seeded_ewm(values: pd.Series, period: int, alpha: float) -> pd.Series:
    """Recursive average seeded with the mean of the first ``period`` values."""
    seed = values.iloc[:period].mean()
    tail = pd.concat([pd.Series([seed]), values.iloc[period:].reset_index(drop=True)])
    smoothed = tail.ewm(alpha=alpha, adjust=False).mean().to_numpy()
    out = pd.Series(np.nan, index=values.index)
    out.iloc[period - 1 :] = smoothed
    return out


def test_sma(bars: pd.DataFrame) -> None:
    expected = bars["close"].rolling(20).mean()
    pd.testing.assert_series_equal(sma(bars, 20), expected, check_names=False)


def test_ema(bars: pd.DataFrame) -> None:
    expected = _seeded_ewm(bars["close"], 20, 2 / 21)
    np.testing.assert_allclose(ema(bars, 20), expected, rtol=1e-10)


def test_rsi_uses_wilder_smoothing(bars: pd.DataFrame) -> None:
    delta = bars["close"].diff().iloc[1:]
    gain = _seeded_ewm(delta.clip(lower=0), 14, 1 / 14)
    loss = _seeded_ewm(-delta.clip(upper=0), 14, 1 / 14)
    expected = (100 * gain / (gain + loss)).reindex(bars.index)
    np.testing.assert_allclose(rsi(bars, 14), expected, rtol=1e-9)


def test_atr_uses_wilder_smoothing(bars: pd.DataFrame) -> None:
    prev = bars["close"].shift(1)
    tr = (
        pd.concat(
            [bars["high"] - bars["low"], (bars["high"] - prev).abs(), (bars["low"] - prev).abs()],
            axis=1,
        )
        .max(axis=1)
        .iloc[1:]
    )
    expected = _seeded_ewm(tr, 14, 1 / 14).reindex(bars.index)
    np.testing.assert_allclose(atr(bars, 14), expected, rtol=1e-9)


def test_bollinger(bars: pd.DataFrame) -> None:
    mid = bars["close"].rolling(20).mean()
    sd = bars["close"].rolling(20).std(ddof=0)
    bands = bollinger(bars, 20, 2.0)
    np.testing.assert_allclose(bands["upper"], mid + 2 * sd, rtol=1e-9)
    np.testing.assert_allclose(bands["lower"], mid - 2 * sd, rtol=1e-9)
    np.testing.assert_allclose(bands["middle"], mid, rtol=1e-12)
    expected_b = (bars["close"] - (mid - 2 * sd)) / (4 * sd)
    np.testing.assert_allclose(bands["percent_b"], expected_b, rtol=1e-7)


def test_obv(bars: pd.DataFrame) -> None:
    direction = np.sign(bars["close"].diff()).fillna(0.0)
    signed = bars["volume"] * direction
    signed.iloc[0] = bars["volume"].iloc[0]
    np.testing.assert_allclose(obv(bars), signed.cumsum(), rtol=1e-12)


def test_macd_lines_are_consistent(bars: pd.DataFrame) -> None:
    m = macd(bars)
    valid = m.dropna()
    assert len(valid) == len(bars) - 33
    np.testing.assert_allclose(valid["histogram"], valid["macd"] - valid["signal"], atol=1e-12)
    fast, slow = ema(bars, 12), ema(bars, 26)
    np.testing.assert_allclose(valid["macd"].iloc[-50:], (fast - slow).iloc[-50:], atol=1e-9)


def test_stochastic(bars: pd.DataFrame) -> None:
    lowest = bars["low"].rolling(14).min()
    highest = bars["high"].rolling(14).max()
    fast_k = 100 * (bars["close"] - lowest) / (highest - lowest)
    slow_k = fast_k.rolling(3).mean()
    st = stochastic(bars, 14, 3, 3)
    # TA-Lib starts %K and %D together, after both warm-ups (13 + 2 + 2 bars).
    assert st.iloc[:17].isna().all().all() and st.iloc[17:].notna().all().all()
    np.testing.assert_allclose(st["k"].iloc[17:], slow_k.iloc[17:], rtol=1e-9)
    np.testing.assert_allclose(st["d"].iloc[17:], slow_k.rolling(3).mean().iloc[17:], rtol=1e-9)


def test_kdj_matches_the_one_third_recursion_after_warm_up(bars: pd.DataFrame) -> None:
    lowest, highest = bars["low"].rolling(9).min(), bars["high"].rolling(9).max()
    rsv = (100 * (bars["close"] - lowest) / (highest - lowest)).dropna()
    k_val, d_val = 50.0, 50.0
    for value in rsv:
        k_val = 2 / 3 * k_val + value / 3
        d_val = 2 / 3 * d_val + k_val / 3
    out = kdj(bars)
    assert out["k"].iloc[-1] == pytest.approx(k_val, abs=1e-6)
    assert out["d"].iloc[-1] == pytest.approx(d_val, abs=1e-6)
    np.testing.assert_allclose(out["j"], 3 * out["k"] - 2 * out["d"], atol=1e-9)


def test_adx_ranges(bars: pd.DataFrame) -> None:
    values = adx(bars).dropna()
    assert len(values) == len(bars) - 27
    assert values.to_numpy().min() >= 0 and values.to_numpy().max() <= 100


def test_vwap_rolling_and_anchored() -> None:
    index = pd.bdate_range("2024-01-01", periods=4, tz="UTC")
    bars = pd.DataFrame(
        {
            "high": [11.0, 12, 13, 14],
            "low": [9.0, 10, 11, 12],
            "close": [10.0, 11, 12, 13],
            "volume": [100.0, 200, 0, 300],
        },
        index=index,
    )
    typical = (bars["high"] + bars["low"] + bars["close"]) / 3
    rolling = vwap(bars, window=2)
    assert np.isnan(rolling.iloc[0])
    assert rolling.iloc[1] == pytest.approx((typical.iloc[0] * 100 + typical.iloc[1] * 200) / 300)
    assert rolling.iloc[2] == pytest.approx(typical.iloc[1])  # the zero-volume bar adds nothing
    anchored = vwap(bars, window=None, anchor=index[1])
    assert np.isnan(anchored.iloc[0])
    assert anchored.iloc[3] == pytest.approx((typical.iloc[1] * 200 + typical.iloc[3] * 300) / 500)
    zero = bars.assign(volume=0.0)
    assert vwap(zero, window=2).isna().all()
    with pytest.raises(InvalidInput, match="exactly one"):
        vwap(bars, window=2, anchor=index[1])


def test_rsi_is_undefined_until_the_price_moves() -> None:
    index = pd.bdate_range("2024-01-01", periods=30, tz="UTC")
    close = pd.Series([10.0] * 20 + [10.5] * 10, index=index)
    values = rsi(close, 14)
    assert values.iloc[:20].isna().all()
    assert values.iloc[-1] == pytest.approx(100.0)


def test_stochastic_is_undefined_on_a_window_without_range() -> None:
    index = pd.bdate_range("2024-01-01", periods=40, tz="UTC")
    flat = pd.DataFrame({"high": 10.0, "low": 10.0, "close": 10.0}, index=index)
    assert stochastic(flat).isna().all().all()


def test_engulfing_candle_is_reported_with_its_date() -> None:
    index = pd.bdate_range("2024-01-01", periods=14, tz="UTC")
    o = np.array([10.0] * 12 + [10.0, 9.0])
    c = np.array([10.2] * 12 + [9.2, 10.5])
    bars = pd.DataFrame(
        {"open": o, "high": np.maximum(o, c) + 0.1, "low": np.minimum(o, c) - 0.1, "close": c},
        index=index,
    )
    hits = candlestick_patterns(bars, lookback=3, patterns=["CDLENGULFING"])
    assert len(hits) == 1
    assert (hits[0].pattern, hits[0].direction, hits[0].bars_ago) == ("engulfing", "bullish", 0)
    assert hits[0].date == index[-1]
    with pytest.raises(InvalidInput, match="unknown"):
        candlestick_patterns(bars, patterns=["CDLNOTHING"])
    with pytest.raises(MissingColumns, match="open"):
        candlestick_patterns(bars.drop(columns="open"))


def test_range_indicators_need_high_and_low(bars: pd.DataFrame) -> None:
    close_only = bars[["close"]]
    for fn in (atr, adx, stochastic, kdj):
        with pytest.raises(MissingColumns, match="high"):
            fn(close_only)
    with pytest.raises(MissingColumns, match="volume"):
        obv(close_only)


def test_bad_bars_get_clear_errors(bars: pd.DataFrame) -> None:
    with pytest.raises(InsufficientData, match="RSI\\(14\\) needs at least 15 bars, but 10"):
        rsi(bars.iloc[:10])
    with pytest.raises(InvalidInput, match="timezone-naive"):
        sma(bars.tz_localize(None))
    with pytest.raises(InvalidInput, match="increasing"):
        sma(bars.iloc[::-1])
    gappy = bars.copy()
    gappy.iloc[5, gappy.columns.get_loc("close")] = np.nan
    with pytest.raises(InvalidInput, match="dropna"):
        ema(gappy)
    with pytest.raises(InvalidInput, match="period"):
        sma(bars, 0)
    with pytest.raises(MissingColumns, match="adj_close"):
        rsi(bars[["close"]].rename(columns={"close": "adj_close"}))
    with pytest.raises(InvalidInput, match="shorter"):
        macd(bars, fast=26, slow=12)


def test_snapshot_reports_latest_values_and_explains_gaps(bars: pd.DataFrame) -> None:
    full = indicator_snapshot(bars)
    assert full.unavailable == {}
    assert full.as_of == bars.index[-1] and full.close == bars["close"].iloc[-1]
    assert full.rsi_14 == pytest.approx(rsi(bars).iloc[-1])
    assert full.atr_14 == pytest.approx(atr(bars).iloc[-1])
    short_close = indicator_snapshot(bars[["close"]].iloc[-60:])
    assert short_close.sma_200 is None and "200 bars" in short_close.unavailable["sma_200"]
    assert short_close.atr_14 is None and "high" in short_close.unavailable["atr_14"]
    assert short_close.sma_50 == pytest.approx(bars["close"].iloc[-50:].mean())


def _stochastic_by_pandas(bars: pd.DataFrame, k_period: int, k_smooth: int, d_period: int):
    """TA-Lib's slow stochastic, undefined where a window had no range by pandas' rolling
    windows (the reference the array version must equal)."""
    k, d = talib.STOCH(
        *(bars[c].to_numpy() for c in ("high", "low", "close")),
        fastk_period=k_period,
        slowk_period=k_smooth,
        slowd_period=d_period,
    )
    flat = (bars["high"].rolling(k_period).max() - bars["low"].rolling(k_period).min()) == 0
    k_bad = flat.astype(float).rolling(k_smooth, min_periods=1).max() > 0
    d_bad = k_bad.astype(float).rolling(d_period, min_periods=1).max() > 0
    k[k_bad.to_numpy()] = np.nan
    d[d_bad.to_numpy()] = np.nan
    return k, d


@pytest.mark.parametrize("periods", [(14, 3, 3), (9, 5, 5), (5, 1, 1)])
def test_stochastic_is_undefined_exactly_where_a_window_had_no_range(
    bars: pd.DataFrame, periods: tuple[int, int, int]
) -> None:
    flat = bars.iloc[:160].copy()
    for start, length in ((30, 20), (80, 9), (120, 4)):  # flat stretches on real bars
        flat.iloc[start : start + length, :] = flat.iloc[start, 3]
    k, d = _stochastic_by_pandas(flat, *periods)
    st = stochastic(flat, *periods)
    assert np.isnan(k[40:]).any() and not np.isnan(k[40:]).all()
    np.testing.assert_array_equal(st["k"].to_numpy(), k)
    np.testing.assert_array_equal(st["d"].to_numpy(), d)
    assert list(st.columns) == ["k", "d"] and st.index.equals(flat.index)
