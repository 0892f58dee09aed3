"""The risk-free rate known at an instant, from the bundled one-month T-bill series.

The series is the monthly return of a one-month Treasury bill (Fama/French ``RF``), known
from the first day of its month: the bill is bought then. It is turned into a continuously
compounded annual rate, ``r = 12 ln(1 + RF)``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import NoData
from .pit import require_aware
from .providers.bundled import BUNDLED_DIR

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RiskFreeRate", "risk_free_rate"]


@dataclass(frozen=True, slots=True)
class RiskFreeRate:
    """A risk-free rate and where it came from.

    Attributes:
        rate: Continuously compounded annual rate, decimal.
        month: The month of the T-bill return used.
        note: A caveat when the rate is held past the end of the series.
    """

    rate: float
    month: date
    note: str | None


@functools.cache
def _series(root: Path) -> pd.Series:
    import pandas as pd

    frame = pd.read_parquet(root / "rates.parquet")
    return frame["rf_monthly_pct"].astype("float64")


def risk_free_rate(as_of: datetime, root: Path | None = None) -> RiskFreeRate:
    """The one-month T-bill rate in force at ``as_of``.

    Args:
        as_of: The instant (tz-aware).
        root: Bundled data folder (default: the package's).

    Returns:
        The continuous annual rate, and a note when it is held from the last month of data.

    Raises:
        NoData: ``as_of`` is before the series starts.
    """
    as_of = require_aware(as_of)
    return _monthly_rate(root or BUNDLED_DIR, as_of.year, as_of.month)


@functools.lru_cache(maxsize=1024)
def _monthly_rate(root: Path, year: int, month: int) -> RiskFreeRate:
    """The rate in force in a month (the same all month: cached)."""
    import pandas as pd

    series = _series(root.resolve())
    known = series[series.index <= pd.Timestamp(year, month, 1)]
    if known.empty:
        raise NoData(
            f"no risk-free rate before {series.index[0].date()}; pass a later as_of",
            provider="bundled",
        )
    rate = 12.0 * math.log1p(float(known.iloc[-1]) / 100.0)
    last = known.index[-1]
    note = None
    if (last.year, last.month) != (year, month):
        note = (
            f"risk-free rate held at its last bundled value ({last.strftime('%Y-%m')}, "
            f"{rate:.2%}); the series ends there"
        )
    return RiskFreeRate(rate, last.date(), note)
