"""The ``sec`` provider: SEC EDGAR filings, company facts and identities over HTTP.

EDGAR asks every client for a User-Agent naming a person or company and an e-mail
(``data.sec_user_agent`` in the settings) and for at most 10 requests a second; both are
enforced here. Documents used (base URLs configurable, so tests can serve them locally):

* ``{www}/files/company_tickers.json``: ticker -> CIK;
* ``{data}/submissions/CIK##########.json``: identity and ``filings.recent`` (parallel
  arrays), with older pages listed in ``filings.files``;
* ``{data}/api/xbrl/companyfacts/CIK##########.json``: every XBRL fact with its ``filed``
  date.

Point in time: a filing is known at its acceptance time (EDGAR's ``acceptanceDateTime``
carries a ``Z`` but is New York time for some filers; reading it as New York time is never
early), a fact at its filing's acceptance time (or, for a filing the list lacks, the open
of the first session after its ``filed`` date). Earnings releases are the 8-K filings
under item 2.02; EDGAR never lists a release before it happens.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..base import Clock, DataKind, Provider, utc_now
from ..cache import TTL, DataCache, cache_key
from ..errors import MalformedResponse, NoData, NotConfigured, ProviderUnavailable, RateLimited
from ..models import Earnings, Filings, Fundamentals, Instrument, Provenance
from . import _sec_parse as parse

__all__ = ["SEC_DATA_URL", "SEC_WWW_URL", "SecProvider"]

log = logging.getLogger(__name__)

SEC_DATA_URL = "https://data.sec.gov"
SEC_WWW_URL = "https://www.sec.gov"
_MIN_INTERVAL_S = 0.11  # EDGAR's fair-access limit is 10 requests a second
_UA_HINT = (
    "set data.sec_user_agent to 'Your Name your.email@example.com' "
    "(environment: ALPHADESK_DATA__SEC_USER_AGENT)"
)


class SecProvider(Provider):
    """Filings, fundamentals (XBRL company facts) and identities from SEC EDGAR.

    Args:
        user_agent: 'Name email' as EDGAR requires; None raises NotConfigured on use.
        cache: Where answers are cached (None: no cache).
        data_url: Base of data.sec.gov (submissions, company facts).
        www_url: Base of www.sec.gov (the ticker map, filing documents).
        retries: Retries after a 429/503 before giving up with RateLimited.
        backoff_s: First wait when the server sends no Retry-After; doubled each retry.
        timeout_s: Per-request timeout.
        clock: Returns "now".
        sleep: Waits between requests and retries (tests pass a no-op).
    """

    name = "sec"
    kinds = frozenset(
        {DataKind.FILINGS, DataKind.FUNDAMENTALS, DataKind.EARNINGS, DataKind.INSTRUMENT}
    )

    def __init__(
        self,
        user_agent: str | None,
        cache: DataCache | None = None,
        *,
        data_url: str = SEC_DATA_URL,
        www_url: str = SEC_WWW_URL,
        retries: int = 3,
        backoff_s: float = 1.0,
        timeout_s: float = 30.0,
        clock: Clock = utc_now,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(clock=clock)
        self._user_agent = user_agent
        self._cache = cache
        self._data_url = data_url.rstrip("/")
        self._www_url = www_url.rstrip("/")
        self._retries = retries
        self._backoff_s = backoff_s
        self._timeout_s = timeout_s
        self._sleep = sleep
        self._lock = threading.Lock()
        self._last_request = 0.0
        self._tickers: dict[str, tuple[int, str]] | None = None
        self._documents: dict[int, tuple[float, dict[str, Any]]] = {}

    def __repr__(self) -> str:
        return f"SecProvider(data_url={self._data_url!r})"

    # -- HTTP --------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        agent = (self._user_agent or "").strip()
        if not agent:
            raise NotConfigured(f"EDGAR requires a User-Agent; {_UA_HINT}", provider=self.name)
        if "@" not in agent:
            raise NotConfigured(
                f"the EDGAR User-Agent {agent!r} has no e-mail; {_UA_HINT}", provider=self.name
            )
        return {
            "User-Agent": agent,
            "Accept-Encoding": "gzip, deflate",
            "Accept": "application/json",
        }

    def _throttle(self) -> None:
        with self._lock:
            wait = self._last_request + _MIN_INTERVAL_S - time.monotonic()
            if wait > 0:
                self._sleep(wait)
            self._last_request = time.monotonic()

    def _get_json(self, url: str) -> Any:
        """GET a JSON document, with throttling, backoff on 429/503 and typed errors."""
        import httpx

        headers = self._headers()
        for attempt in range(self._retries + 1):
            self._throttle()
            try:
                response = httpx.get(
                    url, headers=headers, timeout=self._timeout_s, follow_redirects=True
                )
            except httpx.HTTPError as exc:
                raise ProviderUnavailable(
                    f"cannot reach EDGAR at {url} ({type(exc).__name__}: {exc}); check the network",
                    provider=self.name,
                ) from exc
            if response.status_code in (429, 503):
                retry_after = _retry_after(response.headers.get("Retry-After"))
                if attempt == self._retries:
                    raise RateLimited(
                        f"EDGAR refused {url} with {response.status_code} after "
                        f"{self._retries} retries; wait and retry, and keep under 10 "
                        "requests a second",
                        provider=self.name,
                        retry_after=retry_after,
                    )
                wait = retry_after if retry_after is not None else self._backoff_s * 2**attempt
                log.info("EDGAR %s on %s; retrying in %.1fs", response.status_code, url, wait)
                self._sleep(wait)
                continue
            return self._decode(url, response)
        raise AssertionError("unreachable")  # pragma: no cover

    def _decode(self, url: str, response: Any) -> Any:
        if response.status_code == 404:
            raise NoData(f"EDGAR has no document at {url}", provider=self.name)
        if response.status_code == 403:
            raise NotConfigured(
                f"EDGAR refused {url} (403): it rejects requests without a "
                f"proper User-Agent; {_UA_HINT}",
                provider=self.name,
            )
        if response.status_code >= 400:
            raise ProviderUnavailable(
                f"EDGAR answered {response.status_code} for {url}; try again later",
                provider=self.name,
            )
        try:
            return response.json()
        except ValueError as exc:
            raise MalformedResponse(
                f"EDGAR sent invalid JSON for {url}: {exc}", provider=self.name
            ) from exc

    def _cached(
        self,
        kind: DataKind,
        symbol: str,
        as_of: datetime,
        fetch: Callable[[], Any],
        **params: object,
    ) -> Any:
        if self._cache is None:
            return fetch()
        key = cache_key(self.name, kind.value, symbol, **params)
        return self._cache.get_or_fetch(key, as_of, TTL[kind.value], fetch, self._clock)

    # -- identity ----------------------------------------------------------------------

    def _cik(self, symbol: str) -> tuple[int, str]:
        if self._tickers is None:
            raw = self._get_json(f"{self._www_url}/files/company_tickers.json")
            self._tickers = parse.ticker_map(raw)
        # EDGAR writes class shares with a dash (BRK-B); Yahoo-style dots map to it.
        found = self._tickers.get(symbol) or self._tickers.get(symbol.replace(".", "-"))
        if found is None:
            from ..symbols import close_matches

            matches = close_matches(symbol, self._tickers)
            hint = f"; did you mean {', '.join(matches)}?" if matches else ""
            raise NoData(
                f"EDGAR lists no company with ticker {symbol}{hint} (indices, ETFs "
                "and crypto have no filings)",
                provider=self.name,
                suggestions=matches,
            )
        return found

    def _submissions(self, cik: int) -> dict[str, Any]:
        """The submissions document, kept in memory for its TTL (identity and filings)."""
        hit = self._documents.get(cik)
        if hit and time.monotonic() - hit[0] < TTL["sec_document"].total_seconds():
            return hit[1]
        raw = self._get_json(f"{self._data_url}/submissions/CIK{cik:010d}.json")
        if not isinstance(raw, dict) or not isinstance(raw.get("filings"), dict):
            raise MalformedResponse(
                f"EDGAR submissions for CIK {cik} lack `filings`", provider=self.name
            )
        self._documents[cik] = (time.monotonic(), raw)
        return raw

    def _provenance(self, retrieved: datetime, source: str, **extra: Any) -> Provenance:
        return Provenance(
            provider=self.name, origin="observed", retrieved_at=retrieved, source=source, **extra
        )

    def _instrument(self, symbol: str, as_of: datetime) -> Instrument:
        retrieved = self._clock()
        cik, _ = self._cik(symbol)
        raw = self._submissions(cik)
        return parse.instrument(
            raw,
            symbol,
            as_of,
            self._provenance(
                retrieved, "EDGAR submissions", notes=["exchange and SIC are today's"]
            ),
        )

    # -- filings -----------------------------------------------------------------------

    def _filings(self, symbol: str, as_of: datetime) -> Filings:
        def fetch(history: bool) -> Filings:
            retrieved = self._clock()
            cik, _ = self._cik(symbol)
            raw = self._submissions(cik)
            filings = parse.filings(raw["filings"].get("recent", {}), cik, self._www_url)
            if history:
                for page in raw["filings"].get("files", []) or []:
                    older = self._get_json(f"{self._data_url}/submissions/{page['name']}")
                    filings += parse.filings(older, cik, self._www_url)
            unique = {f.accession_number: f for f in filings}
            return Filings(
                symbol=symbol,
                items=list(unique.values()),
                provenance=self._provenance(retrieved, "EDGAR submissions"),
            )

        recent = self._cached(DataKind.FILINGS, symbol, as_of, lambda: fetch(False))
        if recent.items and min(f.known_at for f in recent.items) <= as_of:
            return recent  # the recent page reaches back past as_of: enough
        return self._cached(DataKind.FILINGS, symbol, as_of, lambda: fetch(True), history=True)

    # -- facts -------------------------------------------------------------------------

    def _fundamentals(self, symbol: str, as_of: datetime) -> Fundamentals:
        def fetch() -> Fundamentals:
            retrieved = self._clock()
            cik, _ = self._cik(symbol)
            accepted = self._acceptance_times(symbol, as_of)
            raw = self._get_json(f"{self._data_url}/api/xbrl/companyfacts/CIK{cik:010d}.json")
            return Fundamentals(
                symbol=symbol,
                items=parse.facts(raw, accepted),
                provenance=self._provenance(retrieved, "EDGAR company facts"),
            )

        return self._cached(DataKind.FUNDAMENTALS, symbol, as_of, fetch)

    def _acceptance_times(self, symbol: str, as_of: datetime) -> dict[str, datetime]:
        """Accession number -> acceptance time; empty when the filing list cannot be read
        (facts then count from the next session's open after their filing day)."""
        try:
            return {f.accession_number: f.known_at for f in self._filings(symbol, as_of).items}
        except (MalformedResponse, NoData) as exc:
            log.warning(
                "EDGAR filing list of %s unreadable (%s); facts use filing days", symbol, exc
            )
            return {}

    def _earnings(self, symbol: str, as_of: datetime) -> Earnings:
        filings = self._filings(symbol, as_of)
        return Earnings(
            symbol=symbol,
            items=parse.earnings_events(filings.items),
            provenance=self._provenance(
                self._clock(),
                "EDGAR submissions (8-K item 2.02)",
                missing=["upcoming earnings dates (EDGAR lists releases once filed)"],
            ),
        )


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return min(max(float(value), 0.0), 60.0)
    except ValueError:
        return None
