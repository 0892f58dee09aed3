"""What each trading-desk agent must answer, field by field.

Analysts report named figures (checked against their tools) and evidence citing them;
every later stage cites figures of the desk's fact sheet (``market.rsi_14``...), checked
against it. Positions are internally consistent by construction (a BUY's stop lies below
its entry); whether their prices lie in the traded range is checked against the data.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from alphadesk.agents.bounds import Name, Paragraph, Phrase

__all__ = [
    "Action",
    "AnalystName",
    "AnalystReport",
    "DebateTurn",
    "Evidence",
    "FinalDecision",
    "FundamentalsReport",
    "InvestmentPlan",
    "MarketReport",
    "NewsReport",
    "PastSituation",
    "Position",
    "RiskView",
    "SentimentReport",
    "Signal",
    "TradeProposal",
]

Signal = Literal["bullish", "bearish", "neutral"]
Action = Literal["BUY", "HOLD", "SELL"]
AnalystName = Literal["market", "sentiment", "news", "fundamentals"]


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Evidence(_Output):
    """One number an argument rests on, quoted from the facts, and what it says."""

    fact: Name = Field(
        description="The figure's name: a key of the analyst's own `figures`, or of the "
        "fact sheet elsewhere (e.g. 'market.rsi_14')."
    )
    value: float = Field(description="Its value, copied from the facts.")
    lean: Signal = Field(description="Which way this fact points.")
    reading: Phrase = Field(min_length=1, description="What it means, in a few words.")


class AnalystReport(_Output):
    """What every analyst reports: a signal, the figures behind it and what was missing."""

    signal: Signal
    score: float = Field(ge=-1, le=1, description="Net evidence, -1 bearish to 1 bullish.")
    confidence: float = Field(ge=0, le=1, description="0 when the data could not say.")
    figures: dict[Name, float] = Field(
        default_factory=dict,
        max_length=120,
        description="Named numbers from the tools, e.g. rsi_14.",
    )
    evidence: list[Evidence] = Field(
        default_factory=list, max_length=12, description="Strongest first."
    )
    summary: Paragraph = Field(min_length=1)
    missing: list[Phrase] = Field(
        default_factory=list, max_length=12, description="Data the tools said was missing."
    )

    @model_validator(mode="after")
    def _signal_follows_score(self) -> AnalystReport:
        if (self.signal == "bullish" and self.score <= 0) or (
            self.signal == "bearish" and self.score >= 0
        ):
            raise ValueError(f"signal {self.signal} contradicts score {self.score}")
        return self


class MarketReport(AnalystReport):
    """The market analyst: trend, indicators, levels and chart patterns."""

    current_price: float = Field(gt=0, description="Last close at the analysis instant.")
    trend_direction: Literal["up", "down", "sideways"]
    trend_quality: Literal["strong", "moderate", "weak"]
    support_levels: list[float] = Field(
        default_factory=list, max_length=10, description="Below the price."
    )
    resistance_levels: list[float] = Field(
        default_factory=list, max_length=10, description="Above it."
    )
    patterns: list[Phrase] = Field(
        default_factory=list, max_length=10, description="e.g. 'double_top (bearish)'."
    )


class SentimentReport(AnalystReport):
    """The sentiment analyst: social mood, market fear, positioning and ratings."""

    social_available: bool = Field(description="Whether any social-media data was found.")
    market_fear: Literal["calm", "normal", "elevated", "extreme"] | None = Field(
        None, description="From the VIX (or its labelled proxy); None when unavailable."
    )


class NewsReport(AnalystReport):
    """The news analyst: recent headlines and their Loughran-McDonald tone."""

    news_available: bool
    days: int = Field(7, ge=1, le=90, description="Look-back window used, in days.")
    headlines: list[Phrase] = Field(
        default_factory=list, max_length=10, description="The most telling, newest first."
    )


class FundamentalsReport(AnalystReport):
    """The fundamentals analyst: statements as filed by the analysis instant."""

    fundamentals_available: bool
    last_filed: date | None = None


class DebateTurn(_Output):
    """One researcher's turn in the bull/bear debate."""

    argument: Paragraph = Field(min_length=1, description="The case, in a few sentences.")
    evidence: list[Evidence] = Field(
        default_factory=list, max_length=12, description="Facts cited."
    )
    rebuttal: Paragraph | None = Field(
        None, description="The answer to the other side's last turn."
    )
    conviction: float = Field(ge=0, le=1)


class InvestmentPlan(_Output):
    """The research manager's verdict on the debate."""

    recommendation: Action
    confidence: float = Field(ge=0, le=1)
    winning_side: Literal["bull", "bear", "balanced"]
    rationale: Paragraph = Field(min_length=1)
    evidence: list[Evidence] = Field(default_factory=list, max_length=12)
    strategic_actions: list[Phrase] = Field(default_factory=list, max_length=8)


class Position(_Output):
    """An action with its size and price levels."""

    action: Action
    size_fraction: float = Field(ge=0, le=1, description="Fraction of capital; 0 for HOLD.")
    entry: float | None = Field(None, gt=0)
    stop: float | None = Field(None, gt=0)
    target: float | None = Field(None, gt=0)
    horizon_days: int = Field(ge=1, le=365, description="Calendar days the view holds for.")
    conviction: float = Field(ge=0, le=1)
    rationale: Paragraph = Field(min_length=1)
    evidence: list[Evidence] = Field(default_factory=list, max_length=12)

    @model_validator(mode="after")
    def _consistent(self) -> Any:
        if self.action == "HOLD":
            if self.size_fraction != 0:
                raise ValueError("a HOLD has size_fraction 0")
            return self
        if self.size_fraction <= 0:
            raise ValueError(f"a {self.action} needs a size_fraction above 0")
        if self.entry is None or self.stop is None:
            raise ValueError(f"a {self.action} needs an entry and a stop")
        below, above = (
            (self.stop, self.target) if self.action == "BUY" else (self.target, self.stop)
        )
        if below is not None and below >= self.entry:
            raise ValueError(f"{self.action}: {below} must lie below the entry {self.entry}")
        if above is not None and above <= self.entry:
            raise ValueError(f"{self.action}: {above} must lie above the entry {self.entry}")
        return self

    @property
    def levels(self) -> dict[str, float]:
        named = {"entry": self.entry, "stop": self.stop, "target": self.target}
        return {name: value for name, value in named.items() if value is not None}


class TradeProposal(Position):
    """The trader's proposal, from the investment plan."""


class RiskView(_Output):
    """One risk analyst's view of the trader's proposal."""

    stance: Literal["support", "adjust", "oppose"]
    recommended_size: float = Field(ge=0, le=1, description="Fraction of capital; 0 = stay out.")
    argument: Paragraph = Field(min_length=1)
    evidence: list[Evidence] = Field(default_factory=list, max_length=12)
    rebuttal: Paragraph | None = Field(None, description="The answer to the other analysts.")


class FinalDecision(Position):
    """The risk judge's binding decision."""

    risk_notes: list[Phrase] = Field(
        default_factory=list, max_length=8, description="What would change it."
    )


class PastSituation(BaseModel):
    """A reflection recalled from memory: a past situation, what happened, the lesson."""

    id: str
    symbol: str
    situation: str
    lesson: str
    outcome: dict[str, Any] = Field(default_factory=dict)
    decided_at: datetime
    written_at: datetime
    distance: float
