"""What every pipeline's request and result share: a symbol at an instant, a depth, and the
agents that decided, with what data was missing."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from alphadesk.pipelines.depth import Depth

__all__ = ["AgentReport", "Depth", "Failure", "PipelineRequest", "PipelineResult"]


class PipelineRequest(BaseModel):
    """One symbol to analyse at one instant, at a depth (each agent's turn budget)."""

    model_config = ConfigDict(frozen=True)

    symbol: str
    as_of: datetime
    depth: Depth = "standard"

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


class Failure(BaseModel):
    """The step that stopped a run (its agent's name) and why: what a graph routes on."""

    stage: str
    reason: str


class PipelineResult(BaseModel):
    """The fields every pipeline's result has; each pipeline narrows ``decision``."""

    symbol: str
    as_of: datetime
    decision: str
    reason: str | None = Field(None, description="Why rejected or failed, and by which step.")
    agents: list[AgentReport] = Field(default_factory=list)
    data_missing: list[str] = Field(default_factory=list)
    run_id: str | None = None

    def decided(self) -> dict[str, Any]:
        """What the result decided, without ids, timings and model commentary: what a
        replay of its run must reproduce."""
        return self.model_dump(mode="json", exclude={"run_id", "agents"})
