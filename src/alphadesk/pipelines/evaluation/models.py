"""What an evaluation is asked (its spec) and what each decision in it came to."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from alphadesk.config import RULES_MODEL

__all__ = ["DecisionRecord", "EvalSpec", "EvaluationError", "PutRecord"]

DeskKind = Literal["desk", "csp"]

# What changes how an evaluation trades or runs, not what its desk decides: decisions
# recorded under one value of these are the decisions of any other.
_NOT_DECIDING = frozenset(
    {"concurrency", "long_short", "cash", "commission", "slippage", "fraction", "contract_fee"}
)


class EvaluationError(ValueError):
    """An evaluation that cannot run as asked; the message says what to change."""


class EvalSpec(BaseModel):
    """A walk-forward evaluation: a desk, symbols, a date range, a step, costs."""

    model_config = ConfigDict(frozen=True)

    desk: DeskKind = "desk"
    symbols: list[str] = Field(min_length=1)
    start: date
    end: date
    every: int = Field(10, ge=1, description="Trading sessions between decisions.")
    model: str = RULES_MODEL
    long_short: bool = Field(False, description="Trading desk: SELL goes short, not flat.")
    cash: float = Field(100_000.0, gt=0, description="Capital per symbol.")
    commission: float = Field(0.001, ge=0, description="Fraction of traded value per fill.")
    slippage: float = Field(0.0005, ge=0, lt=1, description="Fraction of the price per fill.")
    fraction: float = Field(0.95, gt=0, le=1, description="Share of equity per position.")
    contract_fee: float = Field(0.65, ge=0, description="CSP: fee per contract sold.")
    concurrency: int = Field(2, ge=1, description="Decisions in flight at once.")

    @field_validator("symbols")
    @classmethod
    def _symbols(cls, value: list[str]) -> list[str]:
        cleaned = list(dict.fromkeys(s.strip().upper() for s in value if s.strip()))
        if not cleaned:
            raise ValueError("give at least one symbol")
        return cleaned

    @model_validator(mode="after")
    def _range(self) -> EvalSpec:
        if self.start > self.end:
            raise ValueError(f"start {self.start} is after end {self.end}")
        return self

    @property
    def name(self) -> str:
        """A folder name that says what was evaluated."""
        model = re.sub(r"[^A-Za-z0-9.-]+", "-", self.model).strip("-")
        symbols = "-".join(self.symbols) if len(self.symbols) <= 4 else f"{len(self.symbols)}sym"
        side = "-ls" if self.long_short and self.desk == "desk" else ""
        return f"{self.desk}-{model}-{symbols}-{self.start}-{self.end}-every{self.every}{side}"

    def fingerprint(self) -> str:
        """The spec minus what changes how, not what, is computed."""
        return self.model_dump_json(exclude={"concurrency"})

    def deciding(self) -> dict[str, object]:
        """The fields that decide what the desk is asked (not how it trades or runs)."""
        return self.model_dump(mode="json", exclude=set(_NOT_DECIDING))


class DecisionRecord(BaseModel):
    """One symbol decided at one rebalancing date."""

    symbol: str
    as_of: datetime
    decision: str = Field(description="BUY/HOLD/SELL/failed, or select/reject/filtered/failed.")
    position: int | None = Field(None, description="Trading desk: the position after it.")
    conviction: float | None = Field(None, description="Trading desk: the judge's, 0 to 1.")
    reason: str | None = None
    model_calls: int = 0
    model_cost_usd: float = 0.0
    run_id: str | None = Field(None, description="Kept for the manifest, not the table.")
    live_calls: int = 0
    put: PutRecord | None = None


class PutRecord(BaseModel):
    """The put a CSP decision sold."""

    expiration: date
    strike: float
    premium: float
    contracts: int = 1


DecisionRecord.model_rebuild()
