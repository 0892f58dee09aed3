"""A market seen through a :class:`~alphadesk.data.disguise.Disguise`: asked with disguised
symbols and instants, it asks the real market and disguises the answer, so a desk run on it
sees the same data under other names, price levels and years.

What changes per kind: bars and quotes are rescaled (volume is not) and moved in time;
statement facts in dollars (and dollars per share) scale with the price, share counts and
ratios do not, so every valuation multiple is unchanged; news, filing descriptions, notes
and error messages are rewritten (names, years, dollar amounts), addresses and accession
numbers that would name the filer are replaced. Option chains are modeled on the disguised
bars (:func:`disguised_provider`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from .base import DataKind, MarketData
from .calendar import NEW_YORK
from .disguise import Disguise
from .errors import DataError, NoData, NotSupported
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
    Provenance,
    Quote,
    ShortInterest,
)

if TYPE_CHECKING:
    import pandas as pd

    from .bars import Bars
    from .chain import ProviderChain

__all__ = ["DisguisedMarket", "disguise_of", "disguised_provider"]

_PRICE_FIELDS = ("open", "high", "low", "close", "adj_close", "vwap")
_NS_PER_DAY = 86_400 * 10**9
T = TypeVar("T")


def disguise_of(market: MarketData, symbols: Iterable[str], *, seed: int) -> Disguise:
    """The disguise of ``symbols`` and of every symbol ``market`` holds, with the company
    names its coverage lists."""
    coverage = market.coverage()
    companies = {c.symbol: c.name for c in coverage if c.name}
    held = [*symbols, *market.universe(), *(c.symbol for c in coverage)]
    return Disguise.create(held, seed=seed, companies=companies, taken=held)


def disguised_provider(market: MarketData, disguise: Disguise) -> ProviderChain:
    """``market`` seen through ``disguise``, with option chains modeled on disguised bars."""
    from .chain import ProviderChain
    from .options_model import ModeledOptions

    seen = DisguisedMarket(market, disguise)
    return ProviderChain([seen, ModeledOptions(seen)])


class DisguisedMarket:
    """``inner``'s data through ``disguise``: asked with disguised symbols and instants, it
    asks ``inner`` the real ones and disguises what comes back (errors too).

    It serves no option chain (see the module docstring)."""

    name = "disguised"

    def __init__(self, inner: MarketData, disguise: Disguise) -> None:
        self.inner = inner
        self.disguise = disguise

    def __repr__(self) -> str:
        return f"DisguisedMarket({self.inner!r}, seed={self.disguise.seed})"

    def supports(self, kind: DataKind) -> bool:
        return kind is not DataKind.OPTION_CHAIN and self.inner.supports(kind)

    def universe(self) -> list[str]:
        return sorted(self.disguise.names[s] for s in self.inner.universe())

    def coverage(self) -> list[Coverage]:
        d = self.disguise
        return [
            c.model_copy(
                update={
                    "symbol": d.symbol(c.symbol),
                    "name": c.name if d.kept(c.symbol) else d.company(c.symbol),
                    "start": c.start and d.day(c.start),
                    "end": c.end and d.day(c.end),
                    "source": d.text(c.source),
                    "fundamentals": c.fundamentals and d.text(c.fundamentals),
                    "earnings": c.earnings and d.text(c.earnings),
                }
            )
            for c in self.inner.coverage()
            if c.symbol in d.names
        ]

    # -- asking the real market -------------------------------------------------------------

    def _ask(
        self, symbol: str, as_of: datetime, read: Callable[[str, datetime], T]
    ) -> tuple[str, T]:
        """``read`` of the real symbol at the real instant; a DataError comes back in the
        disguise (its message, suggestions and attempts), of the same type."""
        real = self.disguise.real_symbol(symbol)
        try:
            return real, read(real, self.disguise.real_instant(as_of))
        except DataError as exc:
            self._disguise_error(exc)
            raise

    def _disguise_error(self, exc: DataError) -> None:
        d = self.disguise
        exc.args = tuple(d.text(a) if isinstance(a, str) else a for a in exc.args)
        if isinstance(exc, NoData):
            exc.suggestions = [d.names[s] for s in exc.suggestions if s in d.names]
            exc.attempts = [
                a.model_copy(update={"message": d.text(a.message)}) for a in exc.attempts
            ]

    def _provenance(self, provenance: Provenance, real: str) -> Provenance:
        d = self.disguise
        return provenance.model_copy(
            update={
                "retrieved_at": d.instant(provenance.retrieved_at),
                "source": d.text(provenance.source, real),
                "notes": [d.text(n, real) for n in provenance.notes],
                "attempts": [
                    a.model_copy(update={"message": d.text(a.message, real)})
                    for a in provenance.attempts
                ],
            }
        )

    def _bars(self, bars: Bars, real: str) -> Bars:
        import pandas as pd

        # On the array, not column by column: a desk reads bars many times per decision.
        values = bars.frame.to_numpy(copy=True)
        columns = list(bars.frame.columns)
        values[:, [columns.index(c) for c in _PRICE_FIELDS]] *= self.disguise.factor(real)
        index = _moved_index(bars.frame.index, self.disguise.days)
        frame = pd.DataFrame(values, index=index, columns=bars.frame.columns)
        return replace(
            bars,
            symbol=self.disguise.symbol(real),
            frame=frame,
            provenance=self._provenance(bars.provenance, real),
            basis=self.disguise.text(bars.basis, real),
        )

    # -- the protocol -----------------------------------------------------------------------

    def daily_bars(self, symbol: str, as_of: datetime, *, start: date | None = None) -> Bars:
        since = start and self.disguise.real_day(start)
        real, bars = self._ask(symbol, as_of, lambda s, t: self.inner.daily_bars(s, t, start=since))
        return self._bars(bars, real)

    def intraday_bars(
        self, symbol: str, as_of: datetime, *, interval: str = "5m", start: date | None = None
    ) -> Bars:
        since = start and self.disguise.real_day(start)
        real, bars = self._ask(
            symbol,
            as_of,
            lambda s, t: self.inner.intraday_bars(s, t, interval=interval, start=since),
        )
        return self._bars(bars, real)

    def quote(self, symbol: str, as_of: datetime) -> Quote:
        real, quote = self._ask(symbol, as_of, self.inner.quote)
        f = self.disguise.factor(real)
        return quote.model_copy(
            update={
                **self._snapshot(quote, real),
                "price": quote.price * f,
                "bid": _times(quote.bid, f),
                "ask": _times(quote.ask, f),
            }
        )

    def option_chain(
        self, symbol: str, as_of: datetime, *, min_dte: int = 0, max_dte: int = 60
    ) -> OptionChain:
        raise NotSupported(
            "a disguised market models its option chains from its own bars",
            provider=self.name,
        )

    def instrument(self, symbol: str, as_of: datetime) -> Instrument:
        real, instrument = self._ask(symbol, as_of, self.inner.instrument)
        d = self.disguise
        name = instrument.name if d.kept(real) else d.company(real)
        return instrument.model_copy(update={**self._snapshot(instrument, real), "name": name})

    def short_interest(self, symbol: str, as_of: datetime) -> ShortInterest:
        real, short = self._ask(symbol, as_of, self.inner.short_interest)
        settled = short.settlement_date and self.disguise.day(short.settlement_date)
        return short.model_copy(update={**self._snapshot(short, real), "settlement_date": settled})

    def _snapshot(self, snapshot: Any, real: str) -> dict[str, Any]:
        return {
            "symbol": self.disguise.symbol(real),
            "observed_at": self.disguise.instant(snapshot.observed_at),
            "provenance": self._provenance(snapshot.provenance, real),
        }

    def fundamentals(self, symbol: str, as_of: datetime) -> Fundamentals:
        real, facts = self._ask(symbol, as_of, self.inner.fundamentals)
        d, f = self.disguise, self.disguise.factor(real)
        items = [
            fact.model_copy(
                update={
                    "known_at": d.instant(fact.known_at),
                    # Dollar amounts scale with the price, share counts do not: every
                    # multiple (P/E, P/S, P/B) is the same in the disguise.
                    "value": fact.value * f if "USD" in fact.unit.upper() else fact.value,
                    "start": fact.start and d.day(fact.start),
                    "end": d.day(fact.end),
                    "filed": d.day(fact.filed),
                    "fiscal_year": fact.fiscal_year and fact.fiscal_year + d.years,
                    "accession_number": fact.accession_number and d.token(fact.accession_number),
                }
            )
            for fact in facts.items
        ]
        return self._timeline(facts, real, items)

    def news(self, symbol: str, as_of: datetime, *, days: int = 7, limit: int = 50) -> News:
        real, news = self._ask(
            symbol, as_of, lambda s, t: self.inner.news(s, t, days=days, limit=limit)
        )
        d = self.disguise
        items = [
            item.model_copy(
                update={
                    "known_at": d.instant(item.known_at),
                    "title": d.text(item.title, real),
                    "summary": item.summary and d.text(item.summary, real),
                    "url": None,  # an address names the story, and often the company
                    "publisher": item.publisher and d.text(item.publisher),
                    "tickers": [d.names[t] for t in item.tickers if t in d.names],
                }
            )
            for item in news.items
        ]
        return self._timeline(news, real, items)

    def earnings(self, symbol: str, as_of: datetime) -> Earnings:
        real, earnings = self._ask(symbol, as_of, self.inner.earnings)
        d, f = self.disguise, self.disguise.factor(real)
        items = [
            event.model_copy(
                update={
                    "known_at": d.instant(event.known_at),
                    "time": d.instant(event.time),
                    "eps_estimate": _times(event.eps_estimate, f),
                    "eps_actual": _times(event.eps_actual, f),
                }
            )
            for event in earnings.items
        ]
        return self._timeline(earnings, real, items)

    def analyst_ratings(self, symbol: str, as_of: datetime, *, days: int = 365) -> AnalystRatings:
        real, ratings = self._ask(
            symbol, as_of, lambda s, t: self.inner.analyst_ratings(s, t, days=days)
        )
        d, f = self.disguise, self.disguise.factor(real)
        items = [
            r.model_copy(
                update={
                    "known_at": d.instant(r.known_at),
                    "price_target": _times(r.price_target, f),
                }
            )
            for r in ratings.items
        ]
        return self._timeline(ratings, real, items)

    def filings(
        self,
        symbol: str,
        as_of: datetime,
        *,
        forms: Sequence[str] | None = None,
        limit: int = 20,
    ) -> Filings:
        real, filings = self._ask(
            symbol, as_of, lambda s, t: self.inner.filings(s, t, forms=forms, limit=limit)
        )
        d = self.disguise
        items = [
            f.model_copy(
                update={
                    "known_at": d.instant(f.known_at),
                    "filing_date": d.day(f.filing_date),
                    "report_date": f.report_date and d.day(f.report_date),
                    "accession_number": d.token(f.accession_number),
                    "primary_document": None,  # e.g. aapl-20120929.htm
                    "description": f.description and d.text(f.description, real),
                    "url": None,
                }
            )
            for f in filings.items
        ]
        return self._timeline(filings, real, items)

    def dividends(self, symbol: str, as_of: datetime) -> Dividends:
        real, dividends = self._ask(symbol, as_of, self.inner.dividends)
        d, f = self.disguise, self.disguise.factor(real)
        items = [
            r.model_copy(
                update={
                    "known_at": d.instant(r.known_at),
                    "ex_date": d.day(r.ex_date),
                    "amount": r.amount * f,
                    "basis_amount": r.basis_amount * f,
                    "declared": r.declared and d.day(r.declared),
                    "pay_date": r.pay_date and d.day(r.pay_date),
                }
            )
            for r in dividends.items
        ]
        return self._timeline(dividends, real, items)

    def _timeline(self, timeline: TimelineT, real: str, items: list[Any]) -> TimelineT:
        return timeline.model_copy(
            update={
                "symbol": self.disguise.symbol(real),
                "items": items,
                "provenance": self._provenance(timeline.provenance, real),
            }
        )


TimelineT = TypeVar("TimelineT", News, Earnings, AnalystRatings, Filings, Fundamentals, Dividends)


def _times(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor


def _moved_index(index: pd.DatetimeIndex, days: int) -> pd.DatetimeIndex:
    """``index`` moved by ``days`` on the New York wall clock, in its own zone."""
    import pandas as pd

    wall = index.tz_convert(NEW_YORK).tz_localize(None).as_unit("ns")
    wall = pd.DatetimeIndex(wall.asi8 + days * _NS_PER_DAY)  # faster than adding a Timedelta
    moved = wall.tz_localize(NEW_YORK, ambiguous=True, nonexistent="shift_forward")
    return pd.DatetimeIndex(moved.tz_convert(index.tz), name=index.name)
