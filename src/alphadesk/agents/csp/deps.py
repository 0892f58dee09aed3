"""What the cash-secured-put analysts receive besides their tools' data."""

from __future__ import annotations

from dataclasses import dataclass, field

from alphadesk.agents.csp.models import (
    ChartAnalysis,
    CspConstraints,
    OptionsAnalysis,
)
from alphadesk.tools.deps import ToolDeps

__all__ = ["CspDeps"]


@dataclass(frozen=True)
class CspDeps(ToolDeps):
    """The symbol under analysis, the trade's constraints and the earlier analysts' results.

    Attributes:
        symbol: The stock being analysed.
        constraints: Days to expiry, delta and return bounds for the put.
        chart: The Chart Analyst's result, once it exists (context for the options step).
        options: The Options Analyst's result, once it exists (sets the research horizon).
    """

    symbol: str = ""
    constraints: CspConstraints = field(default_factory=CspConstraints)
    chart: ChartAnalysis | None = None
    options: OptionsAnalysis | None = None

    @property
    def horizon_days(self) -> int:
        """How far ahead a risk matters: the chosen put's life, else the longest allowed."""
        if self.options is not None and self.options.dte is not None:
            return self.options.dte
        return self.constraints.dte_max
