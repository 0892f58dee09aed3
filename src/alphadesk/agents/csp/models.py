"""What each cash-secured-put analyst must answer, field by field (the seed's schemas)."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from alphadesk.agents.bounds import Paragraph, Phrase

__all__ = [
    "AlternativeStrike",
    "ChartAnalysis",
    "ConfluenceZone",
    "CspConstraints",
    "OptionsAnalysis",
    "PriceLevel",
    "ResearchAnalysis",
    "Risk",
]

Risk = Literal["low", "moderate", "high"]
Strength = Literal["strong", "moderate", "weak"]


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CspConstraints(BaseModel):
    """What a put must satisfy to be sold."""

    model_config = ConfigDict(frozen=True)

    dte_min: int = Field(14, ge=0)
    dte_max: int = Field(45, ge=1)
    delta_min: float = Field(0.15, gt=0, lt=1, description="Smallest |delta| accepted.")
    delta_max: float = Field(0.30, gt=0, lt=1, description="Largest |delta| accepted.")
    min_weekly_roc: float = Field(0.3, ge=0, description="Percent of the strike per week.")

    @model_validator(mode="after")
    def _ranges(self) -> CspConstraints:
        if self.dte_min > self.dte_max:
            raise ValueError(f"dte_min {self.dte_min} is above dte_max {self.dte_max}")
        if self.delta_min > self.delta_max:
            raise ValueError(f"delta_min {self.delta_min} is above delta_max {self.delta_max}")
        return self


class PriceLevel(_Output):
    price: float = Field(gt=0, description="Price of the level, from the tools' output.")
    strength: Strength
    type: Phrase = Field(
        description="What makes it a level, e.g. 'swing_low', 'fib_61.8', 'sma_200'."
    )


class ConfluenceZone(_Output):
    price: float = Field(gt=0)
    levels: list[Phrase] = Field(
        min_length=1, max_length=8, description="The levels that agree here."
    )


class ChartAnalysis(_Output):
    """The Chart Analyst's verdict on the price structure, for selling puts."""

    recommendation: Literal["bullish", "bearish", "neutral", "reject"]
    trend_direction: Literal["up", "down", "sideways"]
    trend_quality: Strength
    current_price: float = Field(gt=0, description="Last close as of the analysis instant.")
    support_levels: list[PriceLevel] = Field(
        max_length=10, description="Below the current price, nearest first."
    )
    resistance_levels: list[PriceLevel] = Field(
        max_length=10, description="Above the current price."
    )
    fib_confluence_zones: list[ConfluenceZone] = Field(default_factory=list, max_length=6)
    extension_risk: Risk = Field(description="How far price is stretched above support.")
    chart_notes: Paragraph = Field(min_length=1)


class AlternativeStrike(_Output):
    strike: float = Field(gt=0)
    expiration: date
    weekly_roc: float = Field(description="Weekly return on capital, percent.")
    delta: float = Field(le=0, ge=-1, description="Put delta (negative).")


class OptionsAnalysis(_Output):
    """The Options Analyst's choice of put to sell, or a reasoned rejection."""

    recommendation: Literal["select", "reject"]
    best_strike: float | None = Field(None, gt=0)
    best_expiration: date | None = None
    dte: int | None = Field(None, ge=0)
    premium: float | None = Field(None, ge=0, description="Mid price per share.")
    weekly_roc: float | None = Field(None, description="Percent per week.")
    annualized_roc: float | None = Field(None, description="Percent per year.")
    delta: float | None = Field(None, le=0, ge=-1)
    gamma: float | None = None
    theta: float | None = None
    vega: float | None = None
    iv: float | None = Field(None, ge=0, description="Implied volatility of the chosen put.")
    hv: float | None = Field(None, ge=0, description="Historical volatility of the stock.")
    iv_hv_ratio: float | None = Field(None, ge=0)
    liquidity_score: Literal["good", "fair", "poor"] | None = None
    alternative_strikes: list[AlternativeStrike] = Field(default_factory=list, max_length=6)
    rationale: Paragraph = Field(min_length=1)
    options_notes: Paragraph = ""


class ResearchAnalysis(_Output):
    """The Research Analyst's red-flag check."""

    recommendation: Literal["pass", "reject"]
    news_risk: Risk
    earnings_risk: Risk
    short_interest_risk: Risk
    next_earnings: date | None = Field(None, description="Next earnings date if known.")
    research_notes: Paragraph = Field(min_length=1)
