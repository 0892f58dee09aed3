"""The strategy lab's request, its records of variants and iterations, and its result."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from alphadesk.agents.algo.models import (
    FactSheet,
    FailureAnalysis,
    GateDecision,
    ResearchBrief,
    TrajectoryReading,
)
from alphadesk.analytics.fuzzy import parse_goal
from alphadesk.pipelines.models import PipelineRequest, PipelineResult

__all__ = [
    "AlgoRequest",
    "AlgoResult",
    "HoldoutRecord",
    "IterationRecord",
    "LabDecision",
    "PeriodScore",
    "RunStatus",
    "TrialBar",
    "TrialStats",
    "VariantRecord",
]

RunStatus = Literal["completed", "rejected", "killed", "crashed", "sandbox_unavailable"]
LabDecision = Literal["SUCCESS", "ABANDON", "BUDGET_EXHAUSTED", "failed"]


class AlgoRequest(PipelineRequest):
    """Develop a strategy for one symbol that meets ``goal`` on bars up to ``as_of``."""

    goal: str = Field(description='e.g. "Sharpe above 1 with drawdown under 20%"')
    variants: int = Field(3, ge=1, le=12, description="Strategy variants per iteration.")
    iterations: int = Field(3, ge=1, le=20, description="Strategy iterations at most.")
    start: date | None = Field(None, description="First bar of the lab's window.")
    validation: float | None = Field(
        None,
        gt=0,
        lt=0.5,
        description="Share of the window the gate validates on, before the holdout "
        "(default: the settings').",
    )
    holdout: float | None = Field(
        None,
        gt=0,
        lt=0.5,
        description="Share of the window at its end sealed until the lab has chosen "
        "(default: the settings').",
    )
    min_deflated_sharpe: float | None = Field(
        None, gt=0, lt=1, description="SUCCESS needs a deflated Sharpe probability above this."
    )
    max_pbo: float | None = Field(None, gt=0, lt=1, description="SUCCESS needs a PBO below this.")
    max_cost_usd: float | None = Field(None, gt=0, description="Model spend at most.")
    research_concurrency: int = Field(5, ge=1, le=15, description="Subagents at once.")
    memory: bool = Field(True, description="Recall and store lessons when memory is on.")

    @field_validator("goal")
    @classmethod
    def _parses(cls, value: str) -> str:
        parse_goal(value)  # InvalidInput (a ValueError) says how to write a goal
        return value


class PeriodScore(BaseModel):
    """A variant's backtest on one period, scored against the goal."""

    period: Literal["in_sample", "out_of_sample", "holdout"]
    start: date
    end: date
    status: RunStatus
    error: str | None = None
    metrics: dict[str, float | int | None] = Field(default_factory=dict)
    trades: int = 0
    score: float = 0.0
    passed: bool = False
    unmet: list[str] = Field(default_factory=list)
    returns: list[float] = Field(
        default_factory=list,
        description="Daily returns over the period, for the trial figures; the lab's state "
        "keeps them, its result does not.",
    )


class VariantRecord(BaseModel):
    """One variant of one iteration: what it was, how it ran, what the gate decided."""

    run_id: str | None = None
    iteration: int
    variant_id: str
    name: str
    template: str | None
    approach: str
    parameters: dict[str, Any]
    code_hash: str
    code: str
    in_sample: PeriodScore
    out_of_sample: PeriodScore | None = None
    score: float = Field(0.0, description="min(in-sample, out-of-sample) goal score.")
    passed: bool = False
    decision: str | None = None

    @property
    def error(self) -> str | None:
        for period in (self.in_sample, self.out_of_sample):
            if period is not None and period.error:
                return f"{period.period}: {period.status}: {period.error}"
        return None

    def without_returns(self) -> VariantRecord:
        """The record without its daily return series (the result keeps the figures)."""
        periods = {
            name: period.model_copy(update={"returns": []})
            for name, period in (
                ("in_sample", self.in_sample),
                ("out_of_sample", self.out_of_sample),
            )
            if period is not None
        }
        return self.model_copy(update=periods)

    def brief(self) -> dict[str, Any]:
        """What the agents read of it."""
        return {
            "variant_id": self.variant_id,
            "name": self.name,
            "template": self.template,
            "approach": self.approach,
            "parameters": self.parameters,
            "error": self.error,
            "score": self.score,
            "passed": self.passed,
            "in_sample": _period_view(self.in_sample),
            "out_of_sample": _period_view(self.out_of_sample),
        }


def _period_view(period: PeriodScore | None) -> dict[str, Any] | None:
    if period is None:
        return None
    keep = ("sharpe", "max_drawdown", "annualized_return", "win_rate", "trades")
    return {
        "score": period.score,
        "passed": period.passed,
        "unmet": period.unmet,
        "trades": period.trades,
        "metrics": {k: period.metrics.get(k) for k in keep},
    }


class TrialStats(BaseModel):
    """The selection-bias figures after an iteration, over every trial so far."""

    trials: int = Field(description="Variants tried so far, failed ones included.")
    best_variant: str | None = None
    deflated_sharpe: float | None = Field(
        None, description="P(the best variant's true out-of-sample Sharpe beats luck's)."
    )
    pbo: float | None = Field(None, description="Probability of backtest overfitting (CSCV).")
    pbo_trials: int = Field(0, description="Trials with full-window returns in the PBO.")
    notes: list[str] = Field(default_factory=list)


class TrialBar(BaseModel):
    """What the gate asks of the trial figures besides the goal."""

    min_deflated_sharpe: float = Field(description="The deflated Sharpe must be above this.")
    max_pbo: float = Field(description="PBO must be below this.")


class HoldoutRecord(BaseModel):
    """The chosen strategy's one run on the sealed final period, as it came out: never fed
    back to the search."""

    variant_id: str | None = Field(None, description="The strategy the lab chose.")
    start: date
    end: date
    run: PeriodScore | None = Field(None, description="None when no strategy could run.")
    reason: str | None = Field(None, description="Why it did not run, when it did not.")

    @property
    def passed(self) -> bool:
        return bool(self.run and self.run.passed)


class IterationRecord(BaseModel):
    """One iteration: its research round, the gate's decision and the analyses behind it."""

    iteration: int
    research_round: int
    variants: list[str]
    best_variant: str | None
    best_score: float
    gate: GateDecision
    failure: FailureAnalysis | None = None
    trajectory: TrajectoryReading | None = None
    trials: TrialStats | None = Field(None, description="Selection bias over every trial so far.")


class AlgoResult(PipelineResult):
    """The lab's outcome: the best strategy, every variant and every decision."""

    decision: LabDecision
    stage: str | None = Field(None, description="The step that failed, when one did.")
    goal: str
    criteria: list[str]
    in_sample: tuple[date, date] | None = Field(None, description="The search period.")
    out_of_sample: tuple[date, date] | None = Field(None, description="The validation period.")
    holdout_period: tuple[date, date] | None = Field(None, description="The sealed final period.")
    fact_sheets: list[FactSheet] = Field(default_factory=list)
    brief: ResearchBrief | None = None
    iterations: list[IterationRecord] = Field(default_factory=list)
    variants: list[VariantRecord] = Field(default_factory=list)
    best: VariantRecord | None = Field(None, description="The best variant so far.")
    strategy_file: str | None = Field(None, description="The best variant's code, saved.")
    tracker_file: str | None = None
    trajectory_chart: str | None = None
    budget: str | None = Field(None, description="Which budget ended the lab, if one did.")
    trials: TrialStats | None = Field(None, description="Selection bias over every trial.")
    trial_bar: TrialBar | None = Field(None, description="What SUCCESS asked of them.")
    holdout: HoldoutRecord | None = Field(
        None, description="The chosen strategy on the holdout, run once after the search."
    )
