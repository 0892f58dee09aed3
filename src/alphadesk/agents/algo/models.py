"""What the strategy lab's agents say: findings, fact sheets, the research brief, strategy
variants, failure analyses, trajectory readings and the quality gate's decision."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from alphadesk.agents.bounds import Code, Name, Paragraph, Phrase

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

    indicator: Name = Field(description="The figure, e.g. rsi_14 or trend.")
    value: float | None = Field(None, description="Its value from a tool; None when qualitative.")
    interpretation: Phrase
    signal: Lean
    confidence: float = Field(ge=0, le=1)


class ResearchReport(BaseModel):
    """A research subagent's findings, and the data it lacked, stated as missing."""

    agent: Name
    domain: Domain
    specialization: Phrase
    findings: list[Finding] = Field(default_factory=list, max_length=15)
    confidence: float = Field(ge=0, le=1)
    data_quality: Literal["observed", "modeled", "missing"] = Field(
        description="observed: real data; modeled: derived (e.g. a modeled option chain); "
        "missing: the data was unavailable, so there are no findings."
    )
    missing: list[Phrase] = Field(
        default_factory=list, max_length=12, description="Data the tools lacked."
    )


class FactSheet(BaseModel):
    """A domain's findings synthesised. ``signal`` is ``unknown`` when no data was observed."""

    domain: Domain
    key_insights: list[Phrase] = Field(default_factory=list, max_length=5)
    supporting_evidence: list[Phrase] = Field(default_factory=list, max_length=12)
    conflicting_evidence: list[Phrase] = Field(default_factory=list, max_length=12)
    confidence: float = Field(ge=0, le=1)
    signal: Literal["bullish", "bearish", "neutral", "unknown"]
    recommended_approach: Approach | None = None
    risks: list[Phrase] = Field(default_factory=list, max_length=8)
    opportunities: list[Phrase] = Field(default_factory=list, max_length=8)
    missing: list[Phrase] = Field(default_factory=list, max_length=12)


class ResearchBrief(BaseModel):
    """The research leader's brief for strategy development."""

    summary: Paragraph
    approaches: list[Approach] = Field(
        min_length=1, max_length=4, description="Most promising first."
    )
    confidence: float = Field(ge=0, le=1)
    research_quality: Literal["high", "medium", "low"]
    gaps: list[Phrase] = Field(
        default_factory=list, max_length=8, description="Data or questions not covered."
    )


class StrategyVariant(BaseModel):
    """One candidate strategy: complete Backtrader code and the parameters it uses."""

    variant_id: Name
    name: Phrase
    description: Paragraph
    template: Name | None = Field(None, description="The library template it came from, if any.")
    approach: Approach
    parameters: dict[str, Any] = Field(default_factory=dict)
    code: Code = Field(description="A complete module defining one bt.Strategy subclass.")


class StrategyBatch(BaseModel):
    """The variants of one iteration and why they were chosen."""

    variants: list[StrategyVariant] = Field(min_length=1, max_length=6)
    reasoning: Paragraph


class FailureAnalysis(BaseModel):
    """Why an iteration's variants failed, in one of the five classes, with evidence."""

    classification: FailureClass
    root_cause: Paragraph
    evidence: list[Phrase] = Field(min_length=1, max_length=10, description="Figures that show it.")
    confidence: float = Field(ge=0, le=1)
    actions: list[Phrase] = Field(default_factory=list, max_length=8)


class TrajectoryReading(BaseModel):
    """The trajectory analyst's reading of the scores so far."""

    status: TrajectoryStatus
    next_action: Literal["CONTINUE", "PIVOT", "ABANDON"]
    reasoning: Paragraph


class GateDecision(BaseModel):
    """The quality gate's decision on one iteration."""

    decision: Decision
    best_variant: Name | None = Field(None, description="variant_id of the best variant.")
    reasoning: Paragraph
    actions: list[Phrase] = Field(default_factory=list, max_length=8)
