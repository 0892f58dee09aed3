"""The cash-secured-put pipeline's request and result."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from alphadesk.agents.csp.models import (
    ChartAnalysis,
    CspConstraints,
    OptionsAnalysis,
    ResearchAnalysis,
)
from alphadesk.pipelines.models import AgentReport, Depth, PipelineRequest, PipelineResult

__all__ = [
    "AgentReport",
    "CspConstraints",
    "CspRequest",
    "CspResult",
    "Depth",
    "SuggestedPosition",
    "Synthesis",
]

Stage = Literal["chart", "options", "research", "synthesis"]


class CspRequest(PipelineRequest):
    """One symbol to analyse at one instant."""

    parallel_research: bool = Field(
        False, description="Run research alongside the chart step (cancelled on a chart reject)."
    )
    constraints: CspConstraints = Field(default_factory=CspConstraints)


class SuggestedPosition(BaseModel):
    strategy: Literal["csp"] = "csp"
    symbol: str
    strike: float
    expiration: date
    dte: int
    contracts: int = 1
    premium: float = Field(description="Per share.")
    delta: float | None
    weekly_roc: float | None
    annualized_roc: float | None
    capital_required: float = Field(description="Strike x 100 x contracts, held as cash.")
    max_profit: float = Field(description="Premium x 100 x contracts.")
    breakeven: float


class Synthesis(BaseModel):
    rationale: str
    risk_factors: list[str]
    suggested_position: SuggestedPosition
    narrative: str | None = Field(None, description="Optional orchestrator-model commentary.")


class CspResult(PipelineResult):
    """The whole decision for one symbol, with everything behind it."""

    decision: Literal["select", "reject", "failed"]
    stage: Stage | None = Field(None, description="The step that rejected or failed.")
    chart: ChartAnalysis | None = None
    options: OptionsAnalysis | None = None
    research: ResearchAnalysis | None = None
    synthesis: Synthesis | None = None
    price_basis: str | None = Field(
        None,
        description="What the prices are relative to corporate actions: as traded on the "
        "as-of date, earlier bars adjusted for the splits up to it (None: no bars).",
    )
