"""What the strategy lab's agents say: findings, fact sheets, the research brief, strategy
variants, failure analyses, trajectory readings and the quality gate's decision."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = [
    "Approach",
    "Decision",
    "Domain",
    "FactSheet",
    "FailureAnalysis",
    "FailureClass",
    "Finding",
    "GateDecision",
    "ResearchBrief",
    "ResearchReport",
    "StrategyBatch",
    "StrategyVariant",
    "TrajectoryReading",
]

Domain = Literal["technical", "fundamental", "sentiment"]
Lean = Literal["bullish", "bearish", "neutral"]
Approach = Literal["trend", "mean_reversion", "breakout", "momentum"]
Decision = Literal["SUCCESS", "TUNE", "FIX", "REFINE", "RESEARCH", "ABANDON"]
FailureClass = Literal[
    "PARAMETER_ISSUE", "ALGORITHM_BUG", "DESIGN_FLAW", "RESEARCH_GAP", "FUNDAMENTAL_IMPOSSIBILITY"
]
TrajectoryStatus = Literal["CONVERGING", "DIVERGING", "OSCILLATING", "STAGNANT"]


class Finding(BaseModel):
    """One observation: a figure from a tool and what it suggests."""

    indicator: str = Field(description="The figure, e.g. rsi_14 or trend.")
    value: float | None = Field(None, description="Its value from a tool; None when qualitative.")
    interpretation: str
    signal: Lean
    confidence: float = Field(ge=0, le=1)


class ResearchReport(BaseModel):
    """A research subagent's findings, and the data it lacked, stated as missing."""

    agent: str
    domain: Domain
    specialization: str
    findings: list[Finding] = Field(default_factory=list)
    confidence: float = Field(ge=0, le=1)
    data_quality: Literal["observed", "modeled", "missing"] = Field(
        description="observed: real data; modeled: derived (e.g. a modeled option chain); "
        "missing: the data was unavailable, so there are no findings."
    )
    missing: list[str] = Field(default_factory=list, description="Data the tools lacked.")


class FactSheet(BaseModel):
    """A domain's findings synthesised. ``signal`` is ``unknown`` when no data was observed."""

    domain: Domain
    key_insights: list[str] = Field(default_factory=list, max_length=5)
    supporting_evidence: list[str] = Field(default_factory=list)
    conflicting_evidence: list[str] = Field(default_factory=list)
    confidence: float = Field(ge=0, le=1)
    signal: Literal["bullish", "bearish", "neutral", "unknown"]
    recommended_approach: Approach | None = None
    risks: list[str] = Field(default_factory=list)
    opportunities: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)


class ResearchBrief(BaseModel):
    """The research leader's brief for strategy development."""

    summary: str
    approaches: list[Approach] = Field(min_length=1, description="Most promising first.")
    confidence: float = Field(ge=0, le=1)
    research_quality: Literal["high", "medium", "low"]
    gaps: list[str] = Field(default_factory=list, description="Data or questions not covered.")


class StrategyVariant(BaseModel):
    """One candidate strategy: complete Backtrader code and the parameters it uses."""

    variant_id: str
    name: str
    description: str
    template: str | None = Field(None, description="The library template it came from, if any.")
    approach: Approach
    parameters: dict[str, Any] = Field(default_factory=dict)
    code: str = Field(description="A complete module defining one bt.Strategy subclass.")


class StrategyBatch(BaseModel):
    """The variants of one iteration and why they were chosen."""

    variants: list[StrategyVariant] = Field(min_length=1)
    reasoning: str


class FailureAnalysis(BaseModel):
    """Why an iteration's variants failed, in one of the five classes, with evidence."""

    classification: FailureClass
    root_cause: str
    evidence: list[str] = Field(min_length=1, description="Figures that show it.")
    confidence: float = Field(ge=0, le=1)
    actions: list[str] = Field(default_factory=list)


class TrajectoryReading(BaseModel):
    """The trajectory analyst's reading of the scores so far."""

    status: TrajectoryStatus
    next_action: Literal["CONTINUE", "PIVOT", "ABANDON"]
    reasoning: str


class GateDecision(BaseModel):
    """The quality gate's decision on one iteration."""

    decision: Decision
    best_variant: str | None = Field(None, description="variant_id of the best variant.")
    reasoning: str
    actions: list[str] = Field(default_factory=list)
