"""Screens at scale: a universe on one or many dates, spread over processes, recorded.

A screen is itself a recorded run (kind ``screen``): its request, a summary as its result,
and every symbol-date's outcome as a table (``candidates.csv`` and ``candidates.parquet``)
in its folder. Each desk run it starts is recorded as its own ``csp`` run, as always.

Symbol-dates go to worker processes in small batches; each worker builds its provider and
runner once and runs a batch's symbols concurrently, so the rules model's CPU work spreads
over the cores while a remote model's latency still overlaps. At most ``concurrency`` desk
runs are in flight in all, so the model-call rate a provider sees does not grow with the
number of processes. On a Ray cluster (``cluster``) the same batches go to actors, one per
cluster CPU at most, each holding its runner, under the same limit.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import aclosing
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import AwareDatetime, BaseModel, Field

from alphadesk.agents.csp.models import CspConstraints
from alphadesk.cluster import RayCluster, cluster_cpus, spread
from alphadesk.config import Settings
from alphadesk.data.calendar import NEW_YORK, session_close, sessions_between
from alphadesk.data.universe import bundled_membership
from alphadesk.pipelines.csp.models import CspRequest, CspResult, Depth
from alphadesk.pipelines.csp.pipeline import CspPipeline
from alphadesk.pipelines.csp.screen import ScreenCheck, ScreenResult, ranked, screen_symbol
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.store import RunStore

__all__ = [
    "Outcome",
    "ScreenHistory",
    "ScreenRequest",
    "rebalancing_dates",
    "run_screens",
]

logger = logging.getLogger(__name__)

# One symbol on one date: the pre-filter's check and, if it passed, the desk's result.
Outcome = tuple[datetime, ScreenCheck, CspResult | None]


class ScreenRequest(BaseModel):
    """A universe to screen on one or more dates (session closes)."""

    symbols: list[str] = Field(min_length=1)
    dates: list[AwareDatetime] = Field(min_length=1)  # point in time needs a zone
    depth: Depth = "quick"
    model: str | None = Field(None, description="Every agent's model; None: the settings.")
    constraints: CspConstraints = Field(default_factory=CspConstraints)
    universe: str | None = Field(
        None,
        description="An index (sp500, nasdaq100, dow30): on each date only its members of "
        "that day among `symbols` are screened.",
    )

    def symbols_on(self, day: datetime) -> list[str]:
        """The symbols screened on ``day``: the index members of that day, if any index."""
        if self.universe is None:
            return self.symbols
        session = day.astimezone(ZoneInfo(NEW_YORK)).date()
        members = {m.symbol for m in bundled_membership().members(self.universe, session)}
        return [s for s in self.symbols if s in members]


class ScreenHistory(BaseModel):
    """Every date's screen, and where the table of all outcomes was saved."""

    run_id: str
    screens: list[ScreenResult]
    table: list[Path] = Field(description="candidates.csv and candidates.parquet")

    @property
    def outcomes(self) -> int:
        return sum(len(s.checks) for s in self.screens)


def rebalancing_dates(start: date, end: date, every: int) -> list[datetime]:
    """The close of every ``every``-th trading session from ``start`` to ``end``.

    Raises:
        ValueError: an empty range or a step below one.
    """
    if every < 1:
        raise ValueError(f"every must be at least 1 session, got {every}")
    sessions = sessions_between(start, end)
    if not sessions:
        raise ValueError(f"no trading session between {start} and {end}")
    return [session_close(day) for day in sessions[::every]]


async def run_screens(
    settings: Settings,
    request: ScreenRequest,
    *,
    runner: PipelineRunner[CspRequest, CspResult] | None = None,
    workers: int | None = None,
    concurrency: int = 4,
    on_outcome: Callable[[Outcome], None] | None = None,
    cluster: RayCluster | None = None,
) -> ScreenHistory:
    """Screen every symbol on every date, in worker processes when there is work for them.

    ``workers`` defaults to the number of cores; with one worker (or ``runner`` given) the
    screen runs in this process, through ``runner`` if given. With ``cluster`` the workers
    are Ray actors (``workers`` defaults to, and is capped at, the cluster's CPUs).
    """
    pairs = [(symbol, day) for day in request.dates for symbol in request.symbols_on(day)]
    store = RunStore(settings.store_path)
    run_id = store.start(
        kind="screen",
        title=_title(request),
        request=request,
        as_of=request.dates[-1],
        model=request.model or settings.models.quick,
    )
    try:
        # Each worker runs at least one desk run: more workers than that would exceed it.
        local = min(workers or os.cpu_count() or 1, concurrency, len(pairs))
        if cluster is not None and runner is None:
            outcomes = await _on_ray(
                cluster, settings, request, pairs, workers, concurrency, on_outcome
            )
        elif runner is not None or local <= 1:
            runner = runner or _runner(settings, request.model)
            outcomes = await _in_process(runner, request, pairs, concurrency, on_outcome)
        else:
            outcomes = await _in_workers(settings, request, pairs, local, concurrency, on_outcome)
    except BaseException as exc:
        store.finish(run_id, status="interrupted", error=repr(exc))
        raise
    screens = [
        ranked(day, [(check, result) for when, check, result in outcomes if when == day])
        for day in request.dates
    ]
    table = _save_table(settings.runs_dir / run_id, outcomes)
    for path in table:
        store.add_artifact(run_id, path.name, path, _MEDIA[path.suffix])
    store.finish(run_id, status="completed", result=_summary(screens))
    return ScreenHistory(run_id=run_id, screens=screens, table=table)


def _title(request: ScreenRequest) -> str:
    first, last = request.dates[0].date(), request.dates[-1].date()
    when = str(first) if first == last else f"{first}..{last} ({len(request.dates)} dates)"
    index = f" of the {request.universe} members" if request.universe else ""
    return f"csp screen {when}, {len(request.symbols)} symbols{index}"


def _batches(
    pairs: Sequence[tuple[str, datetime]], workers: int, concurrency: int
) -> tuple[int, list[list[tuple[str, datetime]]]]:
    """Desk runs in flight per worker, and the pairs cut into batches of that size."""
    each = max(1, concurrency // workers)
    return each, [list(pairs[i : i + each]) for i in range(0, len(pairs), each)]


def _runner(
    settings: Settings, model: str | None, concurrency: int = 4
) -> PipelineRunner[CspRequest, CspResult]:
    """The CSP pipeline under the shared runner, without charts (a screen leaves them out)."""
    from alphadesk.data import build_provider

    pipeline = CspPipeline(settings, build_provider(settings), model=model)
    return PipelineRunner(settings, pipeline, concurrency=concurrency, charts=False)


# -- in this process -------------------------------------------------------------------------


async def _in_process(
    runner: PipelineRunner[CspRequest, CspResult],
    request: ScreenRequest,
    pairs: Sequence[tuple[str, datetime]],
    concurrency: int,
    on_outcome: Callable[[Outcome], None] | None,
) -> list[Outcome]:
    slots = asyncio.Semaphore(concurrency)

    async def one(symbol: str, day: datetime) -> Outcome:
        async with slots:
            outcome = await _screen_one(runner, request, symbol, day)
        if on_outcome is not None:
            on_outcome(outcome)
        return outcome

    return list(await asyncio.gather(*(one(s, d) for s, d in pairs)))


async def _screen_one(
    runner: PipelineRunner[CspRequest, CspResult],
    request: ScreenRequest,
    symbol: str,
    day: datetime,
) -> Outcome:
    try:
        check, result = await screen_symbol(
            runner, symbol, day, depth=request.depth, constraints=request.constraints
        )
    except Exception as exc:  # one symbol's surprise must not end a screen of hundreds
        logger.exception("screening %s as of %s failed", symbol, day)
        reason = f"screen error {type(exc).__name__}: {exc}"
        return day, ScreenCheck(symbol=symbol, passed=False, reasons=[reason]), None
    return day, check, result


# -- in worker processes ---------------------------------------------------------------------

_WORKER: dict[str, Any] = {}  # per worker process: its runner and event loop


def _start_worker(settings: Settings, model: str | None, concurrency: int) -> None:
    runner = _runner(settings, model, concurrency)
    _WORKER.update(runner=runner, loop=asyncio.new_event_loop())


def _screen_batch(request: ScreenRequest, batch: list[tuple[str, datetime]]) -> list[Outcome]:
    runner, loop = _WORKER["runner"], _WORKER["loop"]

    async def screen_all() -> list[Outcome]:
        return list(await asyncio.gather(*(_screen_one(runner, request, s, d) for s, d in batch)))

    return loop.run_until_complete(screen_all())


async def _in_workers(
    settings: Settings,
    request: ScreenRequest,
    pairs: Sequence[tuple[str, datetime]],
    workers: int,
    concurrency: int,
    on_outcome: Callable[[Outcome], None] | None,
) -> list[Outcome]:
    each, batches = _batches(pairs, workers, concurrency)
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=_start_method(),
        initializer=_start_worker,
        initargs=(settings, request.model, each),
    )
    loop = asyncio.get_running_loop()
    outcomes: list[Outcome] = []
    try:
        pending = [loop.run_in_executor(pool, _screen_batch, request, b) for b in batches]
        for finished in asyncio.as_completed(pending):
            for outcome in await finished:
                outcomes.append(outcome)
                if on_outcome is not None:
                    on_outcome(outcome)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return outcomes


# -- on a Ray cluster ------------------------------------------------------------------------


class _RayScreener:
    """A Ray actor: one worker's runner and event loop, built once, screening batches."""

    def __init__(self, settings: Settings, model: str | None, concurrency: int) -> None:
        _start_worker(settings, model, concurrency)

    def screen(self, request: ScreenRequest, batch: list[tuple[str, datetime]]) -> list[Outcome]:
        return _screen_batch(request, batch)


async def _on_ray(
    cluster: RayCluster,
    settings: Settings,
    request: ScreenRequest,
    pairs: Sequence[tuple[str, datetime]],
    workers: int | None,
    concurrency: int,
    on_outcome: Callable[[Outcome], None] | None,
) -> list[Outcome]:
    ray = cluster.connect()
    # No more actors than CPUs (an actor beyond them would wait for one forever) nor than
    # desk runs allowed in flight (each actor runs at least one).
    workers = min(workers or cluster_cpus(ray), cluster_cpus(ray), concurrency, len(pairs))
    each, batches = _batches(pairs, workers, concurrency)
    actor = ray.remote(num_cpus=1)(_RayScreener)
    actors = [actor.remote(settings, request.model, each) for _ in range(workers)]
    outcomes: list[Outcome] = []
    calls = spread(ray, actors, lambda a, batch: a.screen.remote(request, batch), batches)
    async with aclosing(calls) as results:  # the actors end even if a callback raises
        async for done in results:
            for outcome in done:
                outcomes.append(outcome)
                if on_outcome is not None:
                    on_outcome(outcome)
    return outcomes


def _start_method() -> Any:
    """Fork while this process has a single thread (workers inherit what is loaded, so they
    start at once); otherwise a fresh interpreter per worker, which is always safe."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


# -- the record ------------------------------------------------------------------------------

_MEDIA = {".csv": "text/csv", ".parquet": "application/vnd.apache.parquet"}


def _save_table(run_dir: Path, outcomes: Sequence[Outcome]) -> list[Path]:
    import pandas as pd

    run_dir.mkdir(parents=True, exist_ok=True)
    rows = sorted((_row(*o) for o in outcomes), key=lambda r: (r["as_of"], r["symbol"]))
    frame = pd.DataFrame(rows, columns=list(_row_columns()))
    csv, parquet = run_dir / "candidates.csv", run_dir / "candidates.parquet"
    frame.to_csv(csv, index=False)
    frame.to_parquet(parquet, index=False)
    return [csv, parquet]


def _row_columns() -> dict[str, None]:
    columns = ["as_of", "symbol", "passed", "filtered_because", "trend", "hv", "iv", "iv_hv"]
    columns += ["decision", "expiration", "strike", "dte", "premium", "delta", "weekly_roc"]
    columns += ["annualized_roc", "reason", "run_id"]
    return dict.fromkeys(columns)


def _row(day: datetime, check: ScreenCheck, result: CspResult | None) -> dict[str, Any]:
    position = result.synthesis.suggested_position if result and result.synthesis else None
    return {
        "as_of": day.date().isoformat(),
        "symbol": check.symbol,
        "passed": check.passed,
        "filtered_because": "; ".join(check.reasons) or None,
        "trend": check.trend,
        "hv": check.hv,
        "iv": check.iv,
        "iv_hv": check.iv_hv,
        "decision": result.decision if result else "filtered",
        "expiration": position.expiration.isoformat() if position else None,
        "strike": position.strike if position else None,
        "dte": position.dte if position else None,
        "premium": position.premium if position else None,
        "delta": position.delta if position else None,
        "weekly_roc": position.weekly_roc if position else None,
        "annualized_roc": position.annualized_roc if position else None,
        "reason": result.reason if result else None,
        "run_id": result.run_id if result else None,
    }


def _summary(screens: Sequence[ScreenResult]) -> dict[str, Any]:
    checks = [c for s in screens for c in s.checks]
    results = [r for s in screens for r in s.results]
    return {
        "dates": len(screens),
        "symbol_dates": len(checks),
        "filtered": sum(not c.passed for c in checks),
        "analysed": len(results),
        "selected": sum(r.decision == "select" for r in results),
        "failed": sum(r.decision == "failed" for r in results),
    }
