"""The cash-secured-put pipeline's request and result."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from alphadesk.agents.csp.models import (
    ChartAnalysis,
    CspConstraints,
    OptionsAnalysis,
    ResearchAnalysis,
)

__all__ = [
    "AgentReport",
    "CspConstraints",
    "CspRequest",
    "CspResult",
    "Depth",
    "SuggestedPosition",
    "Synthesis",
]

Depth = Literal["quick", "standard", "deep"]
Stage = Literal["chart", "options", "research", "synthesis"]


class CspRequest(BaseModel):
    """One symbol to analyse at one instant."""

    model_config = ConfigDict(frozen=True)

    symbol: str
    as_of: datetime
    depth: Depth = "standard"
    parallel_research: bool = Field(
        False, description="Run research alongside the chart step (cancelled on a chart reject)."
    )
    constraints: CspConstraints = Field(default_factory=CspConstraints)

    @field_validator("as_of")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("as_of must be timezone-aware")
        return value


class AgentReport(BaseModel):
    """How one agent's step ended and what decided it."""

    agent: str
    model: str
    outcome: str
    reason: str | None = None
    tool_calls: int = 0
    requests: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0


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


class CspResult(BaseModel):
    """The whole decision for one symbol, with everything behind it."""

    symbol: str
    as_of: datetime
    decision: Literal["select", "reject", "failed"]
    reason: str | None = Field(None, description="Why rejected or failed, and by which step.")
    stage: Stage | None = Field(None, description="The step that rejected or failed.")
    chart: ChartAnalysis | None = None
    options: OptionsAnalysis | None = None
    research: ResearchAnalysis | None = None
    synthesis: Synthesis | None = None
    agents: list[AgentReport] = Field(default_factory=list)
    data_missing: list[str] = Field(default_factory=list)
    run_id: str | None = None
