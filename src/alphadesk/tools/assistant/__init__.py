"""The assistant's tools: its own toolset (market overview, positions, deep thinking, web
search), the desks as tools, and symbol resolution for its classifier.

They read :class:`~alphadesk.tools.assistant.deps.ChatDeps` (the paper portfolio, the deep
model, the desks, the web) besides market data. Modules: :mod:`.overview`,
:mod:`.positions`, :mod:`.reasoning` (``think_deeply``, ``web_search``), :mod:`.desks`
(:data:`DESK_TOOLS`), :mod:`.symbols`, :mod:`.deps`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from alphadesk.agent import Toolset

__all__ = ["ASSISTANT_TOOLS", "DESK_TOOLS"]


def _assistant_tools() -> Toolset:
    from alphadesk.agent import Toolset
    from alphadesk.tools.assistant.overview import get_market_overview
    from alphadesk.tools.assistant.positions import get_positions
    from alphadesk.tools.assistant.reasoning import think_deeply, web_search

    return Toolset.of("assistant", [get_market_overview, get_positions, think_deeply, web_search])


def __getattr__(name: str) -> Any:
    """The toolsets, imported when first asked for: the symbol tools (the classifier's)
    need none of the market analytics the others import."""
    if name == "ASSISTANT_TOOLS":
        value: Any = _assistant_tools()
    elif name == "DESK_TOOLS":
        from alphadesk.tools.assistant.desks import DESK_TOOLS as value
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
