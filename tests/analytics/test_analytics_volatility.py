"""Historical volatility estimators against hand computations, and IV rank/percentile."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from alphadesk.analytics.errors import InsufficientData, InvalidInput, MissingColumns
from alphadesk.analytics.volatility import (
    historical_volatility,
    hv_close_to_close,
    hv_garman_klass,
    hv_parkinson,
    hv_rogers_satchell,
    hv_yang_zhang,
    iv_rank,
)

# Six made-up daily bars, small enough to compute by hand below.
OPEN = [100.0, 101.0, 99.5, 102.0, 103.5, 102.5]
HIGH = [102.0, 102.5, 101.0, 104.0, 105.0, 104.0]
LOW = [99.0, 100.0, 98.0, 101.5, 102.0, 101.0]
CLOSE = [101.0, 100.0, 100.5, 103.5, 102.5, 103.0]
WINDOW = 4


@pytest.fixture
def bars() -> pd.DataFrame:
    index = pd.bdate_range("2024-03-04", periods=len(CLOSE), tz="UTC")
    return pd.DataFrame({"open": OPEN, "high": HIGH, "low": LOW, "close": CLOSE}, index=index)


def _sample_var(xs: list[float]) -> float:
    mean = sum(xs) / len(xs)
    return sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)


def test_close_to_close(bars: pd.DataFrame) -> None:
    returns = [math.log(CLOSE[i] / CLOSE[i - 1]) for i in range(len(CLOSE) - WINDOW, len(CLOSE))]
    expected = math.sqrt(_sample_var(returns) * 252)
    series = hv_close_to_close(bars, WINDOW)
    assert series.iloc[-1] == pytest.approx(expected, rel=1e-12)
    assert series.iloc[:WINDOW].isna().all() and series.notna().sum() == len(CLOSE) - WINDOW
    assert hv_close_to_close(bars["close"], WINDOW).iloc[-1] == pytest.approx(expected)


def test_parkinson(bars: pd.DataFrame) -> None:
    total = sum(math.log(HIGH[i] / LOW[i]) ** 2 for i in range(len(CLOSE) - WINDOW, len(CLOSE)))
    expected = math.sqrt(total / (4 * WINDOW * math.log(2)) * 252)
    assert hv_parkinson(bars, WINDOW).iloc[-1] == pytest.approx(expected, rel=1e-12)


def test_garman_klass(bars: pd.DataFrame) -> None:
    total = 0.0
    for i in range(len(CLOSE) - WINDOW, len(CLOSE)):
        total += (
            0.5 * math.log(HIGH[i] / LOW[i]) ** 2
            - (2 * math.log(2) - 1) * math.log(CLOSE[i] / OPEN[i]) ** 2
        )
    expected = math.sqrt(total / WINDOW * 252)
    assert hv_garman_klass(bars, WINDOW).iloc[-1] == pytest.approx(expected, rel=1e-12)


def _rs(i: int) -> float:
    return math.log(HIGH[i] / CLOSE[i]) * math.log(HIGH[i] / OPEN[i]) + math.log(
        LOW[i] / CLOSE[i]
    ) * math.log(LOW[i] / OPEN[i])


def test_rogers_satchell(bars: pd.DataFrame) -> None:
    expected = math.sqrt(sum(_rs(i) for i in range(len(CLOSE) - WINDOW, len(CLOSE))) / WINDOW * 252)
    assert hv_rogers_satchell(bars, WINDOW).iloc[-1] == pytest.approx(expected, rel=1e-12)


def test_yang_zhang(bars: pd.DataFrame) -> None:
    days = range(len(CLOSE) - WINDOW, len(CLOSE))
    overnight = [math.log(OPEN[i] / CLOSE[i - 1]) for i in days]
    open_close = [math.log(CLOSE[i] / OPEN[i]) for i in days]
    rs = sum(_rs(i) for i in days) / WINDOW
    k = 0.34 / (1.34 + (WINDOW + 1) / (WINDOW - 1))
    variance = _sample_var(overnight) + k * _sample_var(open_close) + (1 - k) * rs
    series = hv_yang_zhang(bars, WINDOW)
    assert series.iloc[-1] == pytest.approx(math.sqrt(variance * 252), rel=1e-12)
    assert series.iloc[:WINDOW].isna().all()  # needs window + 1 bars


def test_historical_volatility_picks_the_estimator(bars: pd.DataFrame) -> None:
    hv = historical_volatility(bars, WINDOW, "parkinson")
    assert hv.value == pytest.approx(hv_parkinson(bars, WINDOW).iloc[-1])
    assert (hv.method, hv.window, hv.as_of) == ("parkinson", WINDOW, bars.index[-1])
    with pytest.raises(InvalidInput, match="unknown method"):
        historical_volatility(bars, WINDOW, "magic")  # type: ignore[arg-type]


def test_range_estimators_refuse_close_only_series(bars: pd.DataFrame) -> None:
    close_only = bars[["close"]]
    for fn in (hv_parkinson, hv_garman_klass, hv_rogers_satchell, hv_yang_zhang):
        with pytest.raises(MissingColumns, match="hv_close_to_close"):
            fn(close_only, WINDOW)
    with pytest.raises(InvalidInput, match="OHLC"):
        historical_volatility(bars["close"], WINDOW, "yang_zhang")
    assert historical_volatility(close_only, WINDOW).value > 0


def test_short_series_say_how_many_bars_are_needed(bars: pd.DataFrame) -> None:
    with pytest.raises(InsufficientData, match="needs at least 21 bars, but 6 were given"):
        hv_close_to_close(bars, 20)
    with pytest.raises(InvalidInput, match="window"):
        hv_parkinson(bars, 1)


def test_flat_series_has_zero_volatility() -> None:
    index = pd.bdate_range("2024-01-01", periods=30, tz="UTC")
    flat = pd.DataFrame({c: 50.0 for c in ("open", "high", "low", "close")}, index=index)
    for fn in (hv_close_to_close, hv_parkinson, hv_garman_klass, hv_yang_zhang):
        assert fn(flat, 20).iloc[-1] == 0.0


def test_iv_rank_and_percentile() -> None:
    history = [0.20, 0.30, 0.25, 0.40, 0.35]
    r = iv_rank(history)  # current = last value, 0.35
    assert r.rank == pytest.approx(100 * (0.35 - 0.20) / (0.40 - 0.20))
    assert r.percentile == pytest.approx(100 * 3 / 5)  # 0.20, 0.30, 0.25 are below
    assert (r.low, r.high, r.observations) == (0.20, 0.40, 5)
    r = iv_rank(np.array([0.2, np.nan, 0.4]), current=0.3)
    assert r.rank == pytest.approx(50.0) and r.observations == 2


def test_iv_rank_refuses_degenerate_histories() -> None:
    with pytest.raises(InsufficientData):
        iv_rank([0.3])
    with pytest.raises(InvalidInput, match="flat"):
        iv_rank([0.3, 0.3, 0.3])


def test_estimators_equal_their_pandas_formulation_on_real_bars(
    real_daily: dict[str, pd.DataFrame],
) -> None:
    """Exactly, not approximately: the annualisation runs on arrays, the reference on series."""
    bars = real_daily["AAPL"].iloc[-300:]
    close = bars["close"]

    def annualised(variance: pd.Series) -> pd.Series:
        return np.sqrt(variance.clip(lower=0.0) * 252)

    c2c = annualised(np.log(close).diff().rolling(20).var(ddof=1))
    np.testing.assert_array_equal(hv_close_to_close(close, 20).to_numpy(), c2c.to_numpy())
    np.testing.assert_array_equal(hv_close_to_close(bars, 20).to_numpy(), c2c.to_numpy())
    hl2 = np.log(bars["high"] / bars["low"]) ** 2
    parkinson = annualised(hl2.rolling(20).mean() / (4.0 * math.log(2.0)))
    np.testing.assert_array_equal(hv_parkinson(bars, 20).to_numpy(), parkinson.to_numpy())
    assert hv_close_to_close(close, 20).index.equals(close.index)
