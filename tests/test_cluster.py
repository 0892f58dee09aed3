"""Screens and sweeps on a local Ray cluster: the same tables as the local runs."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
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
from alphadesk.pipelines.evaluation import EvalSpec, evaluate, evaluate_anonymized
from alphadesk.pipelines.screen.models import ScreenRequest
from alphadesk.pipelines.screen.pipeline import rebalancing_dates, run_screens
from alphadesk.store import RunStore
from tests.support.requires import from_test_extra

pytestmark = pytest.mark.slow

ray = from_test_extra("ray")

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
        concurrency=2,
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
    # However many actors, no more desk runs were in flight at once than the concurrency.
    runs = RunStore(Settings(data_dir=tmp_path / "ray").store_path).recent(kind="csp", limit=50)
    assert len(runs) == len(ran) and _most_at_once(runs) <= 2


def _most_at_once(runs: list[Any]) -> int:
    """The most runs whose [created, finished] spans overlap at one instant."""
    edges = sorted(
        [(r.created_at, 1) for r in runs] + [(r.finished_at, -1) for r in runs],
        key=lambda edge: (edge[0], edge[1]),  # an end before a start at the same instant
    )
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def test_the_command_line_imports_ray_only_when_asked() -> None:
    probe = (
        "import sys; from typer.testing import CliRunner; from alphadesk.cli.app import app; "
        "done = CliRunner().invoke(app, ['screen', '--help']); "
        "assert done.exit_code == 0 and '--ray-address' in done.output, done.output; "
        "assert 'ray' not in sys.modules, 'ray imported without --ray'"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=300)  # a hang guard


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


def test_an_evaluation_on_ray_gives_the_table_of_a_local_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: RayCluster
) -> None:
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    spec = EvalSpec(
        desk="csp", symbols=["IBM", "AAPL"], start=date(2011, 2, 1), end=date(2011, 3, 31), every=20
    )
    here = asyncio.run(evaluate(Settings(data_dir=tmp_path), spec, out=tmp_path / "here"))
    assert len(here.decisions) == 6  # 2 symbols on 3 dates
    args = ["eval", "--desk", "csp", "-s", "IBM,AAPL", "--from", "2011-02-01", "--to"]
    args += ["2011-03-31", "--every", "20", "--out", str(tmp_path / "ray"), "--json", "--ray"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    there = json.loads(done.stdout)
    assert there["rows"] == json.loads(json.dumps(here.rows, default=str))
    assert there["manifest"]["model_calls"] == here.manifest["model_calls"] > 0
    # Every actor recorded its answers in the evaluation's one response cache: run again,
    # the evaluation on Ray replays them, decision for decision, without a live call.
    again = asyncio.run(
        evaluate(Settings(data_dir=tmp_path), spec, out=tmp_path / "ray", cluster=cluster)
    )
    assert again.manifest["cache_mode"] == "replay" and again.manifest["live_model_calls"] == 0
    assert again.rows == here.rows

    def decided(records: list[Any]) -> list[tuple[Any, ...]]:
        return [(r.symbol, r.as_of, r.decision, r.put, r.model_calls) for r in records]

    assert decided(again.decisions) == decided(here.decisions)


def test_an_anonymized_evaluation_on_ray_decides_the_same_in_the_disguise(
    tmp_path: Path, cluster: RayCluster
) -> None:
    spec = EvalSpec(symbols=["IBM", "AAPL"], start=date(2012, 5, 11), end=date(2012, 5, 31))
    settings = Settings(data_dir=tmp_path)
    result = asyncio.run(evaluate_anonymized(settings, spec, seed=5, cluster=cluster))

    original, disguised = result.original.decisions, result.disguised.decisions
    assert len(disguised) == 4 and "failed" not in {d.decision for d in disguised}
    assert [d.decision for d in disguised] == [d.decision for d in original]
    # The actors' desks were asked the disguised names; the records keep the real ones.
    store = RunStore(result.disguised.folder / "store" / "alphadesk.sqlite")
    asked = {store.get(d.run_id).request["symbol"] for d in disguised if d.run_id}
    assert asked == {result.disguise.names[s] for s in spec.symbols}
