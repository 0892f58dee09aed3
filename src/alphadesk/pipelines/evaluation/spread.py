"""The walk forward on a Ray cluster: one symbol's walk per task, on actors that each
build their desk once; the decisions come back in the order of a walk in this process."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import aclosing
from datetime import datetime
from typing import Any

from alphadesk.cluster import RayCluster, cluster_cpus, spread
from alphadesk.config import Settings
from alphadesk.pipelines.base import Pipeline

from .models import DecisionRecord, EvalSpec
from .walk import walk

__all__ = ["walk_on_ray"]


class _Walker:
    """A Ray actor: a desk (its models behind the evaluation's response cache) and an event
    loop, built once, walking one symbol at a time."""

    def __init__(self, settings: Settings, make_desk: Callable[[], Pipeline[Any, Any]]) -> None:
        self.settings, self.desk, self.loop = settings, make_desk(), asyncio.new_event_loop()

    def walk(self, spec: EvalSpec, dates: list[datetime]) -> list[DecisionRecord]:
        return self.loop.run_until_complete(walk(spec, self.settings, self.desk, dates))


async def walk_on_ray(
    cluster: RayCluster,
    spec: EvalSpec,
    settings: Settings,
    make_desk: Callable[[], Pipeline[Any, Any]],
    dates: Sequence[datetime],
    *,
    on_decision: Callable[[DecisionRecord], None] | None = None,
) -> list[DecisionRecord]:
    """What :func:`~alphadesk.pipelines.evaluation.walk.walk` returns, symbol by symbol on
    the cluster, with at most ``spec.concurrency`` decisions in flight in all.

    ``make_desk`` is called on each actor, so it must pickle (a module-level function or a
    partial of one).
    """
    ray = cluster.connect()
    workers = min(cluster_cpus(ray), spec.concurrency, len(spec.symbols))
    each = max(1, spec.concurrency // workers)  # decisions in flight per actor
    actor = ray.remote(num_cpus=1)(_Walker)
    actors = [actor.remote(settings, make_desk) for _ in range(workers)]
    alone = [spec.model_copy(update={"symbols": [s], "concurrency": each}) for s in spec.symbols]
    records: list[DecisionRecord] = []
    calls = spread(ray, actors, lambda a, one: a.walk.remote(one, list(dates)), alone)
    async with aclosing(calls) as results:
        async for done in results:
            for record in done:
                records.append(record)
                if on_decision is not None:
                    on_decision(record)
    order = {symbol: i for i, symbol in enumerate(spec.symbols)}
    records.sort(key=lambda r: (r.as_of, order[r.symbol]))
    return records
