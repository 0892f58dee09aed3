"""The fund's request (the names, the instant, the book as the paper account held it, its
limits) and its result (each desk's call, the targets, the orders and the cash after)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from alphadesk.pipelines.models import AgentReport, PipelineRequest, PipelineResult
from alphadesk.portfolio import DEFAULT_ACCOUNT, DEFAULT_CASH, OrderRequest
from alphadesk.portfolio.targets import BookLimits

__all__ = ["BookSnapshot", "DeskLine", "FundRequest", "FundResult", "Held", "TargetLine"]


class Held(BaseModel):
    """Shares of one stock the account held at the run's instant."""

    symbol: str
    shares: float
    average_cost: float = Field(ge=0)


class BookSnapshot(BaseModel):
    """The paper account as it stood at the run's instant: the cash free to trade (cash
    less what short puts reserve) and the stocks held. Part of the request, so a resumed
    or replayed run decides on the same book whatever the account did since."""

    account: str = DEFAULT_ACCOUNT
    cash: float = DEFAULT_CASH
    holdings: list[Held] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="What the book leaves out.")

    @property
    def shares(self) -> dict[str, float]:
        return {h.symbol: h.shares for h in self.holdings}


def _label(symbols: list[str], universe: str | None) -> str:
    if universe:
        return universe
    return ", ".join(symbols) if len(symbols) <= 3 else f"{len(symbols)} symbols"


class FundRequest(PipelineRequest):
    """The names to decide on at one instant, as one book: the account's holdings and
    cash at that instant, under ``limits``."""

    symbol: str = Field("", description="What is decided: the index, or the symbols.")
    symbols: list[str] = Field(min_length=1, max_length=100)
    universe: str | None = Field(None, description="The index the symbols were its members of.")
    book: BookSnapshot = Field(
        default_factory=BookSnapshot,
        description="The account's book at as_of (fund_request reads it); default: an empty "
        "$100,000 book.",
    )
    limits: BookLimits = Field(default_factory=BookLimits)

    @model_validator(mode="before")
    @classmethod
    def _derived(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("symbols"), list):
            return {**data, "symbol": _label(data["symbols"], data.get("universe"))}
        return data

    @field_validator("symbols")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))


class DeskLine(BaseModel):
    """The trading desk's call on one name, and what each of its analysts missed."""

    symbol: str
    decision: Literal["BUY", "HOLD", "SELL", "failed"]
    conviction: float | None = None
    size_fraction: float | None = None
    rationale: str = ""
    reason: str | None = Field(None, description="Why the desk failed, and at which stage.")
    run_id: str | None = None
    missed: dict[str, list[str]] = Field(
        default_factory=dict, description="Per analyst, the data its tools said was missing."
    )
    report: AgentReport | None = Field(
        None, description="The desk as one step of the fund: its agents' calls, tokens, cost."
    )


class TargetLine(BaseModel):
    """One name before and after: its weight now, the manager's target, the weight the
    orders leave it at (whole shares, limits kept), and the reason."""

    symbol: str
    price: float
    shares: float
    weight: float
    target: float
    after: float
    reason: str


class FundResult(PipelineResult):
    """The book's rebalance: each desk's call, the targets, the orders, the cash after."""

    decision: Literal["rebalance", "hold", "failed"]
    stage: str | None = Field(None, description="The agent that failed, when one did.")
    symbols: list[str]
    book: BookSnapshot
    limits: BookLimits
    nav: float | None = None
    desks: list[DeskLine] = Field(default_factory=list)
    targets: list[TargetLine] = Field(default_factory=list)
    rationale: str | None = None
    orders: list[OrderRequest] = Field(default_factory=list)
    costs: float = 0.0
    cash_after: float | None = None

    def decided(self) -> dict[str, Any]:
        """What the run decided, without ids and timings (the desks' runs are new runs
        on a replay, and the orders name the run they come from)."""
        found = super().decided()
        for desk in found["desks"]:
            desk.pop("run_id", None)
            desk.pop("report", None)
        for order in found["orders"]:
            order.pop("source", None)
        return found
