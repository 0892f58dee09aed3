"""Run a built-in strategy on bars with either engine, and sweep its parameters."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import date, datetime
from typing import Any, Literal

import pandas as pd

from alphadesk.cluster import RayCluster, cluster_cpus

from .fast import simulate
from .frame import BacktestDataError, start_bar, validate_frame
from .models import BacktestConfig, BacktestResult
from .strategies import get_strategy

__all__ = ["ENGINES", "run_strategy", "sweep"]

ENGINES = ("fast", "backtrader")
Engine = Literal["fast", "backtrader"]


def _runner(engine: str) -> Any:
    if engine == "fast":
        return simulate  # the frame is validated once, below
    if engine == "backtrader":
        from .reference import run_backtrader  # Backtrader loads only when asked for

        return run_backtrader
    raise ValueError(f"unknown engine {engine!r}; use one of: {', '.join(ENGINES)}")


def _trade_window(
    frame: pd.DataFrame, target: pd.Series, start: date | datetime | None
) -> tuple[pd.DataFrame, pd.Series]:
    cut = start_bar(frame, start)
    return frame.iloc[cut:], target.iloc[cut:]


def run_strategy(
    name: str,
    frame: pd.DataFrame,
    params: Mapping[str, Any] | None = None,
    config: BacktestConfig | None = None,
    *,
    engine: Engine = "fast",
    trade_from: date | datetime | None = None,
    symbol: str | None = None,
    notes: Sequence[str] = (),
) -> BacktestResult:
    """Backtest the built-in strategy ``name`` on ``frame``.

    Args:
        name: A key of :data:`alphadesk.backtest.strategies.STRATEGIES`.
        frame: OHLCV bars (tz-aware index), e.g. from
            :func:`alphadesk.backtest.frame.frame_from_bars`.
        params: Parameters to override (the rest keep their usual values).
        config: Cash, costs, sizing, long/short.
        engine: ``"fast"`` (vectorised) or ``"backtrader"`` (the reference).
        trade_from: First bar to trade; earlier bars only warm the indicators up, so
            the signal does not depend on where the window starts.
        symbol: Recorded in the result.
        notes: Recorded in the result.

    Returns:
        The result.

    Raises:
        UnknownStrategy: ``name`` is not built in.
        ValueError: Bad parameters, an unknown engine, bars that cannot be backtested
            (:class:`~alphadesk.backtest.frame.BacktestDataError`) or too few for the
            indicators (:class:`~alphadesk.analytics.errors.InsufficientData`).
    """
    spec = get_strategy(name)
    run = _runner(engine)
    chosen = spec.params(params)
    config = config or BacktestConfig()
    frame = validate_frame(frame)
    target = spec.signal(frame, **chosen)
    frame, target = _trade_window(frame, target, trade_from)
    return run(
        frame,
        target.to_numpy(),
        config,
        symbol=symbol,
        strategy={"name": spec.name, "params": chosen},
        notes=list(notes),
    )


def sweep(
    name: str,
    frame: pd.DataFrame,
    grid: Mapping[str, Sequence[Any]] | None = None,
    config: BacktestConfig | None = None,
    *,
    engine: Engine = "fast",
    trade_from: date | datetime | None = None,
    cluster: RayCluster | None = None,
) -> pd.DataFrame:
    """Backtest every combination of ``grid`` (default: the strategy's own grid).

    Combinations the strategy refuses (e.g. a fast SMA not shorter than the slow one)
    are skipped. With ``cluster`` the combinations go to Ray tasks in chunks (the bars are
    shipped once); the rows come back in the same order as here.

    Returns:
        One row per run: the parameters, then every metric of
        :class:`~alphadesk.analytics.performance.BacktestMetrics` except the dates.
    """
    spec = get_strategy(name)
    grid = dict(grid if grid is not None else spec.grid)
    keys = list(grid)
    combos = [
        dict(zip(keys, values, strict=True))
        for values in itertools.product(*(grid[k] for k in keys))
    ]
    if cluster is None:
        rows = _sweep_chunk(name, frame, combos, config, engine, trade_from)
    else:
        rows = _sweep_on_ray(cluster, name, frame, combos, config, engine, trade_from)
    return pd.DataFrame(rows)


def _sweep_chunk(
    name: str,
    frame: pd.DataFrame,
    combos: Sequence[dict[str, Any]],
    config: BacktestConfig | None,
    engine: Engine,
    trade_from: date | datetime | None,
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for params in combos:
        try:
            result = run_strategy(name, frame, params, config, engine=engine, trade_from=trade_from)
        except ValueError as exc:
            if isinstance(exc, BacktestDataError):
                raise
            continue
        figures = asdict(result.metrics())
        for key in ("start", "end"):
            figures.pop(key)
        rows.append({**params, **figures})
    return rows


def _sweep_on_ray(
    cluster: RayCluster,
    name: str,
    frame: pd.DataFrame,
    combos: Sequence[dict[str, Any]],
    config: BacktestConfig | None,
    engine: Engine,
    trade_from: date | datetime | None,
) -> list[dict[str, Any]]:
    ray = cluster.connect()
    # A few chunks per CPU: big enough to pay for a task, small enough to balance the load.
    size = max(1, math.ceil(len(combos) / (4 * cluster_cpus(ray))))
    chunks = [list(combos[i : i + size]) for i in range(0, len(combos), size)]
    task = ray.remote(num_cpus=1)(_sweep_chunk)
    bars = ray.put(frame)
    refs = [task.remote(name, bars, c, config, engine, trade_from) for c in chunks]
    return [row for rows in ray.get(refs) for row in rows]
