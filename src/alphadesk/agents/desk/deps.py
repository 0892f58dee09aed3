"""What the trading-desk agents receive besides their tools' data."""

from __future__ import annotations

from dataclasses import dataclass, field

from alphadesk.tools.deps import ToolDeps

__all__ = ["DeskDeps"]


@dataclass(frozen=True)
class DeskDeps(ToolDeps):
    """The symbol under analysis and the desk's fact sheet.

    Attributes:
        symbol: The stock being analysed.
        facts: The fact sheet built from the analysts' reports (``market.rsi_14`` -> 47.7):
            every number a later stage cites is checked against it.
    """

    symbol: str = ""
    facts: dict[str, float] = field(default_factory=dict)
