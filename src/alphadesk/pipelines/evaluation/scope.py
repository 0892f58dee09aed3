"""The decision in progress: its instant, the reads that went past it, the model calls it took.

The harness opens a :func:`decision` around each analysis. The scope lives in a context
variable, so every task and worker thread the desk starts for that analysis (LangGraph
nodes, ``asyncio.to_thread`` tool calls) sees its own decision and no other.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime

__all__ = ["Decision", "LookAheadError", "current_decision", "decision"]


class LookAheadError(RuntimeError):
    """A desk asked for data later than the instant it was deciding at (or outside any
    decision). The evaluation is void: fix the desk so it reads only ``request.as_of``."""


@dataclass
class Decision:
    """One symbol decided at one instant, and what the decision used.

    Attributes:
        symbol: The symbol decided on.
        instant: The decision instant; nothing later may be read.
        violations: Every read past ``instant`` (kept even if the desk swallowed the error).
        model_calls: Model responses the decision used, cached or not.
        model_cost_usd: What those responses cost when first answered.
        live_calls: Responses that came from the model now (not from the cache).
        live_cost_usd: What the live responses cost.
    """

    symbol: str
    instant: datetime
    violations: list[str] = field(default_factory=list)
    model_calls: int = 0
    model_cost_usd: float = 0.0
    live_calls: int = 0
    live_cost_usd: float = 0.0

    def check(self, what: str, as_of: datetime) -> None:
        """Raise (and remember) a read of ``what`` at ``as_of`` past the decision instant."""
        if as_of > self.instant:
            message = (
                f"look-ahead: {what} as of {as_of.isoformat()} read while deciding "
                f"{self.symbol} at {self.instant.isoformat()}; a desk may read only data "
                "known at its request's as_of"
            )
            self.violations.append(message)
            raise LookAheadError(message)


_CURRENT: ContextVar[Decision | None] = ContextVar("alphadesk_eval_decision", default=None)


def current_decision() -> Decision | None:
    """The decision in progress in this context, if any."""
    return _CURRENT.get()


@contextmanager
def decision(symbol: str, instant: datetime) -> Iterator[Decision]:
    """Open the scope of one decision for the code run inside it (and the tasks it starts).

    Raises:
        LookAheadError: On leaving, when anything read past ``instant``, even if the
            desk caught the error raised at the read.
    """
    scope = Decision(symbol=symbol, instant=instant)
    token = _CURRENT.set(scope)
    try:
        yield scope
    finally:
        _CURRENT.reset(token)
    if scope.violations:
        raise LookAheadError(scope.violations[0])
