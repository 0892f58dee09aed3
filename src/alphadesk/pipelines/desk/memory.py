"""What the desk needs of a memory of past situations, so it runs the same without one.

The vector memory (:mod:`alphadesk.memory`) satisfies :class:`DeskMemory`; with memory
switched off in the settings the desk has none, recalls nothing and writes no lessons.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from alphadesk.agents.desk.models import PastSituation
from alphadesk.config import Settings

__all__ = ["DeskMemory", "Recalled", "open_memory", "past_situation"]


class Recalled(Protocol):
    """A recollection as the memory returns it."""

    id: str
    symbol: str
    situation: str
    lesson: str
    outcome: dict[str, Any]
    decided_at: datetime
    written_at: datetime
    distance: float


class DeskMemory(Protocol):
    """Lessons stored by situation; recall sees only what was written by ``as_of``."""

    def remember(
        self,
        *,
        symbol: str,
        situation: str,
        lesson: str,
        outcome: dict[str, Any],
        decided_at: datetime,
        written_at: datetime,
        run_id: str | None = None,
    ) -> str: ...

    def recall(
        self, symbol: str, situation: str, *, as_of: datetime, k: int = 2
    ) -> Sequence[Recalled]: ...

    def forget(self) -> None:
        """Delete every lesson (a walk that learns, started over)."""


def open_memory(settings: Settings) -> DeskMemory | None:
    """The memory the settings switch on (``memory.enabled``), else None."""
    if not settings.memory.enabled:
        return None
    from alphadesk.memory import SituationMemory

    return SituationMemory(settings.memory_path)


def past_situation(item: Recalled) -> PastSituation:
    return PastSituation(
        id=item.id,
        symbol=item.symbol,
        situation=item.situation,
        lesson=item.lesson,
        outcome=dict(item.outcome),
        decided_at=item.decided_at,
        written_at=item.written_at,
        distance=float(item.distance),
    )
