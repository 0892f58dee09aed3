"""Fixtures for the strategy lab: settings in a temporary folder, the bundled data, the
real sandbox (skipped with the reason when this machine cannot build one), and a
backtester double that reports given metrics for tests of the gate's logic."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from alphadesk.backtest.checks import check_strategy_code
from alphadesk.backtest.models import BacktestConfig
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import session_close
from alphadesk.pipelines.algo.backtests import PeriodRun
from alphadesk.pipelines.algo.models import AlgoRequest

GOAL = "Sharpe above 1.2 with drawdown under 15%"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "alphadesk")


@pytest.fixture
def market(settings: Settings) -> MarketData:
    return build_provider(settings)


@pytest.fixture
def sandbox() -> None:
    """The real sandbox, or a skip saying why it cannot run here."""
    from alphadesk.backtest.sandbox import SandboxUnavailable, find_sandbox

    try:
        find_sandbox()
    except SandboxUnavailable as exc:
        pytest.skip(f"no strategy sandbox on this machine: {exc}")


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
