"""Corporate actions and prices as they traded.

Bars are stored *as traded*: each day's open, high, low and close are the prices of that
day, in the shares of that day. A reader at ``as_of`` sees them on the ``as_of`` basis
(:func:`on_basis`): the last bar as traded, each earlier bar divided by the splits
effective between it and ``as_of`` (volume multiplied), so a chart has no split gap and
nothing depends on an action dated after ``as_of``. ``adj_close`` (a source's total-return
close, scaled by every action up to its own vintage) is rebased so that it equals the
close at ``as_of``: a later action scales the whole window alike and so drops out.

:func:`to_traded` is the inverse the bundle builder applies once to a source published
split-adjusted as of some later date.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, replace
from datetime import date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from .calendar import NEW_YORK
from .models import DividendRecord, Dividends, Provenance

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from .bars import Bars

__all__ = [
    "MARKET_OPEN",
    "ActionTable",
    "Dividend",
    "Split",
    "dividend_cash",
    "dividend_timeline",
    "dividends_on_bars",
    "on_basis",
    "split_factors",
    "to_traded",
]

# A split takes effect at the open of its ex-date: the first price in the new shares.
MARKET_OPEN = time(9, 30)
_PRICE_COLUMNS = ("open", "high", "low", "close", "vwap")


@dataclass(frozen=True, slots=True)
class Split:
    """A stock split (or reverse split) of one symbol.

    Attributes:
        symbol: The ticker of the data.
        ex_date: The first session traded in the new shares.
        ratio: New shares per old share: 4.0 for 4-for-1, 1.5 for 3-for-2, 0.125 for
            a 1-for-8 reverse split.
        source: The public record it was compiled from.
    """

    symbol: str
    ex_date: date
    ratio: float
    source: str = ""

    @property
    def effective(self) -> datetime:
        """The instant the split takes effect: the open of the ex-date in New York."""
        return datetime.combine(self.ex_date, MARKET_OPEN, tzinfo=ZoneInfo(NEW_YORK))


@dataclass(frozen=True, slots=True)
class Dividend:
    """A cash dividend of one symbol, per share as traded on its ex-date.

    Attributes:
        symbol: The ticker of the data.
        ex_date: The first session traded without it: holders at the previous close are
            paid (a short position pays it).
        amount: Cash per share, in the shares of the ex-date.
        declared: The declaration date, when the record has it.
        pay_date: The payment date, when the record has it.
        source: The public record it was compiled from.
    """

    symbol: str
    ex_date: date
    amount: float
    declared: date | None = None
    pay_date: date | None = None
    source: str = ""

    @property
    def effective(self) -> datetime:
        """The open of the ex-date in New York: the price drops by the amount then."""
        return datetime.combine(self.ex_date, MARKET_OPEN, tzinfo=ZoneInfo(NEW_YORK))

    @property
    def known_at(self) -> datetime:
        """When it was public: the declaration day's open, else the ex-date's open."""
        day = self.declared if self.declared and self.declared <= self.ex_date else self.ex_date
        return datetime.combine(day, MARKET_OPEN, tzinfo=ZoneInfo(NEW_YORK))


class ActionTable:
    """The corporate actions known for a set of symbols, read from a CSV file.

    Columns: ``symbol, ex_date, kind`` and ``ratio`` (``kind`` ``split``) or ``amount``
    (``kind`` ``dividend``, with optional ``declared`` and ``pay_date``), optionally
    ``source``.
    """

    def __init__(self, splits: list[Split], dividends: list[Dividend] | None = None) -> None:
        self._splits: dict[str, list[Split]] = {}
        for split in sorted(splits, key=lambda s: s.ex_date):
            self._splits.setdefault(split.symbol, []).append(split)
        self._dividends: dict[str, list[Dividend]] = {}
        for dividend in sorted(dividends or [], key=lambda d: d.ex_date):
            self._dividends.setdefault(dividend.symbol, []).append(dividend)

    @classmethod
    def read(cls, path: Path) -> ActionTable:
        """Read ``path``.

        Raises:
            ValueError: A row with an unknown kind, a bad date or a non-positive ratio
                (the message names the file and line).
        """
        splits, dividends = [], []
        with path.open(newline="") as handle:
            for line, row in enumerate(csv.DictReader(handle), start=2):
                try:
                    if row.get("kind") == "dividend":
                        dividends.append(_dividend(row))
                    else:
                        splits.append(_split(row))
                except (KeyError, TypeError, ValueError) as exc:
                    raise ValueError(f"{path}:{line}: {exc}; fix or remove the row") from exc
        return cls(splits, dividends)

    def splits(self, symbol: str) -> list[Split]:
        """The splits of ``symbol`` by ex-date (empty when it has none)."""
        return list(self._splits.get(symbol, []))

    def dividends(self, symbol: str) -> list[Dividend]:
        """The cash dividends of ``symbol`` by ex-date (empty when it has none recorded)."""
        return list(self._dividends.get(symbol, []))

    def dividends_known(self, symbol: str, as_of: datetime) -> list[Dividend]:
        """The dividends of ``symbol`` public at ``as_of`` (declared by then)."""
        return [d for d in self._dividends.get(symbol, []) if d.known_at <= as_of]

    def symbols(self) -> list[str]:
        """Symbols with at least one split."""
        return sorted(self._splits)

    def dividend_symbols(self) -> list[str]:
        """Symbols with at least one dividend record."""
        return sorted(self._dividends)


def _day(text: str | None) -> date | None:
    return date.fromisoformat(text) if text else None


def _dividend(row: dict[str, str]) -> Dividend:
    amount = float(row["amount"])
    if not amount > 0:
        raise ValueError(f"dividend amount must be positive, got {row['amount']!r}")
    return Dividend(
        row["symbol"],
        date.fromisoformat(row["ex_date"]),
        amount,
        _day(row.get("declared")),
        _day(row.get("pay_date")),
        row.get("source") or "",
    )


def _split(row: dict[str, str]) -> Split:
    if row["kind"] != "split":
        raise ValueError(f"unknown action kind {row['kind']!r} (expected 'split' or 'dividend')")
    ratio = float(row["ratio"])
    if not ratio > 0:
        raise ValueError(f"split ratio must be positive, got {row['ratio']!r}")
    return Split(row["symbol"], date.fromisoformat(row["ex_date"]), ratio, row.get("source", ""))


def split_factors(index: pd.DatetimeIndex, splits: list[Split], until: datetime) -> np.ndarray:
    """Per bar, the product of the ratios of the splits effective after it and by ``until``.

    Args:
        index: Bar close times (tz-aware).
        splits: The symbol's splits.
        until: The basis instant: splits effective later are ignored.
    """
    import numpy as np
    import pandas as pd

    times = np.asarray(index.as_unit("ns").asi8)
    limit = pd.Timestamp(until).value
    factors = np.ones(len(index))
    for split in splits:
        effective = pd.Timestamp(split.effective).value
        if effective <= limit:
            factors[: int(np.searchsorted(times, effective))] *= split.ratio  # sorted bars
    return factors


def on_basis(bars: Bars, splits: list[Split], as_of: datetime) -> Bars:
    """``bars`` (stored as traded, closed by ``as_of``) on the ``as_of`` basis.

    Prices before a split effective by ``as_of`` are divided by its ratio and volumes
    multiplied; ``adj_close`` is rebased to equal the close of the last bar. Actions
    after ``as_of`` are never read. :attr:`Bars.basis` says what was done.
    """
    import numpy as np
    import pandas as pd

    columns = list(bars.frame.columns)
    values = bars.frame.to_numpy(dtype=np.float64, copy=True)  # numpy: pandas ops cost more
    factors = split_factors(bars.frame.index, splits, as_of)
    for name in _PRICE_COLUMNS:
        values[:, columns.index(name)] /= factors
    values[:, columns.index("volume")] *= factors
    close, adj = values[:, columns.index("close")], values[:, columns.index("adj_close")]
    if {"close", "adj_close"} <= bars.fields:
        both = np.flatnonzero(~np.isnan(close) & ~np.isnan(adj))
        if both.size:
            adj *= close[both[-1]] / adj[both[-1]]
    elif "adj_close" in bars.fields:
        adj /= factors
    frame = pd.DataFrame(values, index=bars.frame.index, columns=bars.frame.columns)
    first = bars.first_time
    applied = [s for s in splits if first is not None and first < s.effective <= as_of]
    return replace(bars, frame=frame, basis=_basis_note(bars, applied))


def _basis_note(bars: Bars, applied: list[Split]) -> str:
    last = bars.last_time
    day = last.date().isoformat() if last else "the last bar"
    if "close" in bars.fields:
        head = f"as traded on {day}"
    else:
        head = f"adjusted close of {day} (the source has no as-traded close)"
    if not applied:
        return f"{head}; no split in the data up to that date"
    latest = applied[-1]
    return (
        f"{head}; earlier bars adjusted for the splits up to that date (latest "
        f"{_ratio_text(latest.ratio)} on {latest.ex_date.isoformat()})"
    )


def _ratio_text(ratio: float) -> str:
    if ratio >= 1:
        whole = round(ratio)
        if abs(ratio - whole) < 1e-9:
            return f"{whole}:1"
        if abs(ratio * 2 - round(ratio * 2)) < 1e-9:
            return f"{round(ratio * 2)}:2"
        return f"{ratio:g}:1"
    return f"1:{1 / ratio:g}"


def dividend_timeline(
    symbol: str,
    records: list[Dividend],
    splits: list[Split],
    as_of: datetime,
    provenance: Provenance,
) -> Dividends:
    """``records`` as a provider answers them at ``as_of``, each known from
    :attr:`Dividend.known_at`, its ``basis_amount`` in the shares of ``as_of``."""
    items = [
        DividendRecord(
            known_at=d.known_at,
            ex_date=d.ex_date,
            amount=d.amount,
            basis_amount=d.amount / _later_splits(d, splits, as_of),
            declared=d.declared,
            pay_date=d.pay_date,
        )
        for d in records
    ]
    return Dividends(symbol=symbol, items=items, provenance=provenance)


def _later_splits(dividend: Dividend, splits: list[Split], as_of: datetime) -> float:
    """The product of the ratios of the splits after ``dividend`` and by ``as_of``."""
    factor = 1.0
    for split in splits:
        if dividend.effective < split.effective <= as_of:
            factor *= split.ratio
    return factor


def dividend_cash(index: pd.DatetimeIndex, dividends: Dividends, as_of: datetime) -> pd.Series:
    """:func:`dividends_on_bars` of a provider's answer (its ``basis_amount``: already on
    the basis of the bars read at ``as_of``)."""
    records = [
        Dividend(dividends.symbol, r.ex_date, r.basis_amount, r.declared) for r in dividends.items
    ]
    return dividends_on_bars(index, records, [], as_of)


def dividends_on_bars(
    index: pd.DatetimeIndex, dividends: list[Dividend], splits: list[Split], as_of: datetime
) -> pd.Series:
    """Cash per share each bar pays its holders at the previous close: a dividend on the
    first bar of its ex-date, on the ``as_of`` basis of the bars (divided by the splits
    effective after it and by ``as_of``). Dividends not yet declared at ``as_of`` or with
    an ex-date after it are left out."""
    import numpy as np
    import pandas as pd

    out = np.zeros(len(index))
    times = np.asarray(index.as_unit("ns").asi8)
    for dividend in dividends:
        if dividend.known_at > as_of or dividend.effective > as_of:
            continue
        at = int(np.searchsorted(times, pd.Timestamp(dividend.effective).value))
        if at >= len(index) or index[at].date() != dividend.ex_date:
            continue  # no bar on its ex-date in these bars
        out[at] += dividend.amount / _later_splits(dividend, splits, as_of)
    return pd.Series(out, index=index, name="dividend")


def to_traded(frame: pd.DataFrame, splits: list[Split], basis: datetime) -> pd.DataFrame:
    """Undo a source's split adjustment: ``frame`` is split-adjusted as of ``basis``.

    Prices before each split effective by ``basis`` are multiplied by its ratio (volumes
    divided), giving the prices of each bar's own day. ``adj_close`` is left alone unless
    it is the only price (then it becomes a dividend-adjusted close in each day's shares).
    """
    traded = frame.copy()
    factors = split_factors(traded.index, splits, basis)
    prices = _PRICE_COLUMNS if "close" in traded else ("adj_close",)
    for column in prices:
        if column in traded:
            traded[column] = traded[column] * factors
    if "volume" in traded:
        traded["volume"] = traded["volume"] / factors
    return traded
