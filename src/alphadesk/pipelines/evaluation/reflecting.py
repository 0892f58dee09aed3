"""A walk that learns: the desk's memory written day by day from the outcomes of the
walk's own decisions, as each day knows them.

With memory on, a book's walk decides day by day in this process. Before a day's
decisions, each decision of the walk whose horizon has ended by that day is reflected on
(:func:`~alphadesk.pipelines.desk.reflection.reflect_one`: its outcome measured on bars
known that day, its lesson written at that day), oldest first; the desk then recalls, at
each decision, only the lessons written by its instant. Nothing but the walk's decisions
and the data decides what is written and when: a walk continued from its journal reflects
again at every day from the first (each lesson is stored under its decision's id, so the
same lesson is not stored twice) and decides as the uninterrupted walk would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from alphadesk.data.base import MarketData
from alphadesk.pipelines.desk.memory import DeskMemory
from alphadesk.pipelines.desk.reflection import Decided, reflect_one
from alphadesk.store import RunStore
from alphadesk.store.runs import RunNotFound

from .models import DecisionRecord

__all__ = ["Reflections"]


class Reflections:
    """The walk's decisions waiting for their horizon to end, reflected on at the walk's
    ``dates`` into ``memory``; their runs are read from ``store``, their outcomes from
    ``market``. ``written`` counts the lessons written."""

    def __init__(
        self,
        memory: DeskMemory,
        store: RunStore,
        market: MarketData,
        dates: Sequence[datetime],
    ) -> None:
        self.memory, self.store, self.market = memory, store, market
        self._dates = sorted(dates)
        self._reached = 0  # the walk's dates reflected at so far
        self._waiting: list[Decided] = []
        self.written = 0

    def heard(self, record: DecisionRecord) -> None:
        """A decision of the walk, made now or recorded before: reflected on once due."""
        if record.run_id is None:  # failed before its run began, or carried
            return
        try:
            decided = Decided.of_run(self.store.get(record.run_id))
        except RunNotFound:  # a journal kept without its store: nothing to learn from
            return
        if decided is not None:
            self._waiting.append(decided)

    async def before(self, day: datetime) -> None:
        """Reflect at each of the walk's dates up to ``day`` not reflected at yet."""
        while self._reached < len(self._dates) and self._dates[self._reached] <= day:
            at = self._dates[self._reached]
            due = [d for d in self._waiting if d.horizon_end <= at]
            self._waiting = [d for d in self._waiting if d.horizon_end > at]
            for decided in sorted(due, key=lambda d: (d.decided_at, d.symbol, d.run_id)):
                done = await asyncio.to_thread(reflect_one, self.memory, self.market, decided, at)
                self.written += done is not None
            self._reached += 1
