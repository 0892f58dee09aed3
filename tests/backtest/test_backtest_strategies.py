"""The built-in signals: causal, as defined, and refused with a useful message."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from alphadesk.backtest import STRATEGIES, UnknownStrategy, get_strategy, sweep
from alphadesk.backtest.strategies import zmr


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_signals_never_look_ahead(bars, name: str) -> None:
    """A signal computed on the bars up to day t equals the full signal's value at t."""
    frame = bars("NVDA", "2014-01-01", "2016-12-31")
    spec = get_strategy(name)
    full = spec.targets(frame)
    assert set(np.unique(full)) <= {-1.0, 0.0, 1.0}
    for cut in (400, 550, len(frame)):
        np.testing.assert_array_equal(spec.targets(frame.iloc[:cut]).to_numpy(), full.iloc[:cut])


def test_sma_cross_against_pandas_rolling_means(bars) -> None:
    frame = bars("MSFT", "2006-01-01", "2009-12-31")
    close = frame["close"]
    spread = close.rolling(10).mean() - close.rolling(30).mean()
    expected = np.sign(spread).fillna(0.0)
    got = get_strategy("sma_cross").targets(frame, {"fast": 10, "slow": 30})
    ok = (spread.abs() > 1e-9) | spread.isna()  # TA-Lib and pandas round differently at 0
    np.testing.assert_array_equal(got[ok].to_numpy(), expected[ok].to_numpy())


def test_zmr_by_hand() -> None:
    """window 3, entry 1.2, exit 0.5 on a short series checked on paper."""
    close = [10.0, 10.0, 10.0, 13.0, 10.0, 7.0, 10.0, 10.5, 10.0, 10.0]
    index = pd.date_range("2024-01-01", periods=len(close), freq="B", tz="UTC")
    frame = pd.DataFrame({"close": close}, index=index)
    # Bar 3: window 10, 10, 13: mean 11, std sqrt(2), z = 2/sqrt(2) = 1.41 >= 1.2 -> short.
    # Bar 4: 10, 13, 10: mean 11, z = -0.71: between exit and entry, hold short.
    # Bar 5: 13, 10, 7: mean 10, std sqrt(6), z = -1.22 <= -1.2 -> long.
    # Bar 6: 10, 7, 10: mean 9, std sqrt(2), z = 0.71: hold long.
    # Bar 7: 7, 10, 10.5: mean 9.17, std 1.55, z = 0.86: hold.
    # Bar 8: 10, 10.5, 10: mean 10.17, std 0.236, z = -0.71: hold.
    # Bar 9: 10.5, 10, 10: z = -0.71 again: hold. Bars 0-2: flat (bar 2's window has no
    # spread: z undefined).
    got = zmr(frame, window=3, entry=1.2, exit=0.5).tolist()
    assert got == [0, 0, 0, -1, -1, 1, 1, 1, 1, 1]
    assert zmr(frame, window=3, entry=1.2, exit=0.75).tolist()[6] == 0  # |0.71| <= 0.75


def test_unknown_strategy_lists_the_built_ins() -> None:
    with pytest.raises(UnknownStrategy, match="sma_cross") as info:
        get_strategy("turtle")
    assert "unknown strategy 'turtle'" in str(info.value)
    with pytest.raises(UnknownStrategy, match=r"strategy file.*sandbox"):
        get_strategy("my_strategy.py")


def test_parameters_are_checked() -> None:
    spec = get_strategy("sma_cross")
    assert spec.params({"fast": "10"}) == {"fast": 10, "slow": 50}
    with pytest.raises(ValueError, match=r"no parameter .period.*fast, slow"):
        spec.params({"period": 3})
    with pytest.raises(ValueError, match="fast must be an integer"):
        spec.params({"fast": "ten"})


def test_sweep_runs_every_valid_combination(bars) -> None:
    frame = bars("AAPL", "2004-01-01", "2008-12-31")
    table = sweep("sma_cross", frame, {"fast": [10, 20, 50], "slow": [50, 100]})
    assert len(table) == 5  # fast 50 / slow 50 is refused
    assert {"fast", "slow", "sharpe", "trades", "final"} <= set(table.columns)
    assert table["final"].nunique() == 5
