"""Backtesting variants: the lab's window split into in-sample and out-of-sample periods,
and each variant's code run through the sandbox, nowhere else.

The in-sample run sees only bars up to the end of the in-sample period; the out-of-sample
run's metrics start at the first out-of-sample bar (earlier bars only warm indicators
up). A missing sandbox is a typed ``sandbox_unavailable`` outcome: generated code never
runs in-process.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

import pandas as pd

from alphadesk.agents.algo.models import StrategyVariant
from alphadesk.analytics.fuzzy import Criterion, score_metrics
from alphadesk.analytics.performance import returns_from_equity
from alphadesk.backtest.models import BacktestConfig
from alphadesk.pipelines.algo.models import PeriodScore, RunStatus, VariantRecord

__all__ = [
    "Backtester",
    "PeriodRun",
    "Split",
    "backtest_variant",
    "backtest_variants",
    "code_hash",
    "split_window",
]

_MIN_BARS = 60  # fewer bars in a period cannot say anything about a strategy


@dataclass(frozen=True)
class Split:
    """The bars of the lab and where its periods start and end (inclusive dates)."""

    frame: pd.DataFrame  # from the warm-up to the last out-of-sample bar
    in_sample: tuple[date, date]
    out_of_sample: tuple[date, date]

    def period(self, which: str) -> tuple[pd.DataFrame, date]:
        """The bars a run of ``which`` may see, and its first traded day."""
        first, last = self.in_sample if which == "in_sample" else self.out_of_sample
        end = pd.Timestamp(last).tz_localize(self.frame.index.tz) + pd.Timedelta(days=1)
        return self.frame[self.frame.index < end], first


def split_window(frame: pd.DataFrame, start: date | None, out_of_sample: float) -> Split:
    """Split the bars from ``start`` (default: the first) into the two periods; bars
    before ``start`` stay for warm-up.

    Raises:
        ValueError: A period would hold fewer than 60 bars; says how to widen it.
    """
    days = frame.index.date
    window = days[days >= start] if start is not None else days
    held = round(len(window) * out_of_sample)
    if len(window) - held < _MIN_BARS or held < _MIN_BARS:
        raise ValueError(
            f"{len(window)} bars from {window[0] if len(window) else start}: each period needs "
            f"{_MIN_BARS} or more; start earlier (--from) or end later (--to)"
        )
    cut = len(window) - held
    return Split(frame, (window[0], window[cut - 1]), (window[cut], window[-1]))


@dataclass(frozen=True)
class PeriodRun:
    """How one sandboxed run ended, with the metrics when it completed."""

    status: RunStatus
    error: str | None = None
    metrics: dict[str, float | int | None] = field(default_factory=dict)
    returns: list[float] = field(default_factory=list)  # daily, over the traded period


Backtester = Callable[[str, pd.DataFrame, date, BacktestConfig], Awaitable[PeriodRun]]


async def backtest_variant(
    code: str, frame: pd.DataFrame, trade_from: date, config: BacktestConfig
) -> PeriodRun:
    """Run ``code`` on ``frame`` from ``trade_from`` in the sandbox: the one place the lab
    runs generated code."""
    try:
        from alphadesk.backtest.sandbox import run_in_sandbox
    except ImportError as exc:  # the sandbox is not part of this installation
        return PeriodRun("sandbox_unavailable", f"no strategy sandbox here ({exc})")
    outcome = await asyncio.to_thread(run_in_sandbox, code, frame, config, trade_from=trade_from)
    if outcome.result is None:
        return PeriodRun(outcome.status, outcome.reason or outcome.status)
    figures = asdict(outcome.result.metrics())
    returns = returns_from_equity(outcome.result.equity) if len(outcome.result.equity) > 1 else []
    return PeriodRun(
        "completed",
        None,
        {k: v for k, v in figures.items() if k not in ("start", "end")},
        [float(r) for r in returns],
    )


def code_hash(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()[:16]


async def _period(
    backtester: Backtester,
    variant: StrategyVariant,
    split: Split,
    which: str,
    config: BacktestConfig,
    criteria: Sequence[Criterion],
) -> PeriodScore:
    frame, first = split.period(which)
    bounds = split.in_sample if which == "in_sample" else split.out_of_sample
    run = await backtester(variant.code, frame, first, config)
    scored = score_metrics(run.metrics, criteria) if run.status == "completed" else None
    return PeriodScore(
        period=which,
        start=bounds[0],
        end=bounds[1],
        status=run.status,
        error=run.error,
        metrics=run.metrics,
        trades=int(run.metrics.get("trades") or 0),
        score=round(scored.overall, 4) if scored else 0.0,
        passed=bool(scored and scored.passed),
        unmet=[str(s.criterion) for s in scored.unmet] if scored else [],
        returns=run.returns,
    )


async def _one(
    backtester: Backtester,
    variant: StrategyVariant,
    split: Split,
    config: BacktestConfig,
    criteria: Sequence[Criterion],
    iteration: int,
) -> VariantRecord:
    inside = await _period(backtester, variant, split, "in_sample", config, criteria)
    outside = None
    if inside.status == "completed":  # code that failed in-sample fails the same outside
        outside = await _period(backtester, variant, split, "out_of_sample", config, criteria)
    return VariantRecord(
        iteration=iteration,
        variant_id=variant.variant_id,
        name=variant.name,
        template=variant.template,
        approach=variant.approach,
        parameters=variant.parameters,
        code_hash=code_hash(variant.code),
        code=variant.code,
        in_sample=inside,
        out_of_sample=outside,
        score=min(inside.score, outside.score) if outside else 0.0,
        passed=inside.passed and bool(outside and outside.passed),
    )


async def backtest_variants(
    variants: Sequence[StrategyVariant],
    split: Split,
    config: BacktestConfig,
    criteria: Sequence[Criterion],
    *,
    iteration: int,
    backtester: Backtester = backtest_variant,
    on_done: Callable[[VariantRecord], Any] | None = None,
    concurrency: int = 4,
) -> list[VariantRecord]:
    """Backtest every variant concurrently (the map-reduce step), at most ``concurrency``
    sandboxes at once (each is a process of its own), in the variants' order."""
    slots = asyncio.Semaphore(concurrency)

    async def run(variant: StrategyVariant) -> VariantRecord:
        async with slots:
            record = await _one(backtester, variant, split, config, criteria, iteration)
        if on_done is not None:
            on_done(record)
        return record

    return list(await asyncio.gather(*(run(v) for v in variants)))
