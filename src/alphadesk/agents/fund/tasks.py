"""The portfolio manager's task: the object its prompt is rendered from (``agents.task``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from alphadesk.agents.fund.models import DeskCall, Holding
from alphadesk.agents.task import AgentTask, render_value
from alphadesk.portfolio.targets import BookLimits

__all__ = ["FundTask"]


@dataclass(frozen=True, kw_only=True)
class FundTask(AgentTask):
    """The desks' calls, the book before the rebalance and its limits, at one instant."""

    package = "alphadesk.agents.fund"
    template = "manager"
    as_of: datetime
    desks: list[DeskCall]
    holdings: list[Holding]
    cash: float
    nav: float
    limits: BookLimits

    def shown_as(self, name: str) -> str:
        if name == "as_of":
            return self.as_of.date().isoformat()
        if name == "limits":
            return self.limits.describe()
        if name in ("cash", "nav"):
            return f"{getattr(self, name):.2f}"
        if name in ("desks", "holdings"):
            return render_value([item.model_dump(mode="json") for item in getattr(self, name)])
        return super().shown_as(name)

    def weight(self, symbol: str) -> float:
        """The name's weight before the rebalance (0 when not held)."""
        return next((h.weight for h in self.holdings if h.symbol == symbol), 0.0)
