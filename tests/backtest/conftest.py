"""Bundled daily bars, ready to backtest, for the engine tests."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime

import pandas as pd
import pytest

from alphadesk.backtest import frame_from_bars
from alphadesk.data.providers.bundled import BundledProvider


@pytest.fixture(scope="session")
def bars() -> Callable[[str, str, str], pd.DataFrame]:
    """``bars(symbol, first_day, last_day)``: adjusted OHLCV of a bundled symbol."""
    provider = BundledProvider()
    cache: dict[tuple[str, str, str], pd.DataFrame] = {}

    def load(symbol: str, first: str, last: str) -> pd.DataFrame:
        key = (symbol, first, last)
        if key not in cache:
            end = datetime.combine(date.fromisoformat(last), datetime.max.time(), tzinfo=UTC)
            daily = provider.daily_bars(symbol, end).since(date.fromisoformat(first))
            cache[key] = frame_from_bars(daily)[0]
        return cache[key]

    return load
