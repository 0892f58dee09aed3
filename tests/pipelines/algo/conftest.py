"""Helpers for the strategy lab's tests: a request, and a backtester double that reports
given metrics for tests of the gate's logic (``settings``, ``market`` and ``sandbox`` are
shared fixtures, in ``tests/support/fixtures.py``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import pandas as pd

from alphadesk.backtest.checks import check_strategy_code
from alphadesk.backtest.models import BacktestConfig
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


def scripted_backtests(metrics: Metrics, out_of_sample_from: date) -> Callable[..., Any]:
    """A backtester double: the static check is real; the figures come from
    ``metrics(code, period)`` where period is ``in_sample`` or ``out_of_sample``."""

    async def run(code: str, frame: pd.DataFrame, first: date, config: BacktestConfig) -> PeriodRun:
        check = check_strategy_code(code)
        if not check.ok:
            return PeriodRun("rejected", check.summary())
        period = "out_of_sample" if first >= out_of_sample_from else "in_sample"
        return PeriodRun("completed", None, metrics(code, period) | {"trades": 12})

    return run
