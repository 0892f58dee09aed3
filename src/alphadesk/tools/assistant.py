"""The assistant's own toolset: market overview, positions, deep thinking, web search."""

from __future__ import annotations

from alphadesk.agent import Toolset
from alphadesk.tools.overview import get_market_overview
from alphadesk.tools.positions import get_positions
from alphadesk.tools.reasoning import think_deeply, web_search

__all__ = ["ASSISTANT_TOOLS"]

ASSISTANT_TOOLS = Toolset.of(
    "assistant", [get_market_overview, get_positions, think_deeply, web_search]
)
