"""Price bars: a typed wrapper around a pandas frame.

The frame always has the seven columns of :data:`BAR_FIELDS` (float64) and a tz-aware
``close_time`` index: the instant each bar closed and so became known (a daily bar at its
session close, an intraday bar at its end). A column the source does not have is all NaN
and absent from :attr:`Bars.fields`: nothing is invented (a close-only series has no high).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import TYPE_CHECKING

from .errors import NoData
from .models import Provenance

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BAR_FIELDS", "Bars"]

BAR_FIELDS: tuple[str, ...] = ("open", "high", "low", "close", "adj_close", "volume", "vwap")
INDEX_NAME = "close_time"


@dataclass(frozen=True, slots=True)
class Bars:
    """Bars of one symbol at one interval.

    Attributes:
        symbol: Canonical symbol.
        interval: ``"1d"`` for daily bars, else e.g. ``"5m"``, ``"1h"``.
        frame: Columns :data:`BAR_FIELDS`, index ``close_time`` (tz-aware, increasing).
        fields: The columns that carry data; the others are missing at the source.
        provenance: Who answered and how.
        basis: What the price levels are relative to corporate actions, e.g. "as traded
            on 2021-06-30; earlier bars adjusted for the splits up to that date (...)";
            empty when the source does not say.
    """

    symbol: str
    interval: str
    frame: pd.DataFrame
    fields: frozenset[str]
    provenance: Provenance
    basis: str = ""

    @classmethod
    def create(
        cls, symbol: str, interval: str, frame: pd.DataFrame, provenance: Provenance
    ) -> Bars:
        """Validate and normalise ``frame`` (lower-case columns, missing ones as NaN).

        Raises:
            ValueError: A naive or non-datetime index, or unknown columns.
        """
        import numpy as np
        import pandas as pd

        index = frame.index
        if not isinstance(index, pd.DatetimeIndex) or index.tz is None:
            raise ValueError(f"{symbol}: bars need a tz-aware DatetimeIndex of close times")
        unknown = set(frame.columns) - set(BAR_FIELDS)
        if unknown:
            raise ValueError(f"{symbol}: unknown bar columns {sorted(unknown)}")
        data = frame.reindex(columns=list(BAR_FIELDS)).astype(np.float64)
        data = data[~data.index.duplicated(keep="last")].sort_index()
        data.index.name = INDEX_NAME
        present = data.notna().to_numpy().any(axis=0)
        fields = frozenset(c for c, ok in zip(BAR_FIELDS, present, strict=True) if ok)
        missing = [c for c in BAR_FIELDS if c not in fields]
        if missing and set(missing) != set(provenance.missing):
            provenance = provenance.model_copy(update={"missing": missing})
        return cls(symbol, interval, data, fields, provenance)

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def missing(self) -> list[str]:
        """The bar fields the source does not have."""
        return [c for c in BAR_FIELDS if c not in self.fields]

    @property
    def first_time(self) -> datetime | None:
        """Close time of the first bar."""
        return None if self.frame.empty else self.frame.index[0].to_pydatetime()

    @property
    def last_time(self) -> datetime | None:
        """Close time of the last bar: when the newest number here became known."""
        return None if self.frame.empty else self.frame.index[-1].to_pydatetime()

    def upto(self, as_of: datetime) -> Bars:
        """Only the bars closed at or before ``as_of``."""
        import pandas as pd

        cut = self.frame.index.searchsorted(pd.Timestamp(as_of), side="right")
        if cut == len(self.frame):
            return self
        return self._window(self.frame.iloc[:cut])

    def _window(self, frame: pd.DataFrame) -> Bars:
        """These bars cut to ``frame``: a spliced series may lack a field before or after
        its seam (an adjusted-close-only source, then OHLCV), so the fields are those the
        window has."""
        import numpy as np

        # One float64 block: numpy reads it without a copy (pandas' notna costs 10x).
        present = ~np.isnan(frame.to_numpy(dtype=np.float64, copy=False)).all(axis=0)
        fields = frozenset(c for c, ok in zip(frame.columns, present, strict=True) if ok)
        return replace(self, frame=frame, fields=fields & self.fields)

    def since(self, start: date | datetime | None) -> Bars:
        """Only the bars of ``start`` and later (a date means that day in the index's zone)."""
        if start is None:
            return self
        import pandas as pd

        tz = self.frame.index.tz
        if isinstance(start, datetime):
            if start.tzinfo is None:
                raise ValueError("start must be a date or a timezone-aware datetime")
            stamp = pd.Timestamp(start)
        else:
            stamp = pd.Timestamp(start).tz_localize(tz)
        cut = self.frame.index.searchsorted(stamp, side="left")
        return self._window(self.frame.iloc[cut:]) if cut else self

    def price_field(self) -> str:
        """``close`` when the source has it, else ``adj_close``.

        Raises:
            NoData: Neither exists.
        """
        for name in ("close", "adj_close"):
            if name in self.fields:
                return name
        raise NoData(f"{self.symbol}: the bars have neither close nor adj_close")

    def prices(self) -> pd.Series:
        """The close series (or the adjusted close for an adjusted-close-only source).

        Levels as traded: use them for a spot price, strikes and price levels. For returns
        and volatility use :meth:`return_prices`.
        """
        name = self.price_field()
        return self.frame[name].dropna()

    def return_prices(self) -> pd.Series:
        """The series to take returns from: ``adj_close`` when the source has it, else ``close``.

        Returns of the adjusted close are free of splits (a 2:1 split is not a 50 % drop),
        so realised volatility and other return statistics read across corporate actions.
        Its *levels* are scaled by actions after each bar (possibly after ``as_of``): never
        use them as prices. The series is named by its column.

        Raises:
            NoData: Neither column exists.
        """
        name = "adj_close" if "adj_close" in self.fields else self.price_field()
        return self.frame[name].dropna()
