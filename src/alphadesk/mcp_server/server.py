"""The MCP server: the tool catalogue listed and called through the SDK's low-level
``Server``, served over stdio or streamable HTTP (behind the HTTP API's guard)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from alphadesk import __version__
from alphadesk.agent.events import BaseEvent, EventSink, ToolStarted
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.mcp_server.calls import CallError, ToolCaller
from alphadesk.mcp_server.schemas import mcp_tool
from alphadesk.pipelines.events import DebateMessage, StepFinished, StepStarted
from alphadesk.store.redact import redact
from alphadesk.tools.assistant.deps import ChatDeps
from alphadesk.tools.catalog import tool_catalog

__all__ = ["build_server", "serve_http", "serve_stdio"]

_INSTRUCTIONS = (
    "alphadesk: point-in-time market analysis. Every tool takes an optional as_of "
    "(YYYY-MM-DD); without it, now or the last close the data covers (each result says "
    "which). run_csp_desk and run_trading_desk run a whole desk of agents, record the run "
    "and return its id."
)


def _describe(event: BaseEvent) -> str | None:
    """A progress line for a step of the run (who started or finished, who spoke, which
    tool was called); None for the model calls and usage in between."""
    if isinstance(event, StepStarted):
        return f"{event.agent} started"
    if isinstance(event, StepFinished):
        return f"{event.agent} {event.status}" + (f": {event.reason}" if event.reason else "")
    if isinstance(event, DebateMessage):
        return f"{event.agent} spoke in the {event.debate} debate (round {event.round})"
    if isinstance(event, ToolStarted):
        return f"{event.agent} called {event.tool}"
    return None


def _deps_factory(settings: Settings, market: MarketData) -> Callable[[EventSink], ChatDeps]:
    def deps(on_event: EventSink) -> ChatDeps:
        from alphadesk.data.web import web_search
        from alphadesk.pipelines.assistant.desks import desk_runners
        from alphadesk.store.portfolio import PaperPortfolio

        return ChatDeps(
            market=market,
            portfolio=PaperPortfolio(settings.store_path),
            desks=desk_runners(settings, market, None, on_event),  # the settings' models only
            web=web_search(),
        )

    return deps


async def _with_progress(
    ctx: ServerRequestContext[Any, Any], run: Callable[[EventSink], Any]
) -> Any:
    """Await ``run(sink)``, sending each event the sink gets as a progress notification
    (a no-op for the SDK when the client sent no progress token)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[BaseEvent | None] = asyncio.Queue()  # None: the run is over

    def sink(event: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, event)  # events may come from threads

    async def forward() -> None:
        count = 0
        while (event := await queue.get()) is not None:
            message = _describe(event)
            if message is not None:
                count += 1
                await ctx.session.report_progress(count, None, redact(message))

    forwarder = asyncio.create_task(forward())
    try:
        result = await run(sink)
    except BaseException:
        forwarder.cancel()
        raise
    await asyncio.sleep(0)  # events sent from threads are queued first
    queue.put_nowait(None)
    await forwarder  # every step is reported before the result
    return result


def build_server(settings: Settings, market: MarketData | None = None) -> Server[Any]:
    """The MCP server over every catalogue tool, with ``market`` (default: the settings')."""
    if market is None:
        from alphadesk.data import build_provider

        market = build_provider(settings)
    catalog = tool_catalog()
    caller = ToolCaller(market, _deps_factory(settings, market))
    listed = [mcp_tool(entry) for entry in catalog]

    async def list_tools(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        entry = catalog.get(params.name)
        if entry is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"no tool {params.name[:80]!r}; list the tools (tools/list) for the "
                f"{len(catalog)} this server has",
            )
        arguments = params.arguments or {}
        try:
            return await _with_progress(ctx, lambda sink: caller.call(entry, arguments, sink))
        except CallError as exc:
            said = types.TextContent(text=redact(str(exc)))  # it may echo what was sent
            return types.CallToolResult(content=[said], is_error=True)

    return Server(
        "alphadesk",
        version=__version__,
        instructions=_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(settings: Settings) -> None:
    """Serve one client on this process's stdin and stdout until it closes them."""
    from mcp.server.stdio import stdio_server

    server = build_server(settings)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http(settings: Settings, host: str, port: int, api_key: str | None) -> None:
    """Serve streamable HTTP at ``/mcp`` behind the HTTP API's guard (the key off
    loopback, Host names, rate and body limits)."""
    import uvicorn

    from alphadesk.api.config import ApiConfig
    from alphadesk.api.guard import Guard
    from alphadesk.api.server import log_config

    config = ApiConfig(host=host, api_key=api_key)
    config.check()
    app = build_server(settings).streamable_http_app(host=host)
    guarded = Guard(app, config)
    uvicorn.run(guarded, host=host, port=port, log_config=log_config("info"), access_log=False)
