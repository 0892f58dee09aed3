"""The provider chain: try providers in a declared order per data kind.

The first provider that answers wins; the result's provenance names it and lists the
providers tried before it and why they did not answer (``provenance.attempts``). An error
whose type says so (``fallback``: no data, not supported, not configured, rate limited,
unreachable) moves on to the next provider; an invalid symbol or bad argument stops at
once. When every provider fails the chain raises one error listing every attempt.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TypeVar

from .bars import Bars
from .base import DataKind, MarketData, Provider, provider_of, utc_now
from .errors import DataError, NoData, NotConfigured, NotSupported
from .models import (
    AnalystRatings,
    Attempt,
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

__all__ = ["ProviderChain"]

R = TypeVar("R")


class ProviderChain(Provider):
    """Several providers behind the one protocol.

    Args:
        providers: Providers in their default order of preference.
        order: Per data kind, provider names in the order to try them (others that serve
            the kind are not tried). Kinds not listed use ``providers``' order.
    """

    name = "chain"
    kinds = frozenset(DataKind)

    def __init__(
        self,
        providers: Sequence[MarketData],
        order: Mapping[DataKind, Sequence[str]] | None = None,
    ) -> None:
        super().__init__(clock=utc_now)
        if not providers:
            raise ValueError("a provider chain needs at least one provider")
        names = [p.name for p in providers]
        if len(set(names)) != len(names):
            raise ValueError(f"provider names must be unique in a chain, got {names}")
        self._providers = list(providers)
        self._order = {kind: list(seq) for kind, seq in (order or {}).items()}
        by_name = {p.name: p for p in providers}
        for kind, seq in self._order.items():
            unknown = [n for n in seq if n not in by_name]
            if unknown:
                raise ValueError(
                    f"order for {kind.value} names unknown providers {unknown}; known: {names}"
                )

    def __repr__(self) -> str:
        return f"ProviderChain({', '.join(p.name for p in self._providers)})"

    @property
    def providers(self) -> list[MarketData]:
        """The providers, in default order."""
        return list(self._providers)

    def order_for(self, kind: DataKind) -> list[MarketData]:
        """The providers tried for ``kind``, in order."""
        by_name = {p.name: p for p in self._providers}
        if kind in self._order:
            return [by_name[n] for n in self._order[kind]]
        return [p for p in self._providers if p.supports(kind)]

    def supports(self, kind: DataKind) -> bool:
        return bool(self.order_for(kind))

    def universe(self) -> list[str]:
        return sorted({s for p in self._providers for s in p.universe()})

    def coverage(self) -> list[Coverage]:
        return [c for p in self._providers for c in p.coverage()]

    def _first(self, kind: DataKind, symbol: str, call: Callable[[MarketData], R]) -> R:
        attempts: list[Attempt] = []
        errors: list[DataError] = []
        for provider in self.order_for(kind):
            try:
                result = call(provider)
            except DataError as exc:
                if not exc.fallback:
                    raise
                attempts.append(
                    Attempt(provider=provider.name, error=type(exc).__name__, message=str(exc))
                )
                errors.append(exc)
                continue
            return _with_attempts(result, attempts) if attempts else result
        raise _exhausted(kind, symbol, attempts, errors)

    def _daily_bars(self, symbol: str, as_of: datetime) -> Bars:
        return self._first(DataKind.DAILY_BARS, symbol, lambda p: p.daily_bars(symbol, as_of))

    def _intraday_bars(self, symbol: str, as_of: datetime, interval: str) -> Bars:
        return self._first(
            DataKind.INTRADAY_BARS,
            symbol,
            lambda p: p.intraday_bars(symbol, as_of, interval=interval),
        )

    def _quote(self, symbol: str, as_of: datetime) -> Quote:
        return self._first(DataKind.QUOTE, symbol, lambda p: p.quote(symbol, as_of))

    def _option_chain(
        self, symbol: str, as_of: datetime, min_dte: int, max_dte: int
    ) -> OptionChain:
        return self._first(
            DataKind.OPTION_CHAIN,
            symbol,
            lambda p: p.option_chain(symbol, as_of, min_dte=min_dte, max_dte=max_dte),
        )

    def _instrument(self, symbol: str, as_of: datetime) -> Instrument:
        return self._first(DataKind.INSTRUMENT, symbol, lambda p: p.instrument(symbol, as_of))

    def _fundamentals(self, symbol: str, as_of: datetime) -> Fundamentals:
        return self._first(DataKind.FUNDAMENTALS, symbol, lambda p: p.fundamentals(symbol, as_of))

    def _news(self, symbol: str, as_of: datetime) -> News:
        # Unbounded here: the public method applies the caller's window once.
        return self._first(
            DataKind.NEWS, symbol, lambda p: p.news(symbol, as_of, days=36_500, limit=10**6)
        )

    def _earnings(self, symbol: str, as_of: datetime) -> Earnings:
        return self._first(DataKind.EARNINGS, symbol, lambda p: p.earnings(symbol, as_of))

    def _short_interest(self, symbol: str, as_of: datetime) -> ShortInterest:
        return self._first(
            DataKind.SHORT_INTEREST, symbol, lambda p: p.short_interest(symbol, as_of)
        )

    def _analyst_ratings(self, symbol: str, as_of: datetime) -> AnalystRatings:
        return self._first(
            DataKind.ANALYST_RATINGS,
            symbol,
            lambda p: p.analyst_ratings(symbol, as_of, days=36_500),
        )

    def _dividends(self, symbol: str, as_of: datetime) -> Dividends:
        return self._first(DataKind.DIVIDENDS, symbol, lambda p: p.dividends(symbol, as_of))

    def _filings(self, symbol: str, as_of: datetime) -> Filings:
        return self._first(
            DataKind.FILINGS, symbol, lambda p: p.filings(symbol, as_of, limit=10**6)
        )


def _with_attempts(result: R, attempts: list[Attempt]) -> R:
    if isinstance(result, Bars):
        provenance = result.provenance.model_copy(update={"attempts": attempts})
        return dataclasses.replace(result, provenance=provenance)
    provenance = result.provenance.model_copy(update={"attempts": attempts})  # type: ignore[attr-defined]
    return result.model_copy(update={"provenance": provenance})  # type: ignore[attr-defined]


def _exhausted(
    kind: DataKind, symbol: str, attempts: list[Attempt], errors: list[DataError]
) -> DataError:
    what = kind.value.replace("_", " ")
    if not attempts:
        return NotSupported(
            f"no configured provider serves {what}; add {provider_of(kind)} to "
            "`data.providers` in the settings (ALPHADESK_DATA__PROVIDERS)",
            provider="chain",
        )
    detail = "; ".join(f"{a.provider}: {a.message}" for a in attempts)
    if all(isinstance(e, NotConfigured) for e in errors):
        return NotConfigured(
            f"{symbol}: no provider is configured for {what} ({detail})", provider="chain"
        )
    suggestions: list[str] = []
    for e in errors:
        for match in e.suggestions if isinstance(e, NoData) else []:
            if match not in suggestions:
                suggestions.append(match)
    return NoData(
        f"{symbol}: no provider had {what} ({detail})",
        provider="chain",
        suggestions=suggestions,
        attempts=attempts,
    )
