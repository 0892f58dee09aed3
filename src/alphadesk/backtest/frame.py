"""Bars made ready to trade: an OHLCV frame both engines read the same way.

Adjustment. Raw prices carry splits (a 2:1 split looks like a 50 % crash) and leave out
dividends. With ``adjust=True`` (the default) open, high, low and close are multiplied by
``adj_close / close`` *relative to the window's last bar*: the last bar keeps the
source's prices and earlier bars are scaled for the splits and dividends between them and
that bar. Returns are then total returns and nothing from after the window is used.

Close-only series (only a close or an adjusted close) get ``open = high = low = close``:
a market order then fills at the next bar's close, and the result says so in its notes.
"""

from __future__ import annotations

from datetime import date, datetime

import numpy as np
import pandas as pd

from alphadesk.data.bars import Bars

__all__ = ["OHLCV", "BacktestDataError", "frame_from_bars", "start_bar", "validate_frame"]

OHLCV = ("open", "high", "low", "close", "volume")
PRICES = OHLCV[:4]


class BacktestDataError(ValueError):
    """The bars cannot be backtested; the message says why and what to do."""


def frame_from_bars(
    bars: Bars, *, adjust: bool = True, dividends: pd.Series | None = None
) -> tuple[pd.DataFrame, list[str]]:
    """An OHLCV frame of ``bars`` and notes on how it was prepared.

    Args:
        bars: Daily bars from the data layer (already point in time).
        adjust: Scale prices for splits and dividends within the window (see the module).
        dividends: Cash per share paid on each bar (its ex-date) on the bars' basis, e.g.
            :func:`alphadesk.data.actions.dividends_on_bars`: both engines credit it to
            the position held at the previous close (a short pays it). Only with
            ``adjust=False``: adjusted prices already hold the dividends.

    Returns:
        The frame (columns :data:`OHLCV`, the bars' tz-aware index, rows without a price
        dropped) and notes for the result.

    Raises:
        BacktestDataError: No price column, or no bar with a price.
    """
    if dividends is not None and adjust:
        raise ValueError(
            "dividends are credited as cash on as-traded prices: pass adjust=False with them "
            "(adjusted prices already hold the dividends)"
        )
    raw = bars.frame
    notes: list[str] = []
    fields = bars.fields
    if "close" in fields:
        price = raw["close"]
    elif "adj_close" in fields:
        price = raw["adj_close"]
        notes.append("adjusted close only: prices are the source's adjusted closes")
    else:
        raise BacktestDataError(
            f"{bars.symbol}: the bars have no close; pick a symbol with prices "
            "(`alphadesk data list`)"
        )
    frame = pd.DataFrame(index=raw.index)
    has_range = {"open", "high", "low"} <= fields
    for column in ("open", "high", "low"):
        frame[column] = raw[column] if has_range else price
    frame["close"] = price
    frame["volume"] = raw["volume"] if "volume" in fields else 0.0
    if not has_range:
        notes.append("close-only series: orders fill at the next bar's close")
    frame = frame.dropna(subset=["open", "high", "low", "close"])
    frame["volume"] = frame["volume"].fillna(0.0)
    if frame.empty:
        raise BacktestDataError(f"{bars.symbol}: no bar with a price in the range")
    if adjust and "close" in fields and "adj_close" in fields:
        frame, note = _adjust(frame, raw["adj_close"].reindex(frame.index))
        if note:
            notes.append(note)
    if dividends is not None:
        frame["dividend"] = dividends.reindex(frame.index).fillna(0.0)
        paid = int((frame["dividend"] != 0).sum())
        notes.append(f"prices as traded; {paid} dividend(s) credited as cash on the ex-date")
    return frame, notes


def _adjust(frame: pd.DataFrame, adj_close: pd.Series) -> tuple[pd.DataFrame, str | None]:
    ratio = (adj_close / frame["close"]).ffill().bfill()
    if ratio.isna().all():
        return frame, None
    factor = ratio / ratio.iloc[-1]
    if np.allclose(factor.to_numpy(), 1.0, rtol=0, atol=1e-12):
        return frame, None
    out = frame.copy()
    for column in ("open", "high", "low", "close"):
        out[column] = frame[column] * factor
    out["volume"] = frame["volume"] / factor
    return out, "prices adjusted for splits and dividends within the window (to the last close)"


def validate_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Check that ``frame`` can be backtested and return it with float columns.

    Raises:
        BacktestDataError: Missing columns, NaN or non-positive prices, an unsorted or
            duplicated index, fewer than 2 bars.
    """
    missing = [c for c in PRICES if c not in frame.columns]
    if missing:
        raise BacktestDataError(f"the bars lack {missing}; pass columns {list(OHLCV)}")
    if len(frame) < 2:
        raise BacktestDataError(
            f"{len(frame)} bar(s): a backtest needs at least 2 (orders fill on the next bar); "
            "widen the date range"
        )
    if not isinstance(frame.index, pd.DatetimeIndex):
        raise BacktestDataError("the bars need a DatetimeIndex")
    if not frame.index.is_monotonic_increasing or frame.index.has_duplicates:
        raise BacktestDataError("the bars' index must be increasing without duplicates")
    # Column by column: selecting a sub-frame costs more than the whole fast backtest.
    columns = [frame[c].to_numpy() for c in OHLCV if c in frame.columns]
    prices = np.stack([np.asarray(a, dtype=np.float64) for a in columns[:4]])
    if not np.isfinite(prices).all() or (prices <= 0).any():
        raise BacktestDataError("prices must be positive and finite; drop or fill bad rows")
    if len(columns) == len(OHLCV) and all(a.dtype == np.float64 for a in columns):
        return frame  # already clean: no copy
    out = frame.astype({c: np.float64 for c in frame.columns if c in OHLCV})
    if "volume" not in out.columns:
        out["volume"] = 0.0
    return out


def start_bar(frame: pd.DataFrame, trade_from: date | datetime | str | None) -> int:
    """The first bar (position) to trade: the first closing on or after ``trade_from``.

    Raises:
        BacktestDataError: Fewer than 2 bars from there.
    """
    if trade_from is None:
        return 0
    stamp = pd.Timestamp(trade_from)
    if stamp.tzinfo is None and frame.index.tz is not None:
        stamp = stamp.tz_localize(frame.index.tz)
    cut = int(frame.index.searchsorted(stamp, side="left"))
    if cut >= len(frame) - 1:
        raise BacktestDataError(
            f"fewer than 2 bars from {stamp.date()}: pick an earlier start or a later end"
        )
    return cut
