"""Screens and sweeps on a local Ray cluster: the same tables as the local runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from alphadesk.backtest import BacktestConfig, Costs, frame_from_bars, sweep
from alphadesk.cli.app import app
from alphadesk.cluster import RayCluster
from alphadesk.config import Settings
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.pipelines.csp.screening import ScreenRequest, rebalancing_dates, run_screens

ray = pytest.importorskip("ray")

SYMBOLS = ["AAPL", "AMZN", "IBM", "GOOG", "^GSPC"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayCluster]:
    """One small local cluster for the whole module (starting one takes seconds)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield RayCluster()  # already running here: joined, not started again
    finally:
        ray.shutdown()


def _table(path: Path) -> pd.DataFrame:
    return pd.read_csv(path).drop(columns="run_id")


async def test_a_screen_on_ray_gives_the_table_of_a_screen_in_process(
    tmp_path: Path, cluster: RayCluster
) -> None:
    request = ScreenRequest(
        symbols=SYMBOLS, dates=rebalancing_dates(date(2012, 6, 1), date(2012, 6, 28), 10)
    )
    alone = await run_screens(Settings(data_dir=tmp_path / "one"), request, workers=1)
    seen: list[tuple[str, str]] = []
    spread = await run_screens(
        Settings(data_dir=tmp_path / "ray"),
        request,
        concurrency=3,
        cluster=cluster,
        on_outcome=lambda o: seen.append((o[1].symbol, o[0].date().isoformat())),
    )
    assert len(request.dates) == 2 and spread.outcomes == 10
    assert sorted(seen) == sorted((s, d.date().isoformat()) for d in request.dates for s in SYMBOLS)
    pd.testing.assert_frame_equal(_table(alone.table[0]), _table(spread.table[0]))
    decisions = set(_table(spread.table[0]).decision)
    assert "filtered" in decisions and decisions & {"select", "reject"}
    # The desk runs the actors started were recorded in the screen's store, as locally.
    ran = pd.read_csv(spread.table[0]).run_id.dropna()
    assert len(ran) == sum(len(s.results) for s in spread.screens) > 0
    assert all((tmp_path / "ray" / "runs" / run_id).is_dir() for run_id in ran)


def test_the_screen_command_runs_on_ray(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: RayCluster
) -> None:
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    args = ["screen", "AAPL", "IBM", "GOOG", "--as-of", "2012-06-29", "--json", "--ray"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    (day,) = json.loads(done.output)["screens"]
    assert {c["symbol"] for c in day["checks"]} == {"AAPL", "IBM", "GOOG"}
    assert {r["symbol"] for r in day["results"]} == {"AAPL", "IBM"}  # GOOG: a downtrend
    assert (tmp_path / "runs" / day["results"][0]["run_id"]).is_dir()


def test_a_sweep_on_ray_gives_the_rows_of_a_local_sweep(cluster: RayCluster) -> None:
    end = datetime(2018, 12, 31, 23, 59, tzinfo=UTC)
    frame, _ = frame_from_bars(BundledProvider().daily_bars("NVDA", end))
    grid: dict[str, list[Any]] = {"fast": [5, 10, 20, 50], "slow": [20, 50, 100, 200]}
    config = BacktestConfig(costs=Costs(0.001, slippage=0.0005))
    args: dict[str, Any] = {"config": config, "trade_from": date(2012, 1, 1)}
    here = sweep("sma_cross", frame, grid, **args)
    there = sweep("sma_cross", frame, grid, cluster=cluster, **args)
    assert len(here) == 13  # 16 combinations, 3 refused (fast not shorter than slow)
    pd.testing.assert_frame_equal(here, there)
