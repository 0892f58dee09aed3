"""The holdout: the strategy the lab chose, run once on the sealed final period.

This node runs after the loop has ended and is the only one given the whole market: the
loop's nodes hold a view sealed at the end of the validation period. Its figures go into
the result, the report, the chart and one last line of ``experiments.jsonl``, as they came
out, pass or fail; nothing of them reaches the memory of lessons or the loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from alphadesk.analytics.fuzzy import parse_goal
from alphadesk.backtest.frame import frame_from_bars
from alphadesk.backtest.models import BacktestConfig
from alphadesk.data.base import MarketData
from alphadesk.pipelines.algo.backtests import Backtester, Periods, score_period
from alphadesk.pipelines.algo.models import AlgoRequest, HoldoutRecord, VariantRecord
from alphadesk.pipelines.algo.nodes import LabState
from alphadesk.pipelines.algo.tracker import ExperimentTracker
from alphadesk.pipelines.base import PipelineRun
from alphadesk.pipelines.events import StepFinished, StepStarted

__all__ = ["HoldoutNode", "choose"]


def choose(records: list[VariantRecord], named: str | None) -> VariantRecord | None:
    """The lab's choice: the variant the last gate named if it passed, else the best."""
    chosen = next((r for r in records if r.variant_id == named and r.passed), None)
    return chosen or max(records, key=lambda r: (r.passed, r.score), default=None)


@dataclass(frozen=True)
class HoldoutNode:
    """Runs the chosen variant on the holdout; ``market`` is the whole, unsealed one."""

    market: MarketData
    request: AlgoRequest
    periods: Periods
    backtester: Backtester
    config: BacktestConfig
    tracker: ExperimentTracker
    run: PipelineRun

    async def __call__(self, state: LabState) -> LabState:
        records, iterations = state.get("records", []), state.get("iterations", [])
        named = iterations[-1].gate.best_variant if iterations else None
        chosen = choose(records, named)
        return {"holdout": await self._holdout(chosen)}

    async def _holdout(self, chosen: VariantRecord | None) -> HoldoutRecord:
        start, end = self.periods.holdout
        if chosen is None or chosen.error is not None:
            why = (
                "no variant was backtested"
                if chosen is None
                else f"its code failed: {chosen.error}"
            )
            return HoldoutRecord(
                variant_id=chosen.variant_id if chosen else None, start=start, end=end, reason=why
            )
        self._announce(StepStarted, model="sandbox")
        frame, _notes = frame_from_bars(
            self.market.daily_bars(self.request.symbol, self.request.as_of)
        )
        run = await score_period(
            self.backtester,
            chosen.code,
            frame,
            self.periods.holdout,
            "holdout",
            self.config,
            parse_goal(self.request.goal),
        )
        shown = f"score {run.score:.2f}, {'passed' if run.passed else 'failed the goal'}"
        self._announce(StepFinished, status="completed", reason=run.error or shown)
        record = HoldoutRecord(
            variant_id=chosen.variant_id,
            start=start,
            end=end,
            run=run.model_copy(update={"returns": []}),
        )
        self.tracker.append_holdout(chosen, record)
        return record

    def _announce(self, kind: type[Any], **fields: Any) -> None:
        run = self.run
        run.emit(kind(run_id=run.run_id, agent="holdout", symbol=self.request.symbol, **fields))
