"""Synthetic markets for the lab's tests, written as a ``local`` provider folder: seeded
daily bars on the XNYS calendar, of pure noise or with a planted, persistent trend."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from alphadesk.config import DataSettings, Settings
from alphadesk.data.calendar import sessions_between

__all__ = ["FIRST", "LAST", "noise", "planted_trend", "synthetic_settings", "write_bars"]

FIRST, LAST = date(2015, 1, 2), date(2018, 12, 31)


def noise(days: int, seed: int) -> np.ndarray:
    """Daily log returns of a driftless random walk: no strategy has an edge on it."""
    return np.random.default_rng(seed).normal(0.0, 0.012, days)


def planted_trend(days: int, seed: int) -> np.ndarray:
    """Daily log returns of persistent regimes: up-trends of +0.5 % a day lasting about 80
    days, sharp down-trends of -0.6 % a day lasting about 25, under 0.6 % of noise. A
    long-or-flat trend follower rides the up-trends and sits the down-trends out."""
    rng = np.random.default_rng(seed)
    drift = np.empty(days)
    up = True
    for i in range(days):
        if rng.random() < (1 / 80 if up else 1 / 25):
            up = not up
        drift[i] = 0.005 if up else -0.006
    return drift + rng.normal(0.0, 0.006, days)


def write_bars(folder: Path, symbol: str, returns: np.ndarray, first: date = FIRST) -> list[date]:
    """Daily OHLCV bars of ``returns`` from ``first`` (one session each) in
    ``folder/bars/1d/SYMBOL.csv``; returns the sessions."""
    days = sessions_between(first, date(2030, 12, 31))[: len(returns)]
    close = 100 * np.exp(np.cumsum(returns))
    opening = np.concatenate([[100.0], close[:-1]])
    frame = pd.DataFrame(
        {
            "date": [d.isoformat() for d in days],
            "open": opening,
            "high": np.maximum(opening, close) * 1.002,
            "low": np.minimum(opening, close) * 0.998,
            "close": close,
            "volume": 1_000_000,
        }
    )
    (folder / "bars" / "1d").mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / "bars" / "1d" / f"{symbol}.csv", index=False)
    return days


def synthetic_settings(root: Path) -> Settings:
    """Settings reading only the ``local`` folder ``root/market`` (stores under ``root``)."""
    return Settings(
        data_dir=root / "alphadesk",
        data=DataSettings(providers=["local"], local_dir=root / "market"),
    )
