"""The point-in-time rule, in one function applied at every provider's boundary.

:func:`point_in_time` is called by :class:`~alphadesk.data.base.Provider` on every result
before it leaves, after the cache: a provider implementation cannot forget it.

* Bars keep only those closed at or before ``as_of``; a provider that stores them as
  traded then puts them on the ``as_of`` basis with the splits effective by ``as_of``
  only (:func:`~alphadesk.data.actions.on_basis`), so a later split never scales them.
* Timeline records (news, filings, facts, ratings, earnings) keep only those whose
  ``known_at`` is at or before ``as_of``.
* A snapshot (quote, option chain, short interest, identity) must have been observed at
  or before ``as_of``. One exception, for live runs only: a snapshot fetched from a live
  source up to :data:`LIVE_GRACE` after ``as_of`` is accepted, because a run started "now"
  fetches its chain moments later. A historical ``as_of`` (a backtest) lies further back
  than that and so never sees a live snapshot.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, TypeVar

from .bars import Bars
from .errors import NoData
from .models import Snapshot, Timeline

__all__ = ["LIVE_GRACE", "point_in_time", "require_aware"]

LIVE_GRACE = timedelta(minutes=15)

T = TypeVar("T")


def require_aware(as_of: object, what: str = "as_of") -> datetime:
    """Return ``as_of`` if it is a timezone-aware datetime.

    Raises:
        TypeError: Not a datetime.
        ValueError: A naive datetime.
    """
    if not isinstance(as_of, datetime):
        raise TypeError(
            f"{what} must be a timezone-aware datetime, got {type(as_of).__name__}; "
            "e.g. datetime(2020, 6, 30, 20, 0, tzinfo=UTC)"
        )
    if as_of.tzinfo is None or as_of.utcoffset() is None:
        raise ValueError(
            f"{what} is timezone-naive ({as_of.isoformat()}); attach a zone, "
            "e.g. as_of.replace(tzinfo=UTC) or ZoneInfo('America/New_York')"
        )
    return as_of


def point_in_time(result: T, as_of: datetime) -> T:
    """Drop everything in ``result`` that was not known at ``as_of``.

    Args:
        result: Bars, a Timeline or a Snapshot.
        as_of: The instant of the question (tz-aware).

    Returns:
        The same kind of result, restricted to what was known at ``as_of``.

    Raises:
        NoData: Nothing of ``result`` was known at ``as_of``.
        TypeError: ``result`` is of a kind without a point-in-time rule.
    """
    as_of = require_aware(as_of)
    if isinstance(result, Bars):
        return _bars(result, as_of)  # type: ignore[return-value]
    if isinstance(result, Timeline):
        return _timeline(result, as_of)  # type: ignore[return-value]
    if isinstance(result, Snapshot):
        return _snapshot(result, as_of)  # type: ignore[return-value]
    raise TypeError(f"no point-in-time rule for {type(result).__name__}")


def _bars(bars: Bars, as_of: datetime) -> Bars:
    kept = bars.upto(as_of)
    if len(kept) == 0:
        first = bars.first_time.isoformat() if bars.first_time else "never"
        raise NoData(
            f"{bars.symbol}: no {bars.interval} bar had closed by {as_of.isoformat()} "
            f"at {bars.provenance.provider} (its first bar closed {first}); "
            "use a later as_of or a provider with older history",
            provider=bars.provenance.provider,
        )
    return kept


def _timeline(timeline: Timeline[Any], as_of: datetime) -> Timeline[Any]:
    kept = [item for item in timeline.items if item.known_at <= as_of]
    if len(kept) == len(timeline.items):
        return timeline
    if not kept:
        earliest = min(item.known_at for item in timeline.items)
        raise NoData(
            f"{timeline.symbol}: {timeline.provenance.provider} has no "
            f"{type(timeline).__name__.lower()} known by {as_of.isoformat()}; its records "
            f"start {earliest.isoformat()}; use a later as_of or a provider with older records",
            provider=timeline.provenance.provider,
        )
    return timeline.model_copy(update={"items": kept})


def _snapshot(snapshot: Snapshot, as_of: datetime) -> Snapshot:
    live = snapshot.provenance.origin == "observed" and _is_live(snapshot)
    limit = as_of + LIVE_GRACE if live else as_of
    if snapshot.observed_at > limit:
        what = type(snapshot).__name__
        raise NoData(
            f"{snapshot.symbol}: the {what.lower()} of {snapshot.provenance.provider} was "
            f"observed {snapshot.observed_at.isoformat()}, after as_of {as_of.isoformat()}; "
            f"{snapshot.provenance.provider} has no {what.lower()} as of that instant "
            "(historical runs use bundled, local or modeled data)",
            provider=snapshot.provenance.provider,
        )
    return snapshot


def _is_live(snapshot: Snapshot) -> bool:
    # A live source observes at the moment it is asked: observed_at is the retrieval time.
    return snapshot.observed_at == snapshot.provenance.retrieved_at
