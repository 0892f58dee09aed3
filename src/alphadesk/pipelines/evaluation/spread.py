"""An evaluation's decisions spread over worker processes of this machine or a Ray cluster.

The decisions go out in small batches of one symbol's consecutive dates; each worker (a
process, or a Ray actor) builds its desk and event loop once and decides batch after
batch, ``concurrency // workers`` decisions at once (at least one), so the rules model's
CPU work spreads over the cores while a remote model's latency still overlaps. Each batch
comes back as soon as it is decided, to be recorded at once: an evaluation stopped midway
loses at most the batches in flight.

On two cores the processes' first decision came after 9 s and they decided 2.6 a second,
where a local Ray cluster's came after 30 s (its actors import everything again), then 2.0
a second (``bench/eval.py --ray``): processes are the default on one machine, Ray is for a
cluster (``--ray``).
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Sequence
from contextlib import aclosing
from functools import partial
from itertools import groupby
from typing import Any

from alphadesk.cluster import RayCluster, cluster_cpus
from alphadesk.config import Settings
from alphadesk.pipelines.base import Pipeline
from alphadesk.pool.batches import in_processes, on_ray, start_processes

from .models import DecisionRecord, EvalSpec
from .walk import Desks, DeskView, Pair, decide

__all__ = ["BATCH", "batches", "decide_in_processes", "decide_on_ray"]

BATCH = 4  # decisions per batch (at least the decisions in flight per worker)
# What a fork server loads once, so each worker forks from it with the desk's modules ready.
_PRELOAD = [__name__, "alphadesk.data", "alphadesk.pipelines.desk", "alphadesk.pipelines.csp"]

MakeDesk = Callable[[], Pipeline[Any, Any]]
OnBatch = Callable[[list[DecisionRecord]], None]


def batches(pairs: Sequence[Pair], size: int) -> list[list[Pair]]:
    """``pairs`` in batches of at most ``size``, each one symbol's, in the order given."""
    out: list[list[Pair]] = []
    for _symbol, run in groupby(pairs, key=lambda p: p[0]):
        same = list(run)
        out += [same[i : i + size] for i in range(0, len(same), size)]
    return out


class _Decider:
    """A worker's desk and event loop, built once, deciding batch after batch."""

    def __init__(
        self,
        spec: EvalSpec,
        settings: Settings,
        make_desk: MakeDesk,
        each: int,
        view: DeskView | None = None,
        desks: Desks | None = None,
    ) -> None:
        self.spec, self.settings, self.each, self.view = spec, settings, each, view
        self.desks = desks
        self.desk, self.loop = make_desk(), asyncio.new_event_loop()
        self.warm = False

    def __call__(self, batch: list[Pair]) -> list[DecisionRecord]:
        work = decide(
            self.spec,
            self.settings,
            self.desk,
            batch,
            concurrency=self.each,
            view=self.view,
            desks=self.desks,
        )
        decided = self.loop.run_until_complete(work)
        if not self.warm:  # what is alive after the first batch (modules, desk, bars,
            # calendars) lives as long as the worker: the collector need not walk it again
            # at every full collection (3 % of a rules decision's CPU otherwise)
            gc.collect()
            gc.freeze()
            self.warm = True
        return decided


def _each(spec: EvalSpec, workers: int) -> int:
    return max(1, spec.concurrency // workers)


async def decide_in_processes(
    spec: EvalSpec,
    settings: Settings,
    make_desk: MakeDesk,
    pairs: Sequence[Pair],
    *,
    workers: int,
    on_batch: OnBatch,
    view: DeskView | None = None,
    desks: Desks | None = None,
) -> None:
    """Decide ``pairs`` on ``workers`` processes; ``on_batch`` hears of each batch decided.

    ``make_desk`` runs in each worker; it and ``view`` must pickle unless the workers are
    forked. ``desks``: as :func:`~.walk.decide` takes them.
    """
    each = _each(spec, workers)
    pool = start_processes(
        partial(_Decider, spec, settings, make_desk, each, view, desks), workers, _PRELOAD
    )
    try:
        async with aclosing(in_processes(pool, batches(pairs, max(BATCH, each)))) as results:
            async for done in results:  # a stopped evaluation leaves no batch queued
                on_batch(done)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


async def decide_on_ray(
    cluster: RayCluster,
    spec: EvalSpec,
    settings: Settings,
    make_desk: MakeDesk,
    pairs: Sequence[Pair],
    *,
    on_batch: OnBatch,
    view: DeskView | None = None,
    desks: Desks | None = None,
) -> None:
    """Decide ``pairs`` on Ray actors, one per cluster CPU at most (and no more than
    ``spec.concurrency``); ``make_desk`` and ``view`` must pickle."""
    workers = max(1, min(cluster_cpus(cluster.connect()), spec.concurrency, len(pairs)))
    each = _each(spec, workers)
    decider = partial(_Decider, spec, settings, make_desk, each, view, desks)
    calls = on_ray(cluster, decider, batches(pairs, max(BATCH, each)), workers=workers)
    async with aclosing(calls) as results:  # the actors end even if a callback raises
        async for done in results:
            on_batch(done)
