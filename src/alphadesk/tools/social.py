"""Social-media sentiment: what the crowd says about a stock, as known at the run's instant.

No data provider of alphadesk serves social-media posts yet (none is reachable offline), so
the tool answers ``available: false`` with the reason, and an analyst weighs the gap
instead of assuming a neutral crowd. The output has the fields a provider would fill.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from alphadesk.agent import RunContext, Toolset, tool
from alphadesk.tools.common import ToolOutput, absent
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.once import once_per_step

__all__ = ["SOCIAL_TOOLS", "SocialSentimentReport", "get_social_sentiment"]

_NO_PROVIDER = (
    "social media: no configured provider serves social-media posts "
    "(none is available offline); the crowd's mood is unknown, not neutral"
)


class SocialSentimentReport(ToolOutput):
    """The crowd's mood about a stock over a window."""

    available: bool
    days: int = Field(description="Look-back window in days before as_of.")
    posts: int = Field(0, description="Posts in the window.")
    bullish_share: float | None = Field(None, description="Share of posts tagged bullish, 0-1.")
    mood: Literal["bullish", "bearish", "mixed", "quiet"] | None = None


@tool
@once_per_step
async def get_social_sentiment(
    ctx: RunContext[ToolDeps], symbol: str, days: Annotated[int, Field(ge=1, le=30)] = 7
) -> SocialSentimentReport:
    """The social-media mood about a stock: how many posts, and how bullish.

    Posts published before the run's instant. available is false, with the reason in
    missing, when no provider serves social-media data (the case offline).

    Args:
        symbol: Ticker, e.g. "MSFT".
        days: How many days back to look.
    """
    return absent(SocialSentimentReport, ctx, symbol, _NO_PROVIDER, days=days)


SOCIAL_TOOLS = Toolset.of("social", [get_social_sentiment])
