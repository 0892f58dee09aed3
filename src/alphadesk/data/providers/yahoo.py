"""The ``yahoo`` provider: Yahoo Finance through yfinance (imported lazily, on first use).

Bars have full history, so they answer any ``as_of``. Quotes, option chains, short
interest and identities are live snapshots: Yahoo has no history of them, so they answer
only an ``as_of`` within :data:`~alphadesk.data.pit.LIVE_GRACE` of now; earlier ones get
:class:`NoData` at once (and the chain falls back to bundled closes or a modeled chain).
Greeks of the observed chain are computed from Yahoo's implied volatility.

Offline, ``yfinance.Ticker`` calls raise an ``OSError``: reported as ProviderUnavailable.
A rate limit is retried with exponential backoff, then reported as RateLimited.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from ..bars import Bars
from ..base import Clock, DataKind, Provider, utc_now
from ..cache import TTL, DataCache, cache_key
from ..calendar import local_date, session_close, trading_days_between
from ..errors import (
    DataError,
    MalformedResponse,
    NoData,
    NotConfigured,
    ProviderUnavailable,
    RateLimited,
)
from ..models import (
    AnalystRatings,
    AssetType,
    Earnings,
    Instrument,
    News,
    OptionChain,
    OptionContract,
    Provenance,
    Quote,
    ShortInterest,
)
from ..pit import LIVE_GRACE
from . import _yahoo_parse as parse

__all__ = ["YahooProvider"]

log = logging.getLogger(__name__)

T = TypeVar("T")
_SOURCE = "Yahoo Finance via yfinance"
_INTRADAY_PERIOD = {
    "1m": "7d",
    "2m": "60d",
    "5m": "60d",
    "15m": "60d",
    "30m": "60d",
    "60m": "730d",
    "90m": "60d",
    "1h": "730d",
}
_ASSET_TYPES: dict[str, AssetType] = {
    "EQUITY": "equity",
    "ETF": "etf",
    "INDEX": "index",
    "CRYPTOCURRENCY": "crypto",
    "MUTUALFUND": "fund",
    "FUTURE": "future",
    "CURRENCY": "currency",
}
_YEAR = 365.0 * 86400.0


class YahooProvider(Provider):
    """Yahoo Finance: bars, live quotes and chains, news, earnings, ratings, short interest.

    Args:
        cache: Where answers are cached (None: no cache).
        retries: How many times a rate-limited call is retried.
        backoff_s: First backoff wait; doubled at each retry.
        clock: Returns "now".
        sleep: Waits between retries (tests pass a no-op).
    """

    name = "yahoo"
    kinds = frozenset(
        {
            DataKind.DAILY_BARS,
            DataKind.INTRADAY_BARS,
            DataKind.QUOTE,
            DataKind.OPTION_CHAIN,
            DataKind.INSTRUMENT,
            DataKind.NEWS,
            DataKind.EARNINGS,
            DataKind.SHORT_INTEREST,
            DataKind.ANALYST_RATINGS,
        }
    )

    def __init__(
        self,
        cache: DataCache | None = None,
        *,
        retries: int = 3,
        backoff_s: float = 2.0,
        clock: Clock = utc_now,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(clock=clock)
        self._cache = cache
        self._retries = retries
        self._backoff_s = backoff_s
        self._sleep = sleep

    # -- plumbing ----------------------------------------------------------------------

    def _yf(self) -> Any:
        try:
            import yfinance
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise NotConfigured(
                "yfinance is not installed; pip install yfinance", provider=self.name
            ) from exc
        return yfinance

    def _call(self, what: str, symbol: str, fn: Callable[[], T]) -> T:
        """Run one yfinance call with backoff on rate limits and typed errors."""
        yf = self._yf()
        for attempt in range(self._retries + 1):
            try:
                return fn()
            except yf.exceptions.YFRateLimitError as exc:
                if attempt == self._retries:
                    raise RateLimited(
                        f"Yahoo Finance is rate-limiting {what} for {symbol} after "
                        f"{self._retries} retries; wait a few minutes (answers are cached)",
                        provider=self.name,
                    ) from exc
                wait = self._backoff_s * 2**attempt
                log.info("yahoo rate limit on %s %s; retrying in %.1fs", what, symbol, wait)
                self._sleep(wait)
            except yf.exceptions.YFTickerMissingError as exc:
                raise NoData(
                    f"Yahoo Finance has no {what} for {symbol}: {exc}", provider=self.name
                ) from exc
            except DataError:
                raise
            except OSError as exc:
                raise ProviderUnavailable(
                    f"cannot reach Yahoo Finance for {what} of {symbol} ({exc}); check the "
                    "network, or use the bundled or local providers",
                    provider=self.name,
                ) from exc
            except (
                KeyError,
                TypeError,
                ValueError,
                AttributeError,
                IndexError,
                yf.exceptions.YFException,
            ) as exc:
                raise MalformedResponse(
                    f"Yahoo Finance answered {what} for {symbol} in an unexpected shape "
                    f"({type(exc).__name__}: {exc}); upgrade yfinance or try later",
                    provider=self.name,
                ) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _fetch(
        self, kind: DataKind, symbol: str, as_of: datetime, fetch: Callable[[], T], **params: object
    ) -> T:
        if self._cache is None:
            return fetch()
        key = cache_key(self.name, kind.value, symbol, **params)
        return self._cache.get_or_fetch(key, as_of, TTL[kind.value], fetch, self._clock)

    def _provenance(self, retrieved_at: datetime, **extra: Any) -> Provenance:
        return Provenance(
            provider=self.name,
            origin="observed",
            retrieved_at=retrieved_at,
            source=_SOURCE,
            **extra,
        )

    def _require_live(self, what: str, symbol: str, as_of: datetime) -> None:
        now = self._clock()
        if as_of < now - LIVE_GRACE:
            raise NoData(
                f"{symbol}: Yahoo Finance has only the current {what}, not one as of "
                f"{as_of.isoformat()}; historical runs use daily closes or a modeled chain",
                provider=self.name,
            )

    def _ticker(self, symbol: str) -> Any:
        return self._yf().Ticker(symbol)

    # -- bars --------------------------------------------------------------------------

    def _daily_bars(self, symbol: str, as_of: datetime) -> Bars:
        return self._fetch(
            DataKind.DAILY_BARS, symbol, as_of, lambda: self._history(symbol, "1d", "max")
        )

    def _intraday_bars(self, symbol: str, as_of: datetime, interval: str) -> Bars:
        if as_of < self._clock() - timedelta(days=int(_INTRADAY_PERIOD[interval][:-1])):
            raise NoData(
                f"{symbol}: Yahoo keeps {interval} bars for "
                f"{_INTRADAY_PERIOD[interval]} only; as_of is older",
                provider=self.name,
            )
        return self._fetch(
            DataKind.INTRADAY_BARS,
            symbol,
            as_of,
            lambda: self._history(symbol, interval, _INTRADAY_PERIOD[interval]),
            interval=interval,
        )

    def _history(self, symbol: str, interval: str, period: str) -> Bars:
        retrieved = self._clock()
        raw = self._call(
            f"{interval} bars",
            symbol,
            lambda: self._ticker(symbol).history(
                period=period,
                interval=interval,
                auto_adjust=False,
                actions=False,
                raise_errors=True,
            ),
        )
        frame = parse.parse_bars(raw, symbol, interval, retrieved)
        return Bars.create(symbol, interval, frame, self._provenance(retrieved))

    # -- live snapshots ----------------------------------------------------------------

    def _info(self, symbol: str) -> tuple[dict[str, Any], datetime]:
        retrieved = self._clock()
        info = self._call("quote data", symbol, lambda: self._ticker(symbol).info)
        if not isinstance(info, dict) or not info:
            raise NoData(f"Yahoo Finance has no quote data for {symbol}", provider=self.name)
        return info, retrieved

    def _quote(self, symbol: str, as_of: datetime) -> Quote:
        self._require_live("quote", symbol, as_of)

        def fetch() -> Quote:
            info, retrieved = self._info(symbol)
            price = parse._num(info.get("regularMarketPrice") or info.get("currentPrice"))
            if price is None:
                raise NoData(f"Yahoo Finance has no price for {symbol}", provider=self.name)
            return Quote(
                symbol=symbol,
                observed_at=retrieved,
                provenance=self._provenance(retrieved),
                price=price,
                bid=parse._num(info.get("bid")) or None,
                ask=parse._num(info.get("ask")) or None,
                volume=parse._num(info.get("regularMarketVolume")),
                basis="last_trade",
            )

        return self._fetch(DataKind.QUOTE, symbol, as_of, fetch)

    def _instrument(self, symbol: str, as_of: datetime) -> Instrument:
        self._require_live("identity", symbol, as_of)

        def fetch() -> Instrument:
            info, retrieved = self._info(symbol)
            kind = _ASSET_TYPES.get(str(info.get("quoteType", "")).upper(), "other")
            return Instrument(
                symbol=symbol,
                observed_at=retrieved,
                provenance=self._provenance(retrieved),
                name=info.get("longName") or info.get("shortName") or symbol,
                asset_type=kind,
                exchange=info.get("exchange"),
                sector=info.get("sector"),
                industry=info.get("industry"),
                currency=info.get("currency"),
            )

        return self._fetch(DataKind.INSTRUMENT, symbol, as_of, fetch)

    def _short_interest(self, symbol: str, as_of: datetime) -> ShortInterest:
        self._require_live("short interest", symbol, as_of)

        def fetch() -> ShortInterest:
            info, retrieved = self._info(symbol)
            if info.get("sharesShort") is None and info.get("shortPercentOfFloat") is None:
                raise NoData(
                    f"Yahoo Finance reports no short interest for {symbol}", provider=self.name
                )
            settled = parse._num(info.get("dateShortInterest"))
            return ShortInterest(
                symbol=symbol,
                observed_at=retrieved,
                provenance=self._provenance(retrieved),
                shares_short=parse._num(info.get("sharesShort")),
                short_percent_of_float=parse._num(info.get("shortPercentOfFloat")),
                days_to_cover=parse._num(info.get("shortRatio")),
                shares_short_prior_month=parse._num(info.get("sharesShortPriorMonth")),
                settlement_date=datetime.fromtimestamp(settled, UTC).date()
                if settled is not None
                else None,
            )

        return self._fetch(DataKind.SHORT_INTEREST, symbol, as_of, fetch)

    def _option_chain(
        self, symbol: str, as_of: datetime, min_dte: int, max_dte: int
    ) -> OptionChain:
        self._require_live("option chain", symbol, as_of)
        return self._fetch(
            DataKind.OPTION_CHAIN,
            symbol,
            as_of,
            lambda: self._chain(symbol, as_of, min_dte, max_dte),
            min_dte=min_dte,
            max_dte=max_dte,
        )

    def _chain(self, symbol: str, as_of: datetime, min_dte: int, max_dte: int) -> OptionChain:
        from datetime import date

        retrieved = self._clock()
        ticker = self._ticker(symbol)
        listed = self._call("option expirations", symbol, lambda: ticker.options)
        today = local_date(as_of)
        wanted = [
            e
            for e in (date.fromisoformat(x) for x in listed)
            if min_dte <= (e - today).days <= max_dte
        ]
        if not wanted:
            raise NoData(
                f"{symbol}: Yahoo lists no expiration {min_dte}-{max_dte} days out "
                f"(listed: {', '.join(listed) or 'none'})",
                provider=self.name,
            )
        contracts: list[OptionContract] = []
        spot: float | None = None
        for expiration in wanted:
            chain = self._call(
                "option chain",
                symbol,
                functools.partial(ticker.option_chain, expiration.isoformat()),
            )
            underlying = chain.underlying if isinstance(chain.underlying, dict) else {}
            spot = spot or parse._num(underlying.get("regularMarketPrice"))
            contracts += parse.parse_contracts(
                chain.calls, chain.puts, expiration, as_of, trading_days_between(as_of, expiration)
            )
        if spot is None:
            raise MalformedResponse(
                f"Yahoo's chain for {symbol} has no underlying price", provider=self.name
            )
        rate, notes = self._rate(as_of)
        return OptionChain(
            symbol=symbol,
            observed_at=retrieved,
            as_of=as_of,
            underlying_price=spot,
            rate=rate,
            expirations=wanted,
            contracts=_with_greeks(contracts, spot, rate, retrieved),
            provenance=self._provenance(
                retrieved,
                notes=["Greeks computed (Black-Scholes) from Yahoo's implied vol", *notes],
            ),
        )

    def _rate(self, as_of: datetime) -> tuple[float, list[str]]:
        """The 13-week T-bill (^IRX) as a continuous rate; the bundled rate if unavailable."""
        try:
            info = self._call("T-bill yield", "^IRX", lambda: self._ticker("^IRX").info)
            discount = parse._num(info.get("regularMarketPrice"))
            if discount is not None:
                return parse.discount_to_continuous(discount), []
        except DataError as exc:
            log.info("no live T-bill yield: %s", exc)
        from ..rates import risk_free_rate

        held = risk_free_rate(as_of)
        return held.rate, [f"no live T-bill yield; {held.note or 'bundled rate used'}"]

    # -- timelines ---------------------------------------------------------------------

    def _news(self, symbol: str, as_of: datetime) -> News:
        def fetch() -> News:
            retrieved = self._clock()
            raw = self._call("news", symbol, lambda: self._ticker(symbol).news)
            return News(
                symbol=symbol,
                items=parse.parse_news(raw, symbol),
                provenance=self._provenance(retrieved),
            )

        return self._fetch(DataKind.NEWS, symbol, as_of, fetch)

    def _earnings(self, symbol: str, as_of: datetime) -> Earnings:
        def fetch() -> Earnings:
            retrieved = self._clock()
            raw = self._call(
                "earnings dates", symbol, lambda: self._ticker(symbol).get_earnings_dates(limit=40)
            )
            return Earnings(
                symbol=symbol,
                items=parse.parse_earnings(raw, retrieved),
                provenance=self._provenance(retrieved),
            )

        return self._fetch(DataKind.EARNINGS, symbol, as_of, fetch)

    def _analyst_ratings(self, symbol: str, as_of: datetime) -> AnalystRatings:
        def fetch() -> AnalystRatings:
            retrieved = self._clock()
            raw = self._call(
                "analyst ratings", symbol, lambda: self._ticker(symbol).upgrades_downgrades
            )
            return AnalystRatings(
                symbol=symbol,
                items=parse.parse_ratings(raw),
                provenance=self._provenance(retrieved),
            )

        return self._fetch(DataKind.ANALYST_RATINGS, symbol, as_of, fetch)


def _with_greeks(
    contracts: list[OptionContract], spot: float, rate: float, at: datetime
) -> list[OptionContract]:
    """Contracts with Black-Scholes Greeks from their own implied volatility."""
    import numpy as np

    from alphadesk.analytics.options import bs_greeks

    priced = [i for i, c in enumerate(contracts) if c.iv is not None]
    if not priced:
        return contracts
    k = np.array([contracts[i].strike for i in priced])
    t = np.array(
        [
            max((session_close(contracts[i].expiration) - at).total_seconds(), 0.0) / _YEAR
            for i in priced
        ]
    )
    sigma = np.array([contracts[i].iv for i in priced], dtype=np.float64)
    call = np.array([contracts[i].option_type == "call" for i in priced])
    g = bs_greeks(spot, k, t, rate, sigma, call)
    out = list(contracts)
    arrays = [np.asarray(x, dtype=np.float64) for x in (g.delta, g.gamma, g.theta, g.vega, g.rho)]
    for j, i in enumerate(priced):
        out[i] = contracts[i].model_copy(
            update={
                name: float(arr[j])
                for name, arr in zip(
                    ("delta", "gamma", "theta", "vega", "rho"), arrays, strict=True
                )
            }
        )
    return out
