"""Index membership at a date: survivorship-free universes.

A screen of "the S&P 500" on 2015-06-30 must use the members of that day, including the
companies later dropped or delisted, and not today's list. The bundled tables (adapted
from index-constitution, built from Wikipedia; see the bundle's NOTICE) give each
member's join and leave dates under its current ticker, and the ticker changes that map a
current ticker back to the one traded on a past date (META was FB until 2022-06-09).
"""

from __future__ import annotations

import csv
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import TypeVar

from .models import Coverage

__all__ = [
    "INDICES",
    "IndexMembership",
    "Member",
    "bundled_membership",
    "covering",
    "with_data",
]

T = TypeVar("T")

# A series whose last bar is this much older than a date has no data for it (as the
# providers' staleness rule says).
_STALE = timedelta(days=10)

# The indices with membership history, by the name the CLI takes.
INDICES: dict[str, str] = {
    "sp500": "S&P 500",
    "nasdaq100": "NASDAQ-100",
    "dow30": "Dow Jones Industrial Average",
}


@dataclass(frozen=True, slots=True)
class Member:
    """A member of an index on a date.

    Attributes:
        symbol: The ticker it traded under on that date.
        current: Its ticker in the membership table (the latest one).
        name: Company name as the table records it.
    """

    symbol: str
    current: str
    name: str


@dataclass(frozen=True, slots=True)
class _Spell:
    index: str
    symbol: str
    name: str
    start: date
    end: date | None  # the first day it was no longer a member


class IndexMembership:
    """Membership spells and ticker changes, read from two CSV files.

    Args:
        membership: Columns ``index, symbol, name, start, end`` (``end`` empty while a
            member; a member on ``start``, no longer on ``end``).
        ticker_changes: Columns ``date, old, new``: from ``date`` on, ``old`` trades as
            ``new``.
    """

    def __init__(self, membership: Path, ticker_changes: Path) -> None:
        self._spells = _parse(membership, _spell)
        self._changes = _parse(
            ticker_changes, lambda r: (date.fromisoformat(r["date"]), r["old"], r["new"])
        )

    def members(self, index: str, day: date) -> list[Member]:
        """The members of ``index`` on ``day``, under the tickers of that day.

        Raises:
            ValueError: An unknown index (the message lists the known ones).
        """
        if index not in INDICES:
            raise ValueError(f"unknown index {index!r}; use one of {', '.join(INDICES)}")
        found = [
            Member(self.ticker_on(s.symbol, day), s.symbol, s.name)
            for s in self._spells
            if s.index == index and s.start <= day and (s.end is None or day < s.end)
        ]
        return sorted(found, key=lambda m: m.symbol)

    def first_day(self, index: str) -> date:
        """The earliest join date the table has for ``index``."""
        return min(s.start for s in self._spells if s.index == index)

    def ticker_on(self, symbol: str, day: date) -> str:
        """The ticker that ``symbol`` (a later ticker) traded under on ``day``."""
        current = symbol
        for when, old, new in sorted(self._changes, reverse=True):
            if new == current and day < when:
                current = old
        return current


@functools.cache
def bundled_membership() -> IndexMembership:
    """The membership tables shipped with alphadesk."""
    from .providers.bundled import BUNDLED_DIR

    return IndexMembership(BUNDLED_DIR / "membership.csv", BUNDLED_DIR / "ticker_changes.csv")


def with_data(
    members: Sequence[Member], coverage: Sequence[Coverage], day: date
) -> tuple[list[str], list[Member]]:
    """Split ``members`` into the symbols with daily bars on ``day`` and those without."""
    covered = {
        c.symbol
        for c in coverage
        if c.start is not None and c.end is not None and c.start <= day <= c.end + _STALE
    }
    have = [m.symbol for m in members if m.symbol in covered]
    return have, [m for m in members if m.symbol not in covered]


def covering(coverage: Sequence[Coverage], first: date, last: date) -> list[str]:
    """The symbols, sorted, whose daily bars run from ``first`` (or before) to the last
    session on or before ``last`` (or after): those with a bar on every session between."""
    from .calendar import sessions_between

    sessions = sessions_between(last - timedelta(days=10), last)
    final = sessions[-1] if sessions else last
    return sorted(
        {
            c.symbol
            for c in coverage
            if c.start is not None and c.end is not None and c.start <= first and c.end >= final
        }
    )


def _parse(path: Path, parse: Callable[[dict[str, str]], T]) -> list[T]:
    """Each row of the CSV file ``path`` parsed; a bad row names its file and line."""
    parsed = []
    with path.open(newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            try:
                parsed.append(parse(row))
            except (KeyError, ValueError) as exc:
                raise ValueError(
                    f"{path}:{line}: {exc}; fix the row or rebuild the bundle"
                ) from exc
    return parsed


def _spell(row: dict[str, str]) -> _Spell:
    end = row["end"]
    return _Spell(
        row["index"],
        row["symbol"],
        row["name"],
        date.fromisoformat(row["start"]),
        date.fromisoformat(end) if end else None,
    )
