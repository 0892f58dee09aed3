"""Validation of the daily-bar frames and series every analytics function accepts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._memo import shared
from .errors import AnalyticsError, InsufficientData, InvalidInput, MissingColumns

__all__ = ["as_close", "has_columns", "require_bars"]

PRICE_COLUMNS = ("open", "high", "low", "close")
_CLOSE = pd.Index(["close"], dtype=object)


def _check_index(index: pd.Index, what: str) -> None:
    if not isinstance(index, pd.DatetimeIndex):
        raise InvalidInput(
            f"{what}: bars need a DatetimeIndex, got {type(index).__name__}; "
            "index the frame by bar date"
        )
    if index.tz is None:
        raise InvalidInput(
            f"{what}: the bar index is timezone-naive; localise it, e.g. "
            "bars.tz_localize('UTC') or bars.tz_localize('America/New_York')"
        )
    if not index.is_monotonic_increasing or index.has_duplicates:
        raise InvalidInput(
            f"{what}: bar dates must be strictly increasing without duplicates; "
            "sort the frame and drop duplicate dates"
        )


def _absent(bars: pd.DataFrame, column: str) -> bool:
    """A column is absent when it does not exist or, in a non-empty frame, is all NaN."""
    return column not in bars.columns or _all_missing(bars[column])


def _all_missing(column: pd.Series) -> bool:
    if len(column) == 0:
        return False
    values = column.to_numpy()
    if values.dtype.kind == "f":
        return bool(np.isnan(values).all())
    return not column.notna().any()


def has_columns(bars: pd.DataFrame, columns: Sequence[str]) -> bool:
    """True when every column exists and is not entirely missing."""
    return not any(_absent(bars, c) for c in columns)


def _check_values(values: np.ndarray, columns: Sequence[str], what: str) -> None:
    """Finite, positive prices, non-negative volume, high at or above low (on one array:
    validation runs on every analytics call, so it must cost microseconds)."""
    bad = ~np.isfinite(values)
    if bad.any():
        rows = int(bad.any(axis=1).sum())
        raise InvalidInput(
            f"{what}: {rows} bar(s) have missing or non-finite values in "
            f"{', '.join(columns)}; drop or fill them first (e.g. bars.dropna())"
        )
    at = {c: i for i, c in enumerate(columns)}
    prices = [at[c] for c in PRICE_COLUMNS if c in at]
    if prices and (values[:, prices] <= 0).any():
        raise InvalidInput(f"{what}: prices must be positive; found zero or negative values")
    if "volume" in at and (values[:, at["volume"]] < 0).any():
        raise InvalidInput(f"{what}: volume must not be negative")
    if "high" in at and "low" in at:
        inverted = int((values[:, at["high"]] < values[:, at["low"]]).sum())
        if inverted:
            raise InvalidInput(f"{what}: {inverted} bar(s) have high below low; fix the data")


def require_bars(
    bars: pd.DataFrame,
    columns: Sequence[str],
    *,
    min_bars: int,
    what: str,
    hint: str = "",
) -> pd.DataFrame:
    """Validate daily bars and return the needed columns as float64.

    Args:
        bars: Frame with a tz-aware, increasing DatetimeIndex and lower-case columns.
        columns: Columns the computation needs.
        min_bars: Minimum number of bars.
        what: Name of the computation, used in error messages.
        hint: Extra advice appended to a missing-column error.

    Returns:
        A float64 copy of ``bars[columns]``.

    Raises:
        InvalidInput: Not a frame, naive or unsorted index, non-finite or non-positive values.
        MissingColumns: A needed column is absent or entirely missing.
        InsufficientData: Fewer than ``min_bars`` bars.
    """
    values = _validated(bars, columns, min_bars=min_bars, what=what, hint=hint)
    # Plain labels: pandas' default string index makes every column lookup slower.
    return pd.DataFrame(values, index=bars.index, columns=pd.Index(list(columns), dtype=object))


def _validated(
    bars: pd.DataFrame, columns: Sequence[str], *, min_bars: int, what: str, hint: str = ""
) -> np.ndarray:
    """``require_bars``'s checks; the columns as a float64 array (read-only)."""
    try:
        values = _shared_values(bars, tuple(columns))
    except AnalyticsError:
        values = _checked(bars, columns, what, hint)  # the same error, in the caller's words
    if len(values) < min_bars:
        raise InsufficientData(what, min_bars, len(values))
    return values


@shared
def _shared_values(bars: pd.DataFrame, columns: tuple[str, ...]) -> np.ndarray:
    """The checked columns, once per frame: each indicator of a snapshot checks them."""
    return _checked(bars, columns, "bars", "")


def _checked(bars: pd.DataFrame, columns: Sequence[str], what: str, hint: str) -> np.ndarray:
    if not isinstance(bars, pd.DataFrame):
        raise InvalidInput(f"{what}: expected a DataFrame of bars, got {type(bars).__name__}")
    present = {c: bars[c] for c in columns if c in bars.columns}  # each column read once
    missing = [c for c in columns if c not in present or _all_missing(present[c])]
    if "close" in missing and not _absent(bars, "adj_close"):
        hint = (
            "the series has adj_close but no close: rename it, "
            "bars.rename(columns={'adj_close': 'close'})"
        )
    if missing:
        raise MissingColumns(what, missing, hint)
    _check_index(bars.index, what)
    values = np.column_stack([present[c].to_numpy(dtype=np.float64) for c in columns])
    _check_values(values, columns, what)
    values.flags.writeable = False  # shared between the computations over the frame
    return values


def as_close(data: pd.DataFrame | pd.Series, *, min_bars: int, what: str) -> pd.Series:
    """Validate a close series (or a frame with a ``close`` column) and return it as float64."""
    if isinstance(data, pd.Series):
        # Built from the array with a plain label: to_frame makes a pandas string index.
        frame = pd.DataFrame(data.to_numpy()[:, None], index=data.index, columns=_CLOSE)
    elif isinstance(data, pd.DataFrame):
        frame = data
    else:
        raise InvalidInput(
            f"{what}: expected a DataFrame of bars or a Series of closes, got {type(data).__name__}"
        )
    values = _validated(frame, ["close"], min_bars=min_bars, what=what)
    return pd.Series(values[:, 0], index=frame.index, name="close")
