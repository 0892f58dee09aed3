"""What the portfolio manager reads (each desk's call, each holding) and what it answers."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from alphadesk.agents.bounds import Paragraph
from alphadesk.portfolio.targets import TargetWeight

__all__ = ["DeskCall", "Holding", "PortfolioDecision"]


class DeskCall(BaseModel):
    """The trading desk's decision on one name, as the manager reads it."""

    model_config = ConfigDict(frozen=True)

    symbol: str
    decision: Literal["BUY", "HOLD", "SELL", "failed"]
    conviction: float | None = Field(None, ge=0, le=1, description="The judge's, 0 to 1.")
    size_fraction: float | None = Field(None, ge=0, le=1, description="The judge's size.")
    rationale: str = Field("", description="The judge's rationale, or why the desk failed.")
    price: float = Field(gt=0, description="The close the orders are priced at.")
    run_id: str | None = None


class Holding(BaseModel):
    """One name of the book before the rebalance."""

    model_config = ConfigDict(frozen=True)

    symbol: str
    shares: float
    price: float = Field(gt=0)
    weight: float = Field(description="Its value, a fraction of the NAV.")


class PortfolioDecision(BaseModel):
    """The manager's answer: a target weight per name, each with its reason."""

    model_config = ConfigDict(extra="forbid")

    targets: list[TargetWeight] = Field(
        min_length=1, max_length=60, description="One per symbol the desks decided."
    )
    rationale: Paragraph = Field(min_length=1, description="The book as a whole, in short.")
