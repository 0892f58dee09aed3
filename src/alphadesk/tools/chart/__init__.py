"""The chart toolset: price history, swings, Fibonacci, support/resistance, trendlines,
chart patterns, indicators and an annotated chart image.

Every tool takes a symbol and a period, reads the bars itself at the run's ``as_of``
(bars never pass through the model) and returns a small, bounded model of
:mod:`.models`. The numbers come from :mod:`alphadesk.analytics`; the tools only select,
round and explain them. A period too short for a computation goes back to the model as a
retry asking for a longer one when more history exists; otherwise the output says in
``missing`` what could not be computed.

Modules: :mod:`.history` (``get_price_history``), :mod:`.levels` (swings, Fibonacci,
support/resistance, trendline), :mod:`.signals` (patterns, indicators), :mod:`.render`
(``render_chart``, drawn by :mod:`.drawing`), over :mod:`.series` (the bars of one call)
and :mod:`.models`. ``CHART_TOOLS`` is built when first read: importing :mod:`.drawing`
alone (a command that starts its drawing process) loads no analytics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from alphadesk.agent import Toolset

__all__ = ["CHART_TOOLS"]


def _chart_tools() -> Toolset:
    from alphadesk.agent import Toolset
    from alphadesk.tools.chart.history import get_price_history
    from alphadesk.tools.chart.levels import (
        calculate_fib_levels,
        calculate_swing_points,
        calculate_trendline,
        find_support_resistance,
    )
    from alphadesk.tools.chart.render import render_chart
    from alphadesk.tools.chart.signals import detect_chart_patterns, get_technical_indicators

    return Toolset.of(
        "chart",
        [
            get_price_history,
            calculate_swing_points,
            calculate_fib_levels,
            find_support_resistance,
            calculate_trendline,
            detect_chart_patterns,
            get_technical_indicators,
            render_chart,
        ],
    )


def __getattr__(name: str) -> Any:
    """``CHART_TOOLS``, built when first read."""
    if name != "CHART_TOOLS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value = _chart_tools()
    return value
