"""``think_deeply`` and ``web_search``: the deep model, and the web.

``think_deeply`` is one call to the deep tier (the seed's DeepSeek-R1 step) through the
session's :class:`~alphadesk.tools.assistant.deps.Thinker`, within the run's budgets; the
answer is split into REASONING and CONCLUSION. ``web_search`` asks the online provider;
offline, without a key, or for a historical instant it says it is unavailable and why.
"""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from typing import Annotated

from pydantic import Field

from alphadesk.agent import RunContext, tool
from alphadesk.data.errors import DataError
from alphadesk.data.web import WebResult
from alphadesk.tools.assistant.deps import ChatDeps
from alphadesk.tools.common import ToolOutput

__all__ = ["DeepThought", "WebSearchReport", "split_thought", "think_deeply", "web_search"]

_REASONING = re.compile(r"REASONING:\s*(.*?)(?=CONCLUSION:|$)", re.DOTALL | re.IGNORECASE)
_CONCLUSION = re.compile(r"CONCLUSION:\s*(.*)$", re.DOTALL | re.IGNORECASE)
_FRESH = timedelta(days=2)  # the web is "now": older instants would see the future


class DeepThought(ToolOutput):
    """The deep model's reasoning and conclusion."""

    model: str
    reasoning: str
    conclusion: str


def split_thought(text: str) -> tuple[str, str]:
    """REASONING and CONCLUSION of a deep answer (the whole text for a missing part)."""
    reasoning = _REASONING.search(text)
    conclusion = _CONCLUSION.search(text)
    return (
        reasoning.group(1).strip() if reasoning else text.strip(),
        conclusion.group(1).strip() if conclusion else text.strip(),
    )


@tool
async def think_deeply(
    ctx: RunContext[ChatDeps], query: str, context: str | None = None
) -> DeepThought:
    """Deep reasoning on a hard question: a trade decision, a risk, a careful explanation.

    One call to the deep model with the question and the facts gathered so far; returns
    its step-by-step REASONING and its CONCLUSION. It computes nothing: pass the tool
    figures it should reason about in context.

    Args:
        query: The question to think through.
        context: Facts to consider, e.g. market data or positions from other tools.
    """
    thinker = ctx.deps.thinker
    if thinker is None:
        raise DataError("no deep model is configured for think_deeply")
    text = await thinker.think(ctx, query, context)
    reasoning, conclusion = split_thought(text)
    return DeepThought(
        symbol="-",
        as_of=ctx.as_of,
        model=thinker.model_name,
        reasoning=reasoning,
        conclusion=conclusion,
    )


class WebSearchReport(ToolOutput):
    """Web pages about a query, or why the web could not be searched."""

    available: bool
    query: str
    provider: str | None = None
    results: list[WebResult] = Field(default_factory=list)


@tool
async def web_search(
    ctx: RunContext[ChatDeps], query: str, limit: Annotated[int, Field(ge=1, le=10)] = 5
) -> WebSearchReport:
    """Search the web (an online provider) for recent pages: title, address and snippet.

    Only for questions about now: the web shows today's pages, so for a historical
    analysis instant it is unavailable. Offline or without a key it says so
    (available false, the reason in missing).

    Args:
        query: What to search for.
        limit: Most results.
    """
    report = {"symbol": "-", "as_of": ctx.as_of, "query": query}
    web = ctx.deps.web
    if web is None:
        return WebSearchReport(**report, available=False, missing=["no web search provider"])
    if ctx.deps.clock() - ctx.as_of > _FRESH:
        reason = (
            f"web search shows today's web, not the web of {ctx.as_of.date()}: unavailable "
            "for a historical analysis (it would see the future)"
        )
        return WebSearchReport(**report, available=False, missing=[reason])
    try:
        found = await asyncio.to_thread(web.search, query, limit=limit)
    except DataError as exc:
        return WebSearchReport(**report, available=False, provider=web.name, missing=[str(exc)])
    return WebSearchReport(**report, available=True, provider=web.name, results=found.results)
