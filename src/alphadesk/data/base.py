"""The provider protocol and the base class that guards its boundary.

Every method takes a symbol and an ``as_of`` instant and returns a typed result with
provenance. :class:`Provider` implements the public methods once: it normalises the
symbol, checks ``as_of``, calls the subclass's ``_hook``, and passes the answer through
:func:`~alphadesk.data.pit.point_in_time` before it leaves. Subclasses override only the
hooks of the data kinds they serve; any other kind raises :class:`NotSupported`.

Methods are synchronous (sources such as yfinance are); an async tool calls them through
``asyncio.to_thread``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from typing import ClassVar, Protocol, TypeVar, runtime_checkable

from .actions import Split, on_basis
from .bars import Bars
from .errors import NoData, NotSupported
from .models import (
    AnalystRatings,
    Coverage,
    Dividends,
    Earnings,
    Filings,
    Fundamentals,
    Instrument,
    News,
    OptionChain,
    Quote,
    ShortInterest,
)
from .pit import point_in_time, require_aware
from .symbols import close_matches, normalize_symbol

__all__ = [
    "INTRADAY_INTERVALS",
    "Clock",
    "DataKind",
    "IvHistorySource",
    "MarketData",
    "Provider",
    "provider_of",
    "utc_now",
]

Clock = Callable[[], datetime]

INTRADAY_INTERVALS = ("1m", "2m", "5m", "15m", "30m", "60m", "90m", "1h")
# A daily series whose last bar is older than this at as_of is stale, not current.
DAILY_STALE_AFTER = timedelta(days=10)
INTRADAY_STALE_AFTER = timedelta(days=5)


def utc_now() -> datetime:
    """The current instant in UTC (the default clock of every provider)."""
    return datetime.now(UTC)


class DataKind(StrEnum):
    """The kinds of data a provider may serve (one per protocol method)."""

    DAILY_BARS = "daily_bars"
    INTRADAY_BARS = "intraday_bars"
    QUOTE = "quote"
    OPTION_CHAIN = "option_chain"
    INSTRUMENT = "instrument"
    FUNDAMENTALS = "fundamentals"
    NEWS = "news"
    EARNINGS = "earnings"
    SHORT_INTEREST = "short_interest"
    ANALYST_RATINGS = "analyst_ratings"
    FILINGS = "filings"
    DIVIDENDS = "dividends"


# The provider to add for a kind no configured one serves (else yahoo, online).
_SERVED_BY = {DataKind.FILINGS: "sec", DataKind.FUNDAMENTALS: "sec"}


def provider_of(kind: DataKind) -> str:
    """The provider that serves ``kind``, to name when the configured ones do not."""
    return _SERVED_BY.get(kind, "yahoo")


@runtime_checkable
class MarketData(Protocol):
    """What the rest of alphadesk calls. Nothing returned was unknown at ``as_of``."""

    @property
    def name(self) -> str: ...

    def supports(self, kind: DataKind) -> bool: ...

    def universe(self) -> list[str]: ...

    def coverage(self) -> list[Coverage]: ...

    def daily_bars(self, symbol: str, as_of: datetime, *, start: date | None = None) -> Bars: ...

    def intraday_bars(
        self, symbol: str, as_of: datetime, *, interval: str = "5m", start: date | None = None
    ) -> Bars: ...

    def quote(self, symbol: str, as_of: datetime) -> Quote: ...

    def option_chain(
        self, symbol: str, as_of: datetime, *, min_dte: int = 0, max_dte: int = 60
    ) -> OptionChain: ...

    def instrument(self, symbol: str, as_of: datetime) -> Instrument: ...

    def fundamentals(self, symbol: str, as_of: datetime) -> Fundamentals: ...

    def news(self, symbol: str, as_of: datetime, *, days: int = 7, limit: int = 50) -> News: ...

    def earnings(self, symbol: str, as_of: datetime) -> Earnings: ...

    def short_interest(self, symbol: str, as_of: datetime) -> ShortInterest: ...

    def analyst_ratings(
        self, symbol: str, as_of: datetime, *, days: int = 365
    ) -> AnalystRatings: ...

    def filings(
        self,
        symbol: str,
        as_of: datetime,
        *,
        forms: Sequence[str] | None = None,
        limit: int = 20,
    ) -> Filings: ...

    def dividends(self, symbol: str, as_of: datetime) -> Dividends: ...


@runtime_checkable
class IvHistorySource(Protocol):
    """A provider that computes an at-the-money IV history without building past chains
    (the modeled chains do; a walk through ``option_chain`` gives the same numbers)."""

    @property
    def name(self) -> str: ...

    def atm_iv_history(
        self,
        symbol: str,
        instants: Sequence[datetime],
        *,
        min_dte: int,
        max_dte: int,
        target_dte: int,
    ) -> list[float]: ...


class Provider:
    """Base class of every provider; see the module docstring for the contract.

    Args:
        clock: Returns "now" (tz-aware); tests pass a fixed clock.
    """

    name: ClassVar[str] = "provider"
    kinds: ClassVar[frozenset[DataKind]] = frozenset()

    def __init__(self, *, clock: Clock = utc_now) -> None:
        self._clock = clock

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def supports(self, kind: DataKind) -> bool:
        """Whether this provider serves ``kind`` at all."""
        return kind in self.kinds

    def universe(self) -> list[str]:
        """Symbols this provider is known to hold (empty when it cannot list them)."""
        return []

    def coverage(self) -> list[Coverage]:
        """What this provider holds per symbol (empty when it cannot list it)."""
        return []

    # -- the boundary ------------------------------------------------------------------

    def _begin(self, kind: DataKind, symbol: str, as_of: datetime) -> tuple[str, datetime]:
        if kind not in self.kinds:
            raise NotSupported(
                f"the {self.name} provider does not serve {kind.value.replace('_', ' ')}; "
                f"add {provider_of(kind)} to `data.providers` in the settings",
                provider=self.name,
            )
        return normalize_symbol(symbol), require_aware(as_of)

    def unknown_symbol(self, symbol: str, what: str = "data") -> NoData:
        """A NoData for a symbol this provider does not hold, with close matches."""
        universe = self.universe()
        matches = close_matches(symbol, universe)
        hint = f"; did you mean {', '.join(matches)}?" if matches else ""
        listing = " (see `alphadesk data list`)" if universe else ""
        return NoData(
            f"{self.name} has no {what} for {symbol}{hint}{listing}",
            provider=self.name,
            suggestions=matches,
        )

    def daily_bars(self, symbol: str, as_of: datetime, *, start: date | None = None) -> Bars:
        """Daily bars closed at or before ``as_of`` (from ``start`` when given)."""
        sym, when = self._begin(DataKind.DAILY_BARS, symbol, as_of)
        bars = point_in_time(self._daily_bars(sym, when), when)
        _require_fresh(bars, when, DAILY_STALE_AFTER)
        splits = self._splits(sym)
        if splits is not None:
            # Stored as traded: put the bars on the as_of basis (never a later action).
            bars = on_basis(bars, [s for s in splits if s.effective <= when], when)
        return bars.since(start)

    def intraday_bars(
        self, symbol: str, as_of: datetime, *, interval: str = "5m", start: date | None = None
    ) -> Bars:
        """Intraday bars of ``interval`` closed at or before ``as_of``."""
        sym, when = self._begin(DataKind.INTRADAY_BARS, symbol, as_of)
        if interval not in INTRADAY_INTERVALS:
            raise ValueError(
                f"interval {interval!r} is not an intraday interval; use one of "
                f"{', '.join(INTRADAY_INTERVALS)}"
            )
        bars = point_in_time(self._intraday_bars(sym, when, interval), when)
        _require_fresh(bars, when, INTRADAY_STALE_AFTER)
        return bars.since(start)

    def quote(self, symbol: str, as_of: datetime) -> Quote:
        """The latest price known at ``as_of``."""
        sym, when = self._begin(DataKind.QUOTE, symbol, as_of)
        quote = point_in_time(self._quote(sym, when), when)
        if quote.basis == "last_trade" or self._splits(sym) is not None:
            quote = quote.model_copy(update={"as_traded": True})
        if quote.basis != "last_trade" and when - quote.observed_at > DAILY_STALE_AFTER:
            raise NoData(
                f"{sym}: the last {quote.provenance.provider} close is of "
                f"{quote.observed_at.date()}, more than {DAILY_STALE_AFTER.days} days before "
                f"as_of {when.date()}; use an as_of within the data's range",
                provider=quote.provenance.provider,
            )
        return quote

    def option_chain(
        self, symbol: str, as_of: datetime, *, min_dte: int = 0, max_dte: int = 60
    ) -> OptionChain:
        """Calls and puts of the expirations ``min_dte``..``max_dte`` calendar days out."""
        sym, when = self._begin(DataKind.OPTION_CHAIN, symbol, as_of)
        if min_dte < 0 or max_dte < min_dte:
            raise ValueError(f"need 0 <= min_dte <= max_dte, got {min_dte}..{max_dte}")
        chain = point_in_time(self._option_chain(sym, when, min_dte, max_dte), when)
        kept = [c for c in chain.contracts if min_dte <= c.dte <= max_dte]
        expirations = sorted({c.expiration for c in kept})
        if not kept:
            raise NoData(
                f"{sym}: {chain.provenance.provider} has no option expiring {min_dte}-{max_dte} "
                f"days after {when.date()}; widen the DTE window",
                provider=chain.provenance.provider,
            )
        return chain.model_copy(update={"contracts": kept, "expirations": expirations})

    def instrument(self, symbol: str, as_of: datetime) -> Instrument:
        """Name, asset type, exchange and sector."""
        sym, when = self._begin(DataKind.INSTRUMENT, symbol, as_of)
        return point_in_time(self._instrument(sym, when), when)

    def fundamentals(self, symbol: str, as_of: datetime) -> Fundamentals:
        """Financial-statement facts filed at or before ``as_of``."""
        sym, when = self._begin(DataKind.FUNDAMENTALS, symbol, as_of)
        return _sorted(point_in_time(self._fundamentals(sym, when), when))

    def news(self, symbol: str, as_of: datetime, *, days: int = 7, limit: int = 50) -> News:
        """News published in the ``days`` before ``as_of`` (the newest ``limit`` items)."""
        sym, when = self._begin(DataKind.NEWS, symbol, as_of)
        news = _sorted(point_in_time(self._news(sym, when), when))
        since = when - timedelta(days=days)
        items = [n for n in news.items if n.known_at >= since][-limit:]
        return news.model_copy(update={"items": items})

    def earnings(self, symbol: str, as_of: datetime) -> Earnings:
        """Earnings releases known at ``as_of`` (past results; upcoming dates if announced)."""
        sym, when = self._begin(DataKind.EARNINGS, symbol, as_of)
        return _sorted(point_in_time(self._earnings(sym, when), when))

    def short_interest(self, symbol: str, as_of: datetime) -> ShortInterest:
        """The latest short-interest figure known at ``as_of``."""
        sym, when = self._begin(DataKind.SHORT_INTEREST, symbol, as_of)
        return point_in_time(self._short_interest(sym, when), when)

    def analyst_ratings(self, symbol: str, as_of: datetime, *, days: int = 365) -> AnalystRatings:
        """Rating actions published in the ``days`` before ``as_of``."""
        sym, when = self._begin(DataKind.ANALYST_RATINGS, symbol, as_of)
        ratings = _sorted(point_in_time(self._analyst_ratings(sym, when), when))
        since = when - timedelta(days=days)
        items = [r for r in ratings.items if r.known_at >= since]
        return ratings.model_copy(update={"items": items})

    def filings(
        self,
        symbol: str,
        as_of: datetime,
        *,
        forms: Sequence[str] | None = None,
        limit: int = 20,
    ) -> Filings:
        """The newest ``limit`` filings accepted at or before ``as_of`` (of ``forms``)."""
        sym, when = self._begin(DataKind.FILINGS, symbol, as_of)
        filings = _sorted(point_in_time(self._filings(sym, when), when))
        wanted = {f.upper() for f in forms} if forms else None
        items = [f for f in filings.items if wanted is None or f.form.upper() in wanted]
        return filings.model_copy(update={"items": items[-limit:]})

    def dividends(self, symbol: str, as_of: datetime) -> Dividends:
        """The cash dividends declared at or before ``as_of``, by declaration (an
        ex-date may be later). A provider without records for ``symbol`` raises
        :class:`NoData`, so a chain asks the next one; an empty answer means records
        exist and none was declared by then."""
        sym, when = self._begin(DataKind.DIVIDENDS, symbol, as_of)
        return _sorted(point_in_time(self._dividends(sym, when), when))

    # -- hooks: override the ones the provider serves -----------------------------------

    def _unsupported(self, kind: DataKind) -> NotSupported:
        return NotSupported(
            f"the {self.name} provider does not serve {kind.value}", provider=self.name
        )

    def _daily_bars(self, symbol: str, as_of: datetime) -> Bars:
        raise self._unsupported(DataKind.DAILY_BARS)

    def _splits(self, symbol: str) -> list[Split] | None:
        """The splits of ``symbol`` when its daily bars are stored as traded, else None
        (the bars are then served on whatever basis the source gives them)."""
        return None

    def _intraday_bars(self, symbol: str, as_of: datetime, interval: str) -> Bars:
        raise self._unsupported(DataKind.INTRADAY_BARS)

    def _quote(self, symbol: str, as_of: datetime) -> Quote:
        raise self._unsupported(DataKind.QUOTE)

    def _option_chain(
        self, symbol: str, as_of: datetime, min_dte: int, max_dte: int
    ) -> OptionChain:
        raise self._unsupported(DataKind.OPTION_CHAIN)

    def _instrument(self, symbol: str, as_of: datetime) -> Instrument:
        raise self._unsupported(DataKind.INSTRUMENT)

    def _fundamentals(self, symbol: str, as_of: datetime) -> Fundamentals:
        raise self._unsupported(DataKind.FUNDAMENTALS)

    def _news(self, symbol: str, as_of: datetime) -> News:
        raise self._unsupported(DataKind.NEWS)

    def _earnings(self, symbol: str, as_of: datetime) -> Earnings:
        raise self._unsupported(DataKind.EARNINGS)

    def _short_interest(self, symbol: str, as_of: datetime) -> ShortInterest:
        raise self._unsupported(DataKind.SHORT_INTEREST)

    def _analyst_ratings(self, symbol: str, as_of: datetime) -> AnalystRatings:
        raise self._unsupported(DataKind.ANALYST_RATINGS)

    def _dividends(self, symbol: str, as_of: datetime) -> Dividends:
        raise self._unsupported(DataKind.DIVIDENDS)

    def _filings(self, symbol: str, as_of: datetime) -> Filings:
        raise self._unsupported(DataKind.FILINGS)


_TimelineT = TypeVar("_TimelineT", News, Earnings, AnalystRatings, Filings, Fundamentals, Dividends)


def _sorted(timeline: _TimelineT) -> _TimelineT:
    items = sorted(timeline.items, key=lambda item: item.known_at)
    return timeline.model_copy(update={"items": items})


def _require_fresh(bars: Bars, as_of: datetime, limit: timedelta) -> None:
    last = bars.last_time
    if last is not None and as_of - last > limit:
        raise NoData(
            f"{bars.symbol}: the {bars.provenance.provider} {bars.interval} bars end "
            f"{last.date()}, more than {limit.days} days before as_of {as_of.date()}; "
            "use an as_of within the data's range (see `alphadesk data list`) or a provider "
            "with newer data",
            provider=bars.provenance.provider,
        )
