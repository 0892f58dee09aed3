"""SPY's price at an instant, the one way: observed when SPY has a bar of the last session
closed by then, else the S&P 500 index / 10 of that same session (labelled modeled). An
index close of an older session is never passed off as today's SPY."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from .base import MarketData
from .calendar import close_on_or_before, local_date, market_status
from .errors import DataError, NoData
from .symbols import SPY_PER_INDEX

__all__ = ["SpyPrice", "last_session", "spy_price"]

_SPY, _INDEX = "SPY", "^GSPC"


@dataclass(frozen=True)
class SpyPrice:
    """SPY's price, when it was set, its basis in words, where it came from (``origin`` is
    ``"modeled"`` for the index / 10) and what was missing on the way."""

    price: float
    observed_at: datetime
    basis: str
    provider: str
    origin: str
    missing: list[str] = field(default_factory=list)


def last_session(as_of: datetime) -> date:
    """The session of the last close at or before ``as_of``."""
    closed = close_on_or_before(local_date(as_of))
    if closed > as_of:  # that day's session has not closed yet
        closed = market_status(as_of).previous_close
    return local_date(closed)


def spy_price(market: MarketData, as_of: datetime) -> SpyPrice:
    """SPY's price at ``as_of``.

    Raises:
        NoData: neither SPY nor the index has a price of the last session closed by then.
    """
    session = last_session(as_of)
    try:
        quote = market.quote(_SPY, as_of)
    except DataError as exc:
        why = str(exc)
    else:
        if local_date(quote.observed_at) >= session:
            return SpyPrice(
                quote.price,
                quote.observed_at,
                f"observed SPY {quote.basis}",
                quote.provenance.provider,
                quote.provenance.origin,
            )
        why = f"SPY has no bar of {session} (its last is of {local_date(quote.observed_at)})"
    try:
        index = market.quote(_INDEX, as_of)
    except DataError as exc:
        raise NoData(
            f"SPY is missing on {session}: {why}; the S&P 500 index: {exc}",
            provider=exc.provider,
        ) from exc
    if local_date(index.observed_at) < session:
        raise NoData(
            f"SPY is missing on {session}: {why}; the S&P 500 index's last close is of "
            f"{local_date(index.observed_at)}",
            provider=index.provenance.provider,
        )
    return SpyPrice(
        index.price * SPY_PER_INDEX,
        index.observed_at,
        f"modeled: S&P 500 index {index.price:,.2f} / 10 (no SPY data)",
        index.provenance.provider,
        "modeled",
        [why],
    )
