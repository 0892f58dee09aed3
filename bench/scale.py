"""Fan-out benchmarks: local processes against a local Ray cluster.

    python bench/scale.py [--dates 5] [--cpus 2]

Prints, in one run:

- the time to start a local Ray cluster (paid once per process, not per screen);
- a screen of the whole bundled universe on ``--dates`` dates (every 5th session from
  June 2012), in worker processes and on the Ray cluster: wall seconds, symbol-dates per
  second, and whether the two tables agree (they should, run ids apart);
- a sweep of 120 SMA-crossover parameter sets over ten years of NVDA, in this process and
  on Ray with cold and with warm workers: wall seconds, and whether the rows agree.

On one machine Ray adds actor start-up and serialisation to what processes already do, so
expect it to be no faster here; it pays on a cluster with more cores than this machine.
Figures only: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from alphadesk.backtest import BacktestConfig, Costs, frame_from_bars, sweep
from alphadesk.cluster import RayCluster
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.pipelines.csp.screening import (
    ScreenHistory,
    ScreenRequest,
    rebalancing_dates,
    run_screens,
)


def _table(history: ScreenHistory) -> pd.DataFrame:
    return pd.read_csv(history.table[0]).drop(columns="run_id")


def _screens(root: Path, dates: int, cluster: RayCluster) -> None:
    universe = build_provider(Settings(data_dir=root / "probe")).universe()
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dates", type=int, default=5, help="screen dates (every 5th session)")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    args = parser.parse_args()

    import ray

    start = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    print(f"local Ray cluster ({args.cpus} CPUs) started in {time.perf_counter() - start:.2f} s")
    cluster = RayCluster()  # joins the cluster started above
    try:
        with tempfile.TemporaryDirectory() as root:
            _screens(Path(root), args.dates, cluster)
        _sweeps(cluster)
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
