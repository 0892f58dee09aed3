"""The desks as tools: a whole pipeline of agents behind one call per symbol.

A desk tool takes a symbol, runs the desk registered under its name in
``ChatDeps.desks`` at the run's instant and returns its :class:`DeskVerdict`. Tools
cannot import pipelines (imports go downward), so the assistant's pipeline registers the
runners (``pipelines/assistant/desks.py``). Adding a desk is one :func:`desk_tool` line in
:data:`DESK_TOOLS` here and one runner there.
"""

from __future__ import annotations

from typing import Literal

from alphadesk.agent import ModelRetry, RunContext, Tool, Toolset, tool
from alphadesk.data.symbols import normalize_symbol
from alphadesk.tools.assistant.deps import SCREEN_DESK, ChatDeps, DeskVerdict

__all__ = ["DESK_TOOLS", "desk_tool", "run_csp_screen"]


def desk_tool(desk: str, summary: str) -> Tool:
    """A tool ``run_<desk>_desk(symbol)`` that runs the desk registered as ``desk``.

    Args:
        desk: The key of the runner in ``ChatDeps.desks``.
        summary: What the desk decides, for the model (first line of the description).
    """

    async def run_desk(ctx: RunContext[ChatDeps], symbol: str) -> DeskVerdict:
        runner = ctx.deps.desks.get(desk)
        if runner is None:
            raise ModelRetry(f"the {desk} desk is not available in this session; use another tool")
        return await runner.run(normalize_symbol(symbol), ctx.as_of)

    run_desk.__doc__ = f"""{summary}

    Runs the whole desk (several agents, tens of seconds with a real model) at the run's
    instant; the verdict names the recorded run with the full report.

    Args:
        symbol: Ticker, e.g. "NVDA".
    """
    run_desk.__name__ = f"run_{desk}_desk"
    return tool(name=f"run_{desk}_desk", retries=1)(run_desk)


@tool(retries=1)
async def run_csp_screen(
    ctx: RunContext[ChatDeps], universe: Literal["sp500", "nasdaq100", "dow30"]
) -> DeskVerdict:
    """The cash-secured-put screen over a stock index: the puts worth selling among its members.

    Every member the data covers goes through the screen's cheap pre-filter (trend, IV
    versus HV, option liquidity, earnings) and, if it passes, the CSP desk; the verdict
    lists the selected puts, best first, and names the recorded screen run.

    Args:
        universe: The index whose members (on the run's date) are screened.
    """
    runner = ctx.deps.desks.get(SCREEN_DESK)
    if runner is None:
        raise ModelRetry("the CSP screen is not available in this session; use another tool")
    return await runner.run(universe, ctx.as_of)


DESK_TOOLS = Toolset.of(
    "desks",
    [
        desk_tool(
            "csp",
            "The cash-secured-put desk: chart, options and research analysts decide whether "
            "to sell a put on a stock, and which one.",
        ),
        desk_tool(
            "trading",
            "The trading desk: four analysts, a bull/bear debate, a trader and a risk judge "
            "decide to BUY, HOLD or SELL a stock, with size, entry, stop and target.",
        ),
        run_csp_screen,
    ],
)
