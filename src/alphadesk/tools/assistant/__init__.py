"""The assistant's tools: its own toolset (market overview, positions, deep thinking, web
search), the desks as tools, and symbol resolution for its classifier.

They read :class:`~alphadesk.tools.assistant.deps.ChatDeps` (the paper portfolio, the deep
model, the desks, the web) besides market data. Modules: :mod:`.overview`,
:mod:`.positions`, :mod:`.reasoning` (``think_deeply``, ``web_search``), :mod:`.desks`
(:data:`DESK_TOOLS`), :mod:`.symbols`, :mod:`.deps`.
"""

from __future__ import annotations

from alphadesk.agent import Toolset
from alphadesk.tools.assistant.desks import DESK_TOOLS
from alphadesk.tools.assistant.overview import get_market_overview
from alphadesk.tools.assistant.positions import get_positions
from alphadesk.tools.assistant.reasoning import think_deeply, web_search

__all__ = ["ASSISTANT_TOOLS", "DESK_TOOLS"]

ASSISTANT_TOOLS = Toolset.of(
    "assistant", [get_market_overview, get_positions, think_deeply, web_search]
)
