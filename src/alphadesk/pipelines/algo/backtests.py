"""Backtesting variants: the lab's window split into search (in-sample), validation
(out-of-sample) and holdout periods, and each variant's code run through the sandbox,
nowhere else.

The in-sample run sees only bars up to the end of the search period; a later period's run
has its metrics start at the period's first bar (earlier bars only warm indicators up). A
missing sandbox is a typed ``sandbox_unavailable`` outcome: generated code never runs
in-process.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from functools import partial
from typing import Any, cast, get_args

import pandas as pd

from alphadesk.agents.algo.models import StrategyVariant
from alphadesk.analytics.fuzzy import Criterion, score_metrics
from alphadesk.analytics.overfitting import DEFAULT_BLOCKS
from alphadesk.analytics.performance import returns_from_equity
from alphadesk.backtest.models import BacktestConfig
from alphadesk.pipelines.algo.models import PeriodScore, RunStatus, VariantRecord

__all__ = [
    "Backtester",
    "Period",
    "PeriodRun",
    "Periods",
    "Split",
    "WindowTooShort",
    "backtest_variant",
    "backtest_variants",
    "code_hash",
    "minimum_window",
    "plan_periods",
    "score_period",
]

_MIN_BARS = 60  # fewer bars in a period cannot say anything about a strategy
# PBO's CSCV cuts the search and validation returns into 16 blocks; with 10 returns a block
# each half of a split holds 80, enough for the Sharpe ratios it ranks.
_CSCV_RETURNS_PER_BLOCK = 10
_MIN_SEARCHED = DEFAULT_BLOCKS * _CSCV_RETURNS_PER_BLOCK

Period = tuple[date, date]


class WindowTooShort(ValueError):
    """The lab's window cannot hold its three periods, or CSCV's blocks; says the minimum."""


@dataclass(frozen=True)
class Periods:
    """The lab's three periods (inclusive dates): it searches on the first, its gate
    validates on the second, and the third, at the end of the window, stays sealed until the
    lab has chosen its strategy."""

    search: Period
    validation: Period
    holdout: Period


@dataclass(frozen=True)
class Split:
    """Bars and two periods to backtest on (inclusive dates).

    The lab's loop gets one whose frame ends with the validation period: it holds no bar
    of the holdout.
    """

    frame: pd.DataFrame  # from the warm-up to the last bar of ``out_of_sample``
    in_sample: Period
    out_of_sample: Period

    def period(self, which: str) -> tuple[pd.DataFrame, date]:
        """The bars a run of ``which`` may see, and its first traded day."""
        first, last = self.in_sample if which == "in_sample" else self.out_of_sample
        end = pd.Timestamp(last).tz_localize(self.frame.index.tz) + pd.Timedelta(days=1)
        return self.frame[self.frame.index < end], first


def _counts(bars: int, validation: float, holdout: float) -> tuple[int, int, int]:
    held, checked = round(bars * holdout), round(bars * validation)
    return bars - held - checked, checked, held


def _fits(bars: int, validation: float, holdout: float) -> bool:
    search, checked, held = _counts(bars, validation, holdout)
    return min(search, checked, held) >= _MIN_BARS and search + checked >= _MIN_SEARCHED


def minimum_window(validation: float, holdout: float) -> int:
    """The fewest bars a window needs for three periods of 60 bars and CSCV's blocks."""
    bars = 3 * _MIN_BARS
    while not _fits(bars, validation, holdout):
        bars += 1
    return bars


def plan_periods(
    days: Sequence[date], start: date | None, validation: float, holdout: float
) -> Periods:
    """Split the trading ``days`` from ``start`` (default: the first) into search,
    validation (a ``validation`` share) and holdout (a ``holdout`` share, at the end).

    Only the dates decide: nothing about the bars' prices shapes the periods.

    Raises:
        WindowTooShort: A period under 60 bars, or search and validation together under
            160 (CSCV's 16 blocks of 10 returns); names the minimum window and how to widen it.
    """
    if validation + holdout >= 0.8:
        raise WindowTooShort(
            f"validation {validation:.0%} and holdout {holdout:.0%} leave under 20% of the "
            "window to search; lower them"
        )
    window = [d for d in days if start is None or d >= start]
    if not _fits(len(window), validation, holdout):
        search, checked, held = _counts(len(window), validation, holdout)
        first = window[0] if window else start
        raise WindowTooShort(
            f"{len(window)} bars from {first} make a search period of {search}, validation "
            f"{checked} and holdout {held} bars; each needs {_MIN_BARS} or more, and search "
            f"with validation {_MIN_SEARCHED} or more (CSCV's {DEFAULT_BLOCKS} blocks of "
            f"{_CSCV_RETURNS_PER_BLOCK} returns): at validation {validation:.0%} and holdout "
            f"{holdout:.0%} the window needs {minimum_window(validation, holdout)} bars or "
            "more; start earlier (--from), end later (--to) or change the shares "
            "(--validation, --holdout)"
        )
    search, checked, _ = _counts(len(window), validation, holdout)
    cut, seal = search, search + checked
    return Periods(
        (window[0], window[cut - 1]), (window[cut], window[seal - 1]), (window[seal], window[-1])
    )


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
    """Run ``code`` on ``frame`` from ``trade_from`` through the one backtest function, in
    the sandbox: the one place the lab runs generated code. Its figures are recorded in the
    lab's own run (each variant's periods). Cancelling the lab kills the sandboxed run at once."""
    try:
        from alphadesk.backtest.service import BacktestError, backtest_bars
    except ImportError as exc:  # the sandbox is not part of this installation
        return PeriodRun("sandbox_unavailable", f"no strategy sandbox here ({exc})")
    stop = threading.Event()
    try:
        result = await asyncio.to_thread(
            partial(backtest_bars, frame, config, code=code, trade_from=trade_from, cancel=stop)
        )
    except BacktestError as exc:
        if exc.status not in get_args(RunStatus):
            raise  # bars the lab should never have cut: a bug, not a variant's outcome
        return PeriodRun(cast(RunStatus, exc.status), exc.reason)
    except BaseException:  # the thread cannot be cancelled: the sandbox it waits on is killed
        stop.set()
        raise
    figures = asdict(result.metrics())
    returns = returns_from_equity(result.equity) if len(result.equity) > 1 else []
    return PeriodRun(
        "completed",
        None,
        {k: v for k, v in figures.items() if k not in ("start", "end")},
        [float(r) for r in returns],
    )


def code_hash(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()[:16]


async def score_period(
    backtester: Backtester,
    code: str,
    frame: pd.DataFrame,
    bounds: Period,
    which: str,
    config: BacktestConfig,
    criteria: Sequence[Criterion],
) -> PeriodScore:
    """Run ``code`` on ``frame`` trading from ``bounds[0]`` and score it against the goal."""
    run = await backtester(code, frame, bounds[0], config)
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


async def _period(
    backtester: Backtester,
    variant: StrategyVariant,
    split: Split,
    which: str,
    config: BacktestConfig,
    criteria: Sequence[Criterion],
) -> PeriodScore:
    frame, _first = split.period(which)
    bounds = split.in_sample if which == "in_sample" else split.out_of_sample
    return await score_period(backtester, variant.code, frame, bounds, which, config, criteria)


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
