"""What the assistant's tools need besides market data: the paper portfolio, the deep
thinker, the desks and the web. The pipeline fills it; tools only read it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel, Field

from alphadesk.agent import RunContext
from alphadesk.data.base import Clock, utc_now
from alphadesk.data.web import WebSearch
from alphadesk.portfolio import DEFAULT_ACCOUNT, PaperPortfolio
from alphadesk.tools.deps import ToolDeps

__all__ = ["SCREEN_DESK", "ChatDeps", "DeskRunner", "DeskVerdict", "Thinker"]

SCREEN_DESK = "csp_screen"  # the CSP screen's runner in ``ChatDeps.desks``


class DeskVerdict(BaseModel):
    """What a desk decided about a symbol, in short, with its recorded run."""

    desk: str
    symbol: str
    decision: str = Field(description="e.g. select, reject, buy, hold, failed.")
    summary: str = Field(description="The decision and its main reason, in a sentence or two.")
    details: dict[str, Any] = Field(default_factory=dict, description="Key figures.")
    run_id: str | None = Field(None, description="`alphadesk runs show RUN_ID` for the rest.")


class DeskRunner(Protocol):
    """A whole desk (a pipeline of agents) behind one call."""

    async def run(self, symbol: str, as_of: datetime) -> DeskVerdict: ...


class Thinker(Protocol):
    """One call to the deep model: the raw text (REASONING: ... CONCLUSION: ...)."""

    @property
    def model_name(self) -> str: ...

    async def think(self, ctx: RunContext[Any], query: str, context: str | None) -> str: ...


@dataclass(frozen=True)
class ChatDeps(ToolDeps):
    """Dependencies of the assistant's tools.

    Attributes:
        portfolio: The paper portfolio ``get_positions`` reads (None: no portfolio).
        account: The paper account.
        thinker: The deep model behind ``think_deeply`` (None: unavailable).
        desks: Desk name -> runner, for the desk tools.
        web: The web search provider (None: unavailable).
        clock: Now, to tell a live question from a historical one.
    """

    portfolio: PaperPortfolio | None = None
    account: str = DEFAULT_ACCOUNT
    thinker: Thinker | None = None
    desks: Mapping[str, DeskRunner] = field(default_factory=dict)
    web: WebSearch | None = None
    clock: Clock = utc_now
