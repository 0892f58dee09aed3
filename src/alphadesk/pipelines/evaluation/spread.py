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
from concurrent.futures import ProcessPoolExecutor
from contextlib import aclosing
from itertools import groupby
from typing import Any

from alphadesk.cluster import RayCluster, cluster_cpus, spread
from alphadesk.config import Settings
from alphadesk.pipelines.base import Pipeline
from alphadesk.pipelines.workers import exit_with_parent, start_method

from .models import DecisionRecord, EvalSpec
from .walk import DeskView, Pair, decide

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
    ) -> None:
        self.spec, self.settings, self.each, self.view = spec, settings, each, view
        self.desk, self.loop = make_desk(), asyncio.new_event_loop()
        self.warm = False

    def decide(self, batch: list[Pair]) -> list[DecisionRecord]:
        work = decide(
            self.spec, self.settings, self.desk, batch, concurrency=self.each, view=self.view
        )
        decided = self.loop.run_until_complete(work)
        if not self.warm:  # what is alive after the first batch (modules, desk, bars,
            # calendars) lives as long as the worker: the collector need not walk it again
            # at every full collection (3 % of a rules decision's CPU otherwise)
            gc.collect()
            gc.freeze()
            self.warm = True
        return decided


_WORKER: dict[str, _Decider] = {}  # per worker process


def _start_worker(
    spec: EvalSpec, settings: Settings, make_desk: MakeDesk, each: int, view: DeskView | None
) -> None:
    exit_with_parent()
    _WORKER["decider"] = _Decider(spec, settings, make_desk, each, view)


def _decide_batch(batch: list[Pair]) -> list[DecisionRecord]:
    return _WORKER["decider"].decide(batch)


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
) -> None:
    """Decide ``pairs`` on ``workers`` processes; ``on_batch`` hears of each batch decided.

    ``make_desk`` runs in each worker; it and ``view`` must pickle unless the workers are
    forked.
    """
    each = _each(spec, workers)
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=start_method(_PRELOAD),
        initializer=_start_worker,
        initargs=(spec, settings, make_desk, each, view),
    )
    loop = asyncio.get_running_loop()
    pending = [
        loop.run_in_executor(pool, _decide_batch, b) for b in batches(pairs, max(BATCH, each))
    ]
    try:
        for finished in asyncio.as_completed(pending):
            on_batch(await finished)
    finally:
        for future in pending:  # a stopped evaluation leaves no batch queued
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


class _RayDecider(_Decider):
    """A Ray actor: one worker's desk and event loop."""


async def decide_on_ray(
    cluster: RayCluster,
    spec: EvalSpec,
    settings: Settings,
    make_desk: MakeDesk,
    pairs: Sequence[Pair],
    *,
    on_batch: OnBatch,
    view: DeskView | None = None,
) -> None:
    """Decide ``pairs`` on Ray actors, one per cluster CPU at most (and no more than
    ``spec.concurrency``); ``make_desk`` and ``view`` must pickle."""
    ray = cluster.connect()
    workers = max(1, min(cluster_cpus(ray), spec.concurrency, len(pairs)))
    each = _each(spec, workers)
    actor = ray.remote(num_cpus=1)(_RayDecider)
    actors = [actor.remote(spec, settings, make_desk, each, view) for _ in range(workers)]
    calls = spread(
        ray, actors, lambda a, batch: a.decide.remote(batch), batches(pairs, max(BATCH, each))
    )
    async with aclosing(calls) as results:  # the actors end even if a callback raises
        async for done in results:
            on_batch(done)
