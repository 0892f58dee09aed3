"""Spreading a screen's symbol-dates over this process, worker processes or a Ray cluster.

Symbol-dates go to worker processes in small batches; each worker builds its provider and
runner once and runs a batch's symbols concurrently, so the rules model's CPU work spreads
over the cores while a remote model's latency still overlaps. At most ``concurrency`` desk
runs are in flight in all, so the model-call rate a provider sees does not grow with the
number of processes. On a Ray cluster (``cluster``) the same batches go to actors, one per
cluster CPU at most, each holding its runner, under the same limit. Each desk run is
recorded as its own ``csp`` run, wherever it ran.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import aclosing
from dataclasses import dataclass
from functools import partial

from alphadesk.cluster import RayCluster, cluster_cpus
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.base import Model
from alphadesk.pipelines.csp.models import CspRequest, CspResult
from alphadesk.pipelines.csp.pipeline import CspPipeline
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.pipelines.screen.models import Outcome
from alphadesk.pipelines.screen.prefilter import ScreenCheck, screen_symbol
from alphadesk.pool.batches import in_processes, on_ray, start_processes
from alphadesk.pool.processes import can_fork

__all__ = ["FanOut"]

logger = logging.getLogger(__name__)

_Runner = PipelineRunner[CspRequest, CspResult]


@dataclass(frozen=True)
class FanOut:
    """Where and how widely a screen runs its symbol-dates (what its nodes depend on).

    ``workers`` defaults to the number of cores; with one worker, or with ``models`` (model
    objects stay in this process), the screen runs here on ``market``. With ``cluster`` the
    workers are Ray actors (``workers`` defaults to, and is capped at, the cluster's CPUs).
    ``charts`` draws each desk run's chart; ``on_outcome`` hears of each symbol-date as it
    finishes.
    """

    settings: Settings
    market: MarketData
    model: str | None = None
    models: Mapping[str, Model] | None = None
    workers: int | None = None
    concurrency: int = 4
    cluster: RayCluster | None = None
    charts: bool = False
    on_outcome: Callable[[Outcome], None] | None = None
    pool: ProcessPoolExecutor | None = None  # workers started beforehand (see ``started``)

    async def run(self, requests: Sequence[CspRequest]) -> list[Outcome]:
        """Every request's outcome, in the order they finish."""
        if not requests:
            return []
        if self.cluster is not None and self.models is None:
            return await self._on_ray(self.cluster, requests)
        workers = self._local_workers(len(requests))
        if workers <= 1:
            return await self._in_process(requests)
        if self.pool is not None:
            return await self._in_workers(self.pool, requests, workers)
        with self._pool(workers) as pool:
            return await self._in_workers(pool, requests, workers)

    def started(self, count: int) -> ProcessPoolExecutor | None:
        """The worker processes for ``count`` symbol-dates started now, if they run in
        processes of this machine and can be forked from this one (it has a single thread):
        a run's checkpoint connection is a thread, so a screen forks them before its run
        starts, and they begin at once with everything this process has loaded."""
        workers = self._local_workers(count)
        if self.cluster is not None or workers <= 1 or not can_fork():
            return None
        pool = self._pool(workers)
        pool.submit(int).result()  # a fork pool starts all its workers with its first task
        return pool

    def _local_workers(self, count: int) -> int:
        """Processes for ``count`` symbol-dates; one (or model objects) runs them here."""
        if self.models is not None:  # model objects stay in this process
            return 1
        # Each worker runs at least one desk run: more workers than that would exceed it.
        return min(self.workers or os.cpu_count() or 1, self.concurrency, count)

    def _screener(self, workers: int) -> partial[_Screener]:
        each = _per_worker(workers, self.concurrency)
        return partial(_Screener, self.settings, self.model, each, self.charts)

    def _pool(self, workers: int) -> ProcessPoolExecutor:
        return start_processes(self._screener(workers), workers, [__name__, "alphadesk.data"])

    def _heard(self, outcome: Outcome) -> Outcome:
        if self.on_outcome is not None:
            self.on_outcome(outcome)
        return outcome

    async def _in_process(self, requests: Sequence[CspRequest]) -> list[Outcome]:
        pipeline = CspPipeline(self.settings, self.market, model=self.model, models=self.models)
        runner = PipelineRunner(
            self.settings, pipeline, concurrency=self.concurrency, charts=self.charts
        )
        slots = asyncio.Semaphore(self.concurrency)

        async def one(request: CspRequest) -> Outcome:
            async with slots:
                outcome = await _screen_one(runner, request)
            return self._heard(outcome)

        return list(await asyncio.gather(*(one(r) for r in requests)))

    async def _in_workers(
        self, pool: ProcessPoolExecutor, requests: Sequence[CspRequest], workers: int
    ) -> list[Outcome]:
        outcomes: list[Outcome] = []
        batches = _batches(requests, _per_worker(workers, self.concurrency))
        async with aclosing(in_processes(pool, batches)) as results:
            async for done in results:  # an interrupted screen leaves no batch queued
                outcomes += [self._heard(outcome) for outcome in done]
        return outcomes

    async def _on_ray(self, cluster: RayCluster, requests: Sequence[CspRequest]) -> list[Outcome]:
        ray = cluster.connect()
        # No more actors than CPUs (an actor beyond them would wait for one forever) nor
        # than desk runs allowed in flight (each actor runs at least one).
        cpus = cluster_cpus(ray)
        workers = min(self.workers or cpus, cpus, self.concurrency, len(requests))
        batches = _batches(requests, _per_worker(workers, self.concurrency))
        outcomes: list[Outcome] = []
        calls = on_ray(cluster, self._screener(workers), batches, workers=workers)
        async with aclosing(calls) as results:  # the actors end even if a callback raises
            async for done in results:
                outcomes += [self._heard(outcome) for outcome in done]
        return outcomes


async def _screen_one(runner: _Runner, request: CspRequest) -> Outcome:
    try:
        check, result = await screen_symbol(
            runner,
            request.symbol,
            request.as_of,
            depth=request.depth,
            constraints=request.constraints,
        )
    except Exception as exc:  # one symbol's surprise must not end a screen of hundreds
        logger.exception("screening %s as of %s failed", request.symbol, request.as_of)
        error = f"{type(exc).__name__}: {exc}"
        return request.as_of, ScreenCheck(symbol=request.symbol, passed=False, error=error), None
    return request.as_of, check, result


def _per_worker(workers: int, concurrency: int) -> int:
    """Desk runs in flight per worker."""
    return max(1, concurrency // workers)


def _batches(requests: Sequence[CspRequest], each: int) -> list[list[CspRequest]]:
    return [list(requests[i : i + each]) for i in range(0, len(requests), each)]


# -- in a worker process or a Ray actor -------------------------------------------------------


class _Screener:
    """A worker's runner and event loop, built once, screening batch after batch."""

    def __init__(
        self, settings: Settings, model: str | None, concurrency: int, charts: bool
    ) -> None:
        from alphadesk.data import build_provider

        pipeline = CspPipeline(settings, build_provider(settings), model=model)
        self.runner = PipelineRunner(settings, pipeline, concurrency=concurrency, charts=charts)
        self.loop = asyncio.new_event_loop()

    def __call__(self, batch: list[CspRequest]) -> list[Outcome]:
        async def screen_all() -> list[Outcome]:
            return list(await asyncio.gather(*(_screen_one(self.runner, r) for r in batch)))

        return self.loop.run_until_complete(screen_all())
