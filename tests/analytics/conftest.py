"""Shared builders for the analytics tests: piecewise-linear bars with a known answer, and
real daily bars for sanity checks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, time

import numpy as np
import pandas as pd
import pytest

PathBuilder = Callable[..., pd.DataFrame]


def bars_from_path(
    waypoints: Sequence[tuple[int, float]],
    *,
    spread: float = 0.3,
    noise: float = 0.0,
    seed: int = 0,
    start: str = "2022-01-03",
) -> pd.DataFrame:
    """Daily bars whose close walks straight between (bar, price) waypoints.

    Each bar opens at the previous close; high and low extend ``spread`` beyond the body.
    """
    xs = [p[0] for p in waypoints]
    close = np.interp(np.arange(xs[-1] + 1), xs, [p[1] for p in waypoints])
    if noise:
        close = close + np.random.default_rng(seed).normal(0.0, noise, close.size)
    open_ = np.concatenate([[close[0]], close[:-1]])
    index = pd.bdate_range(start, periods=close.size, tz="America/New_York", name="date")
    return pd.DataFrame(
        {
            "open": open_,
            "high": np.maximum(open_, close) + spread,
            "low": np.minimum(open_, close) - spread,
            "close": close,
            "volume": 1_000_000.0,
        },
        index=index,
    )


@pytest.fixture
def path() -> PathBuilder:
    """The :func:`bars_from_path` builder."""
    return bars_from_path


def _bundled(symbols: Sequence[str], close_only: bool = False) -> dict[str, pd.DataFrame]:
    """Daily bars shipped with alphadesk, as analytics frames: the columns the source has,
    with a close-only ``adj_close`` series renamed ``close``. ``close_only`` takes the
    symbol's first run of sessions (its adjusted closes, before any later OHLC bars)."""
    from alphadesk.data.providers.bundled import BundledProvider

    provider = BundledProvider()
    coverage = {c.symbol: c for c in provider.coverage()}
    out = {}
    for symbol in symbols:
        c = coverage[symbol]
        end = c.ranges[0][1] if close_only and c.ranges else c.end
        assert end is not None, f"the bundled data lists no end date for {symbol}"
        as_of = datetime.combine(end, time(23, 59), tzinfo=UTC)
        bars = provider.daily_bars(symbol, as_of)
        if "close" in bars.fields and not close_only:
            columns = [c for c in ("open", "high", "low", "close", "volume") if c in bars.fields]
            out[symbol] = bars.frame[columns]
        else:
            out[symbol] = bars.frame[["adj_close"]].rename(columns={"adj_close": "close"})
    return out


@pytest.fixture(scope="session")
def real_daily() -> dict[str, pd.DataFrame]:
    """Real daily OHLCV bars from the bundled market data (stocks and an index)."""
    return _bundled(["AAPL", "MSFT", "IBM", "GOOG", "AMZN", "NVDA", "^GSPC"])


@pytest.fixture(scope="session")
def real_close_only() -> dict[str, pd.DataFrame]:
    """Real close-only daily series (adjusted closes, 1990-2022) from the bundled data."""
    return _bundled(["JNJ", "XOM", "KO"], close_only=True)
