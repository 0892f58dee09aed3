"""The trading desk's request and result."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import AliasChoices, BaseModel, Field, field_validator

from alphadesk.agents.desk.models import (
    AnalystName,
    DebateTurn,
    FinalDecision,
    FundamentalsReport,
    InvestmentPlan,
    MarketReport,
    NewsReport,
    PastSituation,
    RiskView,
    SentimentReport,
    TradeProposal,
)
from alphadesk.config import DESK_RENAMED, Settings
from alphadesk.pipelines.models import PipelineRequest, PipelineResult

__all__ = ["DebateEntry", "DeskRequest", "DeskResult", "RiskEntry"]


def _all_analysts() -> list[AnalystName]:
    return list(get_args(AnalystName))


class DeskRequest(PipelineRequest):
    """One symbol to decide on at one instant, and how the desk argues about it."""

    analysts: list[AnalystName] = Field(default_factory=_all_analysts, min_length=1)
    rounds: int = Field(
        1,
        ge=0,
        le=5,
        validation_alias=AliasChoices("rounds", "max_debate_rounds"),  # as recorded before
        description="Bull/bear rounds: both argue, then each rebuts the other.",
    )
    risk_rounds: int = Field(
        1,
        ge=0,
        le=5,
        validation_alias=AliasChoices("risk_rounds", "max_risk_discuss_rounds"),
        description="Risk rounds: all three argue, then each rebuts the others.",
    )
    memory: bool = Field(True, description="Recall and reflect when the desk has a memory.")

    @field_validator("analysts")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))

    @classmethod
    def from_settings(cls, settings: Settings, **fields: Any) -> DeskRequest:
        """A request whose unset (None) fields take the settings' desk defaults."""
        defaults: dict[str, Any] = settings.desk.model_dump() | {"memory": settings.memory.enabled}
        given = {DESK_RENAMED.get(k, k): value for k, value in fields.items() if value is not None}
        return cls.model_validate(defaults | given)


Part = Literal["argument", "rebuttal"]


class DebateEntry(BaseModel):
    """One researcher's turn: its argument in a ``round``, or its rebuttal of the other
    side's argument of that round."""

    speaker: Literal["bull", "bear"]
    round: int
    part: Part = "argument"
    turn: DebateTurn


class RiskEntry(BaseModel):
    """One risk analyst's turn: its view in a ``round``, or its rebuttal of the other
    two's views of that round."""

    speaker: Literal["risky", "safe", "neutral"]
    round: int
    part: Part = "argument"
    view: RiskView


class DeskResult(PipelineResult):
    """The decision and every stage behind it."""

    decision: Literal["BUY", "HOLD", "SELL", "failed"]
    stage: str | None = Field(None, description="The agent that failed, when one did.")
    market: MarketReport | None = None
    sentiment: SentimentReport | None = None
    news: NewsReport | None = None
    fundamentals: FundamentalsReport | None = None
    facts: dict[str, float] = Field(default_factory=dict, description="The fact sheet.")
    situation: str | None = Field(None, description="The situation as memory stores it.")
    memories: list[PastSituation] = Field(default_factory=list, description="Recalled.")
    debate: list[DebateEntry] = Field(default_factory=list)
    plan: InvestmentPlan | None = None
    proposal: TradeProposal | None = None
    risk_debate: list[RiskEntry] = Field(default_factory=list)
    final: FinalDecision | None = None
    chart: str | None = Field(None, description="The chart image saved with the run.")
