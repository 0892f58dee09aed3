"""Fan-out and durability benchmarks: local processes, a local Ray cluster, Temporal.

    python bench/scale.py [--dates 5] [--cpus 2] [--latency 1.0] [--concurrency 8] [--runs 8]
        [--symbols 0] [--quick]

Prints, in one run:

- the time to start a local Ray cluster (paid once per process, not per screen);
- a screen of the whole bundled universe on ``--dates`` dates (every 5th session from
  June 2012), in worker processes and on the Ray cluster: wall seconds, symbol-dates per
  second, and whether the two tables agree (they should, run ids apart);
- the universe screened on one date with every model call taking ``--latency`` seconds (the
  rules policy slowed like a remote model, in Ray's workers too), ``--concurrency`` desk
  runs at a time, in this process and on Ray;
- a sweep of 120 SMA-crossover parameter sets over ten years of NVDA, in this process and
  on Ray with cold and with warm workers: wall seconds, and whether the rows agree;
- ``--runs`` CSP desk runs in this process and as Temporal workflows (a dev server and a
  worker in this process), and the overhead Temporal adds per activity.

On one machine Ray adds actor start-up and serialisation to what processes already do, so
expect it to be no faster here; it pays on a cluster with more cores than this machine.
``--symbols N`` screens the universe's first N symbols (0: all of them). Figures only:
nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from alphadesk.backtest import BacktestConfig, Costs, frame_from_bars, sweep
from alphadesk.cluster import RayCluster
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.llm.testing import add_rules_latency
from alphadesk.pipelines.csp.models import CspRequest
from alphadesk.pipelines.csp.pipeline import CspPipeline
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.pipelines.screen.models import ScreenHistory, ScreenRequest
from alphadesk.pipelines.screen.pipeline import rebalancing_dates, run_screens


def _table(history: ScreenHistory) -> pd.DataFrame:
    return pd.read_csv(history.table[0]).drop(columns="run_id")


def _universe(root: Path, symbols: int) -> list[str]:
    universe = build_provider(Settings(data_dir=root / "probe")).universe()
    return universe[:symbols] if symbols else universe


def _screens(root: Path, dates: int, cluster: RayCluster, symbols: int) -> None:
    universe = _universe(root, symbols)
    days = rebalancing_dates(date(2012, 6, 1), date(2012, 12, 31), 5)[:dates]
    request = ScreenRequest(symbols=universe, dates=days)
    tables = []
    for label, where in (("processes", None), ("ray", cluster)):
        settings = Settings(data_dir=root / label)
        start = time.perf_counter()
        history = asyncio.run(run_screens(settings, request, cluster=where))
        wall = time.perf_counter() - start
        print(
            f"screen {len(universe)} symbols x {len(days)} dates, {label:9}: {wall:6.2f} s "
            f"({history.outcomes / wall:5.1f} symbol-dates/s)"
        )
        tables.append(_table(history))
    print(f"screen tables agree: {tables[0].equals(tables[1])}")


def _sweeps(cluster: RayCluster) -> None:
    end = datetime(2018, 12, 31, 23, 59, tzinfo=UTC)
    frame, _ = frame_from_bars(BundledProvider().daily_bars("NVDA", end))
    grid: dict[str, list[Any]] = {"fast": list(range(5, 55, 5)), "slow": list(range(60, 260, 17))}
    config = BacktestConfig(costs=Costs(0.001, slippage=0.0005))
    rows = []
    for label, where in (("here", None), ("ray, cold", cluster), ("ray, warm", cluster)):
        start = time.perf_counter()
        rows.append(
            sweep("sma_cross", frame, grid, config, trade_from=date(2009, 1, 1), cluster=where)
        )
        wall = time.perf_counter() - start
        print(f"sweep of {len(rows[-1])} parameter sets, {label:9}: {wall:6.2f} s")
    print(f"sweep rows agree: {all(rows[0].equals(r) for r in rows[1:])}")


def _slow_screens(root: Path, latency: float, concurrency: int, cpus: int, symbols: int) -> None:
    """The universe on one date with every model call taking ``latency`` seconds."""
    import ray

    universe = _universe(root, symbols)
    request = ScreenRequest(symbols=universe, dates=[session_close(date(2012, 6, 29))])
    restore = add_rules_latency(latency)
    try:
        start = time.perf_counter()
        here = asyncio.run(
            run_screens(Settings(data_dir=root / "slow-here"), request, workers=1,
                        concurrency=concurrency)
        )  # fmt: skip
        wall = time.perf_counter() - start
    finally:
        restore()
    print(
        f"screen {len(universe)} symbols, {latency:g} s per model call, in this process: "
        f"{wall:6.2f} s ({concurrency} runs at a time)"
    )

    def slow_model_calls() -> None:  # Ray's workers are processes of their own
        add_rules_latency(latency)

    ray.init(
        num_cpus=cpus,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"worker_process_setup_hook": slow_model_calls},
    )
    try:
        start = time.perf_counter()
        spread = asyncio.run(
            run_screens(Settings(data_dir=root / "slow-ray"), request,
                        concurrency=concurrency, cluster=RayCluster())
        )  # fmt: skip
        wall = time.perf_counter() - start
    finally:
        ray.shutdown()
    print(
        f"screen {len(universe)} symbols, {latency:g} s per model call, on Ray:          "
        f"{wall:6.2f} s ({concurrency} runs at a time over {cpus} CPUs)"
    )
    print(f"slow screen tables agree: {_table(here).equals(_table(spread))}")


def _temporal_overhead(root: Path, runs: int) -> None:
    """Local desk runs against the same runs as workflows: the cost of durability."""
    from alphadesk.durable.runs import TemporalRuns
    from alphadesk.durable.server import connect, dev_server
    from alphadesk.durable.wire import workflow_id
    from alphadesk.durable.worker import run_worker

    days = rebalancing_dates(date(2012, 1, 3), date(2012, 12, 31), 5)[:runs]
    requests = [CspRequest(symbol="AAPL", as_of=session_close(day)) for day in days]

    async def local() -> float:
        settings = Settings(data_dir=root / "local")
        runner = PipelineRunner(
            settings, CspPipeline(settings, build_provider(settings)), charts=False
        )
        start = time.perf_counter()
        for request in requests:
            await runner.analyze(request)
        return time.perf_counter() - start

    async def durable(address: str) -> tuple[float, int]:
        settings, queue = Settings(data_dir=root / "durable"), f"bench-{uuid.uuid4().hex[:6]}"
        ready = asyncio.Event()
        worker = asyncio.create_task(
            run_worker(settings, address, task_queue=queue, ready=lambda _: ready.set())
        )
        await ready.wait()
        runs = TemporalRuns(settings, address, task_queue=queue, charts=False)
        results = []
        start = time.perf_counter()
        for request in requests:
            results.append(await runs.run("csp", request))
        wall = time.perf_counter() - start
        worker.cancel()  # it shuts down its pollers before the loop closes
        await asyncio.gather(worker, return_exceptions=True)
        client = await connect(address)
        activities = 0
        for result in results:
            history = await client.get_workflow_handle(workflow_id(result.run_id)).fetch_history()
            activities += sum(
                e.HasField("activity_task_scheduled_event_attributes") for e in history.events
            )
        return wall, activities

    with dev_server() as address:
        asyncio.run(durable(address))  # warm up: imports, the worker's first workflow
        here = asyncio.run(local())
        there, activities = asyncio.run(durable(address))
    print(f"{runs} CSP desk runs in this process:       {here:6.2f} s")
    print(f"{runs} CSP desk runs as Temporal workflows: {there:6.2f} s ({activities} activities)")
    print(f"Temporal overhead: {(there - here) / activities * 1000:.0f} ms per activity")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dates", type=int, default=5, help="screen dates (every 5th session)")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per model call")
    parser.add_argument("--concurrency", type=int, default=8, help="desk runs at a time")
    parser.add_argument("--runs", type=int, default=8, help="desk runs through Temporal")
    parser.add_argument("--symbols", type=int, default=0, help="the universe's first N (0: all)")
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    args = parser.parse_args()
    if args.quick:  # explicit options still win
        parser.set_defaults(dates=1, latency=0.1, concurrency=2, runs=1, symbols=4)
        args = parser.parse_args()

    import ray

    start = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    print(f"local Ray cluster ({args.cpus} CPUs) started in {time.perf_counter() - start:.2f} s")
    cluster = RayCluster()  # joins the cluster started above
    try:
        with tempfile.TemporaryDirectory() as root:
            _screens(Path(root), args.dates, cluster, args.symbols)
        _sweeps(cluster)
    finally:
        ray.shutdown()
    with tempfile.TemporaryDirectory() as root:
        _slow_screens(Path(root), args.latency, args.concurrency, args.cpus, args.symbols)
        _temporal_overhead(Path(root), args.runs)


if __name__ == "__main__":
    main()
