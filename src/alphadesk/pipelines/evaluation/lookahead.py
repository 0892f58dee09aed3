"""Market data that refuses to answer past the decision instant.

The harness hands a desk :func:`guard` of its market. Every call that takes an
``as_of`` checks it against the decision in progress (:mod:`.scope`): later than the
decision instant, or outside any decision, raises :class:`~.scope.LookAheadError`, and
the decision remembers it so the evaluation fails even if the desk caught the error.
A provider chain is guarded member by member, so the desk still sees a chain (the
options tools look inside one).
"""

from __future__ import annotations

from datetime import datetime

from alphadesk.data.base import IvHistorySource, MarketData
from alphadesk.data.chain import ProviderChain
from alphadesk.data.checked import CheckedIvHistory, CheckedMarket, each_member

from .scope import LookAheadError, current_decision

__all__ = ["GuardedMarket", "guard"]


class GuardedMarket(CheckedMarket):
    """``inner`` behind the look-ahead check (see the module docstring)."""

    def __repr__(self) -> str:
        return f"GuardedMarket({self.inner!r})"

    def _check(self, what: str, symbol: str, as_of: datetime) -> None:
        scope = current_decision()
        if scope is None:
            raise LookAheadError(
                f"{what} of {symbol} as of {as_of.isoformat()} read outside any decision; "
                "a desk under evaluation reads data only while deciding"
            )
        scope.check(f"{what} of {symbol}", as_of)


class _GuardedIvHistory(GuardedMarket, CheckedIvHistory):
    """A guarded provider that also computes IV histories in one pass."""


def guard(market: MarketData) -> MarketData:
    """``market`` with every read checked against the decision in progress."""
    if isinstance(market, ProviderChain):
        return each_member(market, guard)
    if isinstance(market, IvHistorySource):
        return _GuardedIvHistory(market)
    return GuardedMarket(market)
