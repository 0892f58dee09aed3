"""The run tools that are not catalogue tools (a run tool's call makes a recorded run):
``screen`` (the CSP screen), ``fund`` (the trading desk on many names, then the portfolio
manager on one book) and ``ask`` (the assistant), run through the same pipelines and
runner as the CLI and the HTTP API, in the server's worker processes
(:mod:`alphadesk.serving.jobs`), and ``backtest`` (:mod:`.backtest`, in its sandbox). Each
takes a pydantic model of arguments (its input schema) and returns a model (its output
schema) naming the recorded run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date
from functools import partial
from typing import Any

from mcp import types
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from alphadesk.agents.csp.models import CspConstraints
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.data.errors import DataError
from alphadesk.data.symbols import InvalidSymbol
from alphadesk.mcp_server.backtest import BacktestArgs, BacktestOutcome, run_backtest
from alphadesk.mcp_server.calls import Progress, content_of, instant, problems
from alphadesk.mcp_server.guards import CallError, Guards
from alphadesk.mcp_server.schemas import MODEL_SCHEMA
from alphadesk.pipelines.assistant.models import ChatResult
from alphadesk.pipelines.fund.models import FundResult
from alphadesk.pipelines.models import Depth
from alphadesk.pipelines.screen.models import ScreenCounts
from alphadesk.pipelines.screen.prefilter import ScreenCheck
from alphadesk.pool import Runs
from alphadesk.pool.jobs import ask
from alphadesk.portfolio.models import ACCOUNT_PATTERN
from alphadesk.serving import jobs
from alphadesk.tools.assistant.deps import DeskVerdict

__all__ = ["RUN_TOOLS", "FundArgs", "RunTool", "RunToolDeps", "ScreenOutcome"]

_AS_OF = Field(
    None,
    description="The close to analyse at (YYYY-MM-DD); nothing known after it is used. "
    "Default: now, or the last close the data covers.",
)
_MODEL = Field(None, description=MODEL_SCHEMA["description"])


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScreenArgs(_Args):
    """A CSP screen: a cheap pre-filter, then the CSP desk on the survivors, best first."""

    symbols: list[str] | None = Field(
        None, min_length=1, max_length=100, description="Default: the data's whole universe."
    )
    as_of: date | None = _AS_OF
    model: str | None = _MODEL
    depth: Depth = "quick"
    concurrency: int = Field(2, ge=1, le=8, description="Desk runs at the same time.")
    constraints: CspConstraints = Field(
        default_factory=CspConstraints, description="The put that may be sold."
    )


class ScreenOutcome(BaseModel):
    """What a screen found: the desk's verdicts best first, and what the pre-filter
    turned away. The whole screen is the recorded run ``run_id``; each verdict names the
    desk's own run."""

    run_id: str | None
    as_of: str
    counts: ScreenCounts
    candidates: list[DeskVerdict] = Field(description="The desk's verdicts, best first.")
    filtered: list[ScreenCheck] = Field(description="Turned away before any model call.")
    errors: list[ScreenCheck] = Field(description="Symbols whose screening failed.")


class FundArgs(_Args):
    """One book over many names: the trading desk on each, then the portfolio manager's
    target weights and orders from the paper account's holdings and cash."""

    symbols: list[str] | None = Field(
        None, min_length=1, max_length=100, description="The names; or give universe."
    )
    universe: str | None = Field(
        None, max_length=24, description="Every member of an index instead (e.g. dow30)."
    )
    as_of: date | None = _AS_OF
    model: str | None = _MODEL
    depth: Depth = "standard"
    account: str = Field("paper", pattern=ACCOUNT_PATTERN, description="The paper account.")


class AskArgs(_Args):
    """One question to the assistant."""

    question: str = Field(min_length=1, max_length=4_000, description="e.g. how does NVDA look?")
    session_id: str | None = Field(
        None,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="Continue this conversation (a previous answer's session_id); "
        "default: a new one.",
    )
    as_of: date | None = _AS_OF
    model: str | None = _MODEL


@dataclass(frozen=True)
class RunToolDeps:
    """What the run tools run with: the settings, the market (to check a call's symbols
    and date), the server's guards, and where their runs execute."""

    settings: Settings
    market: MarketData
    guards: Guards
    runs: Runs


@dataclass(frozen=True)
class RunTool:
    """An MCP tool that makes a recorded run: its arguments, its result and how it runs."""

    name: str
    description: str
    arguments: type[BaseModel]
    output: type[BaseModel]
    run: Callable[[RunToolDeps, Any, Progress], Awaitable[BaseModel]]

    def listed(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=f"runs/{self.name}",
            description=self.description,
            input_schema=self.arguments.model_json_schema(),
            output_schema=self.output.model_json_schema(mode="serialization"),
            annotations=types.ToolAnnotations(read_only_hint=False),
        )

    async def call(
        self, deps: RunToolDeps, arguments: dict[str, Any], sink: Progress
    ) -> types.CallToolResult:
        """Run the tool on ``arguments`` within the server's guards; a mistake the client
        can fix raises :class:`CallError`."""
        try:
            args = self.arguments.model_validate(arguments)
        except ValidationError as exc:
            hint = "; dates are YYYY-MM-DD" if "date" in str(exc) else ""
            raise CallError(f"invalid arguments for {self.name}: {problems(exc)}{hint}") from None
        async with deps.guards.run_call():
            try:
                value = await self.run(deps, args, sink)
            except (DataError, InvalidSymbol) as exc:
                raise CallError(f"{self.name}: {exc}") from None
        content, structured = content_of(value)
        run_id = getattr(value, "run_id", None)
        if run_id:
            content.append(types.TextContent(text=f"Recorded as run {run_id}: "
                                                  f"alphadesk://runs/{run_id}"))  # fmt: skip
        return types.CallToolResult(content=content, structured_content=structured)


async def _screen(deps: RunToolDeps, args: ScreenArgs, sink: Progress) -> ScreenOutcome:
    from alphadesk.pipelines.assistant.desks import csp_verdict
    from alphadesk.pipelines.screen.models import ScreenRequest

    model = deps.guards.model(args.model)
    universe = jobs.universe(deps.market, args.symbols)
    limit = deps.settings.mcp.max_symbols
    if len(universe) > limit:
        raise CallError(
            f"{len(universe)} symbols to screen, the server's limit is {limit} a call "
            "([mcp] max_symbols); pass up to that many symbols"
        )
    at, _ = instant(deps.market, args.as_of, universe)
    order = ScreenRequest(symbols=universe, dates=[at], depth=args.depth, model=model,
                          constraints=args.constraints)  # fmt: skip
    job = partial(jobs.screen, order=order, concurrency=args.concurrency)
    history = await deps.runs.call(job, sink)
    screen = history.screens[0]
    return ScreenOutcome(
        run_id=history.run_id,
        as_of=screen.as_of.isoformat(),
        counts=history.counts,
        candidates=[csp_verdict(result) for result in screen.results],
        filtered=screen.filtered,
        errors=screen.errors,
    )


async def _fund(deps: RunToolDeps, args: FundArgs, sink: Progress) -> FundResult:
    import asyncio

    from alphadesk.data.symbols import normalize_symbol
    from alphadesk.pipelines.fund.book import fund_request
    from alphadesk.portfolio import AccountNotFound

    model = deps.guards.model(args.model)
    symbols = [normalize_symbol(s) for s in args.symbols or []]
    at, _ = instant(deps.market, args.as_of, symbols)
    try:
        request = await asyncio.to_thread(
            fund_request, deps.market, deps.settings.store_path, at, symbols=symbols,
            universe=args.universe, account=args.account, depth=args.depth,
        )  # fmt: skip
    except (AccountNotFound, ValueError) as exc:  # no data: RunTool.call says so
        raise CallError(f"fund: {exc}") from None
    limit = deps.settings.mcp.max_symbols
    if len(request.symbols) > limit:
        raise CallError(
            f"{len(request.symbols)} names in the book, the server's limit is {limit} a call "
            "([mcp] max_symbols); pass up to that many symbols"
        )
    result: FundResult = await deps.runs.run("fund", request, sink, model=model)
    return result


async def _ask(deps: RunToolDeps, args: AskArgs, sink: Progress) -> ChatResult:
    from alphadesk.pipelines.assistant import ChatRequest

    model = deps.guards.model(args.model)
    at = None if args.as_of is None else instant(deps.market, args.as_of, [])[0]
    question = ChatRequest(question=args.question, session_id=args.session_id, as_of=at)
    answer: ChatResult = await deps.runs.call(partial(ask, question=question, model=model), sink)
    return answer


async def _backtest(deps: RunToolDeps, args: BacktestArgs, sink: Progress) -> BacktestOutcome:
    return await run_backtest(deps.settings, deps.market, args, sink)


RUN_TOOLS: dict[str, RunTool] = {
    tool.name: tool
    for tool in (
        RunTool(
            "screen",
            "Screen stocks for cash-secured puts: cheap trend, volatility, liquidity and "
            "earnings checks first, then the CSP desk on the survivors; the verdicts best "
            "first, each naming its recorded run.",
            ScreenArgs,
            ScreenOutcome,
            _screen,
        ),
        RunTool(
            "fund",
            "Run one book over many names: the trading desk decides BUY, HOLD or SELL on "
            "each, then a portfolio manager sets each name's target weight (with its reason) "
            "within the book's limits and the paper account's cash, and the orders that reach "
            "them; each desk and the fund are recorded runs (alphadesk portfolio follow "
            "RUN_ID places the orders).",
            FundArgs,
            FundResult,
            _fund,
        ),
        RunTool(
            "ask",
            "Ask alphadesk's assistant a market question in plain words; it picks the tools "
            "(and desks) to answer from computed numbers, and every number it states is "
            "checked against them. Continue a conversation with session_id.",
            AskArgs,
            ChatResult,
            _ask,
        ),
        RunTool(
            "backtest",
            "Backtest a strategy on one symbol's daily bars (next-open fills, costs, whole "
            "shares): a built-in one by name, or the code of a backtrader Strategy, checked "
            "and run in the sandbox. The run is recorded with its equity and drawdown charts.",
            BacktestArgs,
            BacktestOutcome,
            _backtest,
        ),
    )
}
