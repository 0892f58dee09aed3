"""Helpers for the strategy lab's tests: a request, and a backtester double that reports
given metrics for tests of the gate's logic (``settings``, ``market`` and ``sandbox`` are
shared fixtures, in ``tests/support/fixtures.py``)."""

from __future__ import annotations

import hashlib
import sys
import types
from collections.abc import Callable
from dataclasses import asdict
from datetime import date
from typing import Any

import backtrader as bt
import pandas as pd

from alphadesk.analytics.performance import returns_from_equity
from alphadesk.backtest.checks import check_strategy_code
from alphadesk.backtest.frame import validate_frame
from alphadesk.backtest.models import BacktestConfig
from alphadesk.backtest.native import result_from_report, run_strategy_class
from alphadesk.data.calendar import session_close
from alphadesk.pipelines.algo.backtests import PeriodRun
from alphadesk.pipelines.algo.models import AlgoRequest

GOAL = "Sharpe above 1.2 with drawdown under 15%"


def request(**fields: Any) -> AlgoRequest:
    values: dict[str, Any] = {
        "symbol": "AAPL",
        "as_of": session_close(date(2012, 12, 31)),
        "goal": GOAL,
        "variants": 3,
        "iterations": 3,
        "memory": False,
    } | fields
    return AlgoRequest.model_validate(values)


Metrics = Callable[[str, str], dict[str, float]]


Returns = Callable[[str, str, int], list[float]]


def scripted_backtests(
    metrics: Metrics, out_of_sample_from: date, returns: Returns | None = None
) -> Callable[..., Any]:
    """A backtester double: the static check is real; the figures come from
    ``metrics(code, period)`` where period is ``in_sample`` or ``out_of_sample`` (the
    holdout counts as out of sample), the daily returns from ``returns(code, period, bars
    traded)`` (none without it)."""

    async def run(code: str, frame: pd.DataFrame, first: date, config: BacktestConfig) -> PeriodRun:
        check = check_strategy_code(code)
        if not check.ok:
            return PeriodRun("rejected", check.summary())
        period = "out_of_sample" if first >= out_of_sample_from else "in_sample"
        traded = int((frame.index.date >= first).sum())
        series = returns(code, period, traded) if returns is not None else []
        return PeriodRun("completed", None, metrics(code, period) | {"trades": 12}, series)

    return run


async def in_process(
    code: str, frame: pd.DataFrame, first: date, config: BacktestConfig
) -> PeriodRun:
    """The sandbox's engine without its process, for tests that run the lab many times on
    the library's own templates (trusted code): the static check, then the strategy class
    run by the same native runner on the same bars, and the same figures."""
    check = check_strategy_code(code)
    if not check.ok:
        return PeriodRun("rejected", check.summary())
    module = types.ModuleType(f"lab_strategy_{hashlib.sha256(code.encode()).hexdigest()[:12]}")
    sys.modules[module.__name__] = module  # backtrader looks its strategies' modules up
    exec(compile(code, "strategy.py", "exec"), module.__dict__)
    (cls,) = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, bt.Strategy) and v.__module__ == module.__name__
    ]
    frame = validate_frame(frame)
    start = int(frame.index.searchsorted(pd.Timestamp(first).tz_localize(frame.index.tz)))
    report = run_strategy_class(cls, frame, config, start=start)
    result = result_from_report(report, frame, config, start=start)
    figures = asdict(result.metrics())
    return PeriodRun(
        "completed",
        None,
        {k: v for k, v in figures.items() if k not in ("start", "end")},
        [float(r) for r in returns_from_equity(result.equity)],
    )
