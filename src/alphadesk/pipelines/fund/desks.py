"""The trading desk on every name of a fund, here or over worker processes.

Each name's desk is a recorded ``desk`` run of its own, as always. At most
``concurrency`` desks are in flight in all; with more than one worker the names go to
worker processes of this machine in small batches (the one local worker mechanism,
:mod:`alphadesk.pool.batches`), each worker building its desk and runner once. With one
worker, or with model objects (which stay in this process), the desks run here. A desk
that raises is a failed line with its error, never the end of the fund.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import aclosing
from dataclasses import dataclass
from functools import partial

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.base import Model
from alphadesk.pipelines.desk.models import DeskRequest, DeskResult
from alphadesk.pipelines.desk.pipeline import TradingDesk
from alphadesk.pipelines.fund.models import DeskLine
from alphadesk.pipelines.models import AgentReport
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.pool.batches import in_processes, start_processes
from alphadesk.pool.processes import can_fork

__all__ = ["DeskRuns", "desk_line"]

logger = logging.getLogger(__name__)

_Runner = PipelineRunner[DeskRequest, DeskResult]
_PRELOAD = [__name__, "alphadesk.data", "alphadesk.pipelines.desk"]
_ANALYSTS = ("market", "sentiment", "news", "fundamentals")


def desk_line(
    symbol: str, result: DeskResult | None, error: str | None = None, seconds: float = 0.0
) -> DeskLine:
    """A desk's result as the fund reads it (``error``: the desk raised instead), taking
    ``seconds``."""
    if result is None:
        report = AgentReport(agent="desk", model="-", outcome="failed", reason=error,
                             seconds=round(seconds, 3))  # fmt: skip
        return DeskLine(symbol=symbol, decision="failed", reason=error, report=report)
    final = result.final
    missed = {}
    for name in _ANALYSTS:
        report = getattr(result, name)
        if report is not None and report.missing:
            missed[name] = list(report.missing)
    reason = f"{result.stage}: {result.reason}" if result.decision == "failed" else None
    agents = result.agents
    report = AgentReport(
        agent="desk",
        model=", ".join(sorted({a.model for a in agents})) or "-",
        outcome="failed" if result.decision == "failed" else "completed",
        reason=reason,
        tool_calls=sum(a.tool_calls for a in agents),
        requests=sum(a.requests for a in agents),
        tokens=sum(a.tokens for a in agents),
        cost_usd=sum(a.cost_usd for a in agents),
        seconds=round(seconds, 3),
    )
    return DeskLine(
        symbol=symbol,
        decision=result.decision,
        conviction=final.conviction if final else None,
        size_fraction=final.size_fraction if final else None,
        rationale=final.rationale if final else "",
        reason=reason,
        run_id=result.run_id,
        missed=missed,
        report=report,
    )


async def _decide(runner: _Runner, request: DeskRequest) -> DeskLine:
    started = time.monotonic()
    try:
        result = await runner.analyze(request)
    except Exception as exc:  # one name's surprise is a failed line, not the end of the fund
        logger.exception("the desk on %s as of %s failed", request.symbol, request.as_of)
        error = f"{type(exc).__name__}: {exc}"
        return desk_line(request.symbol, None, error, time.monotonic() - started)
    return desk_line(request.symbol, result, seconds=time.monotonic() - started)


@dataclass(frozen=True)
class DeskRuns:
    """Where and how widely a fund's desks run.

    ``workers`` defaults to 1 (here); ``pool``: worker processes started beforehand (see
    :meth:`started`). ``on_line`` hears of each name as its desk finishes.
    """

    settings: Settings
    market: MarketData
    model: str | None = None
    models: Mapping[str, Model] | None = None
    workers: int | None = 1
    concurrency: int = 4
    pool: ProcessPoolExecutor | None = None

    async def run(
        self, requests: Sequence[DeskRequest], on_line: Callable[[DeskLine], None]
    ) -> list[DeskLine]:
        """Every request's line, in the order they finish."""
        workers = self._workers(len(requests))
        if workers <= 1:
            return await self._here(requests, on_line)
        if self.pool is not None:
            return await self._in_workers(self.pool, requests, workers, on_line)
        with self._pool(workers) as pool:
            return await self._in_workers(pool, requests, workers, on_line)

    def started(self, count: int) -> ProcessPoolExecutor | None:
        """The worker processes for ``count`` desks, started now if they will run in
        processes and this process can fork (it has a single thread; a run's checkpoint
        connection is a thread, so they start before the run)."""
        workers = self._workers(count)
        if workers <= 1 or not can_fork():
            return None
        pool = self._pool(workers)
        pool.submit(int).result()  # a fork pool starts all its workers with its first task
        return pool

    def _workers(self, count: int) -> int:
        if self.models is not None:  # model objects stay in this process
            return 1
        return max(1, min(self.workers or os.cpu_count() or 1, self.concurrency, count))

    def _pool(self, workers: int) -> ProcessPoolExecutor:
        each = max(1, self.concurrency // workers)
        return start_processes(
            partial(_Decider, self.settings, self.model, each), workers, _PRELOAD
        )

    async def _here(
        self, requests: Sequence[DeskRequest], on_line: Callable[[DeskLine], None]
    ) -> list[DeskLine]:
        desk = TradingDesk(self.settings, self.market, model=self.model, models=self.models)
        runner = PipelineRunner(self.settings, desk, concurrency=self.concurrency, charts=False)

        async def one(request: DeskRequest) -> DeskLine:
            line = await _decide(runner, request)
            on_line(line)
            return line

        return list(await asyncio.gather(*(one(r) for r in requests)))

    async def _in_workers(
        self,
        pool: ProcessPoolExecutor,
        requests: Sequence[DeskRequest],
        workers: int,
        on_line: Callable[[DeskLine], None],
    ) -> list[DeskLine]:
        each = max(1, self.concurrency // workers)
        batches = [list(requests[i : i + each]) for i in range(0, len(requests), each)]
        lines: list[DeskLine] = []
        async with aclosing(in_processes(pool, batches)) as results:
            async for done in results:  # a stopped fund leaves no batch queued
                for line in done:
                    on_line(line)
                    lines.append(line)
        return lines


class _Decider:
    """A worker's desk, runner and event loop, built once, deciding batch after batch."""

    def __init__(self, settings: Settings, model: str | None, concurrency: int) -> None:
        from alphadesk.data import build_provider

        desk = TradingDesk(settings, build_provider(settings), model=model)
        self.runner: _Runner = PipelineRunner(settings, desk, concurrency=concurrency, charts=False)
        self.loop = asyncio.new_event_loop()

    def __call__(self, batch: list[DeskRequest]) -> list[DeskLine]:
        async def decide_all() -> list[DeskLine]:
            return list(await asyncio.gather(*(_decide(self.runner, r) for r in batch)))

        return self.loop.run_until_complete(decide_all())
