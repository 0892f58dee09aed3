"""The decisions an evaluation still has to make, made where they should be, each one
recorded in the journal as soon as it is made."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from alphadesk.cluster import RayCluster
from alphadesk.config import Settings
from alphadesk.pipelines.base import Pipeline

from .journal import DecisionJournal, Key
from .models import DecisionRecord, EvalSpec
from .spread import MakeDesk, decide_in_processes, decide_on_ray
from .walk import BeforeDay, Desks, DeskView, Pair, decide, fill_positions

__all__ = ["Heard", "Where", "continue_decisions", "in_order", "make_decisions", "pending"]


@dataclass(frozen=True)
class Heard:
    """Who hears of the decisions: their total, how many were recorded before, each one."""

    on_start: Callable[[int], None] | None = None
    on_resume: Callable[[int], None] | None = None
    on_decision: Callable[[DecisionRecord], None] | None = None


@dataclass(frozen=True)
class Where:
    """Where the decisions are made: here (``workers`` 1), in ``workers`` processes of
    this machine, or on a Ray ``cluster``. ``make_desk`` builds the desk in a worker;
    ``view`` is how the desk is asked (a disguise: its names and instants); ``desks``
    which trading desk a pair is asked of, where not the settings'. With ``before_day``
    the decisions are made here, day by day (see :func:`~.walk.decide`)."""

    desk: Pipeline[Any, Any]
    make_desk: MakeDesk
    workers: int | None = None
    cluster: RayCluster | None = None
    view: DeskView | None = None
    desks: Desks | None = None
    before_day: BeforeDay | None = None

    def processes(self, decisions: int) -> int:
        """Worker processes for ``decisions``: one per core unless told (1: none)."""
        if self.before_day is not None:
            return 1
        return max(1, min(self.workers or os.cpu_count() or 1, decisions))


def pending(
    spec: EvalSpec,
    dates: Sequence[datetime],
    recorded: Mapping[Key, DecisionRecord],
    only: Collection[Pair] | None = None,
) -> list[Pair]:
    """The symbol-dates (of ``only``, if given) with no recorded decision (or a failed
    one, asked again), a symbol's dates together so a worker decides them one after
    another."""
    return [
        (symbol, instant)
        for symbol in spec.symbols
        for instant in dates
        if (only is None or (symbol, instant) in only)
        and ((symbol, instant) not in recorded or recorded[(symbol, instant)].decision == "failed")
    ]


async def make_decisions(
    spec: EvalSpec,
    settings: Settings,
    pairs: Sequence[Pair],
    journal: DecisionJournal,
    where: Where,
    on_decision: Callable[[DecisionRecord], None] | None = None,
) -> list[DecisionRecord]:
    """Decide ``pairs``, journalling each decision (or small batch) as it comes back;
    returns the decisions made, in the order they were made."""
    made: list[DecisionRecord] = []

    def record(batch: list[DecisionRecord]) -> None:
        journal.append(batch)
        made.extend(batch)
        if on_decision is not None:
            for one in batch:
                on_decision(one)

    if not pairs:
        return made
    workers, view, desks = where.processes(len(pairs)), where.view, where.desks
    if where.cluster is not None and where.before_day is None:
        await decide_on_ray(
            where.cluster,
            spec,
            settings,
            where.make_desk,
            pairs,
            on_batch=record,
            view=view,
            desks=desks,
        )
    elif workers > 1:
        await decide_in_processes(
            spec,
            settings,
            where.make_desk,
            pairs,
            workers=workers,
            on_batch=record,
            view=view,
            desks=desks,
        )
    else:
        await decide(
            spec,
            settings,
            where.desk,
            pairs,
            on_decision=lambda r: record([r]),
            view=view,
            desks=desks,
            before_day=where.before_day,
        )
    return made


async def continue_decisions(
    spec: EvalSpec,
    settings: Settings,
    dates: Sequence[datetime],
    journal: DecisionJournal,
    where: Where,
    heard: Heard,
    only: Collection[Pair] | None = None,
) -> list[DecisionRecord]:
    """The decisions ``journal`` lacks (of ``only``, if given), made and recorded;
    closes the journal."""
    total = len(dates) * len(spec.symbols) if only is None else len(only)
    try:
        todo = pending(spec, dates, journal.recorded, only)
        if heard.on_start is not None:
            heard.on_start(total)
        if heard.on_resume is not None and len(todo) < total:
            heard.on_resume(total - len(todo))
        return await make_decisions(spec, settings, todo, journal, where, heard.on_decision)
    finally:
        journal.close()


def in_order(
    spec: EvalSpec,
    dates: Sequence[datetime],
    recorded: Mapping[Key, DecisionRecord],
    made: Sequence[DecisionRecord],
    only: Collection[Pair] | None = None,
) -> list[DecisionRecord]:
    """Every decision (of ``only``, if given), recorded before or made now, in (date,
    symbol) order, with the trading desk's positions."""
    latest = dict(recorded) | {(r.symbol, r.as_of): r for r in made}
    # as_of from ``dates``: one time zone for all, whether read back from the file or not
    records = [
        latest[(s, d)].model_copy(update={"as_of": d})
        for d in dates
        for s in spec.symbols
        if only is None or (s, d) in only
    ]
    if spec.desk == "desk":
        fill_positions(records, spec.long_short)
    return records
