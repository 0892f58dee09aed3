"""The MCP server: the tool catalogue listed and called through the SDK's low-level
``Server``, served over stdio or streamable HTTP (behind the servers' guard). The run
tools' runs execute in a pool of worker processes (or, embedded and in tests, in this process),
their events streamed back as progress; a worker that dies costs its call only."""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from alphadesk import __version__
from alphadesk.agent.events import BaseEvent, EventSink, ToolStarted
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.mcp_server.calls import ToolCaller
from alphadesk.mcp_server.guards import CallError, Guards
from alphadesk.mcp_server.jobs import pooled_desks
from alphadesk.mcp_server.prompts import Prompts
from alphadesk.mcp_server.resources import Resources
from alphadesk.mcp_server.run_tools import RUN_TOOLS, RunToolDeps
from alphadesk.mcp_server.schemas import mcp_tool
from alphadesk.pipelines.events import DebateMessage, StepFinished, StepStarted
from alphadesk.pool import InProcess, Runs, WorkerDied, WorkerPool
from alphadesk.serving import ServerConfig
from alphadesk.serving.errors import Refusal, clean
from alphadesk.store.redact import redact
from alphadesk.tools.assistant.deps import ChatDeps
from alphadesk.tools.catalog import tool_catalog

__all__ = ["build_server", "serve_http", "serve_stdio"]

logger = logging.getLogger(__name__)

Handler = Callable[..., Awaitable[Any]]

_INSTRUCTIONS = (
    "alphadesk: point-in-time market analysis. Every tool takes an optional as_of "
    "(YYYY-MM-DD); without it, now or the last close the data covers (each result says "
    "which). The run tools (run_csp_desk, run_trading_desk, run_csp_screen, screen, ask, "
    "backtest) each make a recorded run and return its id: read alphadesk://runs/{id} for its "
    "report, result and charts. alphadesk://data/universe lists the symbols."
)


def _describe(event: BaseEvent | str) -> str | None:
    """A progress line for a step of the run (who started or finished, who spoke, which
    tool was called, or what a desk says it did); None for the model calls and usage in
    between."""
    if isinstance(event, str):
        return event
    if isinstance(event, StepStarted):
        return f"{event.agent} started"
    if isinstance(event, StepFinished):
        return f"{event.agent} {event.status}" + (f": {event.reason}" if event.reason else "")
    if isinstance(event, DebateMessage):
        said = "answered the others" if event.part == "rebuttal" else "argued"
        return f"{event.agent} {said} in the {event.debate} debate (round {event.round})"
    if isinstance(event, ToolStarted):
        return f"{event.agent} called {event.tool}"
    return None


def _deps_factory(
    settings: Settings, market: MarketData, runs: Runs
) -> Callable[[EventSink, str | None], ChatDeps]:
    def deps(on_event: EventSink, model: str | None) -> ChatDeps:
        from alphadesk.data.web import web_search
        from alphadesk.portfolio import PaperPortfolio

        return ChatDeps(
            market=market,
            portfolio=PaperPortfolio(settings.store_path),
            desks=pooled_desks(runs, model, on_event),  # an allowed model
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


def _answered(handler: Handler) -> Handler:
    """``handler`` whose errors a client may read: an MCP error's message without secrets
    or paths, and an unexpected failure logged here and told as a generic internal error
    (the SDK would send its text, which names files of this machine: a database that
    would not open, a folder, a library's source)."""

    @functools.wraps(handler)
    async def answered(ctx: ServerRequestContext[Any, Any], params: Any) -> Any:
        try:
            return await handler(ctx, params)
        except MCPError as exc:
            said = clean(exc.error.message)
            if said == exc.error.message:
                raise
            raise MCPError(exc.error.code, said, exc.error.data) from None
        except Exception as exc:
            logger.error("%s failed", getattr(params, "name", None) or "a request", exc_info=exc)
            raise MCPError(
                types.INTERNAL_ERROR,
                f"the server failed on this request ({type(exc).__name__}); its log has the "
                "details: call again, and report it if it fails again",
            ) from None

    return answered


def _tool_handlers(
    settings: Settings, market: MarketData, guards: Guards, runs: Runs
) -> dict[str, Any]:
    """``tools/list`` and ``tools/call``: the catalogue's tools, then the other run tools."""
    catalog = tool_catalog()
    caller = ToolCaller(market, _deps_factory(settings, market, runs), guards)
    deps = RunToolDeps(settings, market, guards, runs)
    listed = [mcp_tool(entry) for entry in catalog] + [t.listed() for t in RUN_TOOLS.values()]

    async def list_tools(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        entry, run_tool = catalog.get(params.name), RUN_TOOLS.get(params.name)
        arguments = params.arguments or {}
        if entry is not None:
            run = functools.partial(caller.call, entry, arguments)
        elif run_tool is not None:
            run = functools.partial(run_tool.call, deps, arguments)
        else:
            raise MCPError(
                types.INVALID_PARAMS,
                f"no tool {params.name[:80]!r}; list the tools (tools/list) for the "
                f"{len(listed)} this server has",
            )
        try:
            return await _with_progress(ctx, run)
        except (CallError, Refusal) as exc:  # it may echo what was sent
            said = exc.said() if isinstance(exc, Refusal) else str(exc)
            return types.CallToolResult(content=[types.TextContent(text=clean(said))],
                                        is_error=True)  # fmt: skip
        except WorkerDied as exc:
            raise MCPError(
                types.INTERNAL_ERROR,
                clean(
                    f"{params.name}: {exc}{f', pid {exc.pid}' if exc.pid else ''}; the run is "
                    "recorded interrupted and the server keeps serving: call again"
                ),
            ) from None

    return {"on_list_tools": _answered(list_tools), "on_call_tool": _answered(call_tool)}


def _resource_handlers(settings: Settings, market: MarketData) -> dict[str, Any]:
    """The runs, evaluations and data universe, and the prompts."""
    resources = Resources(settings, market)
    prompts = Prompts(resources.runs)

    async def list_resources(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=await asyncio.to_thread(resources.listed))

    async def list_templates(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=resources.templates())

    async def read_resource(
        _ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        contents = await asyncio.to_thread(resources.read, str(params.uri))
        return types.ReadResourceResult(contents=contents)

    async def list_prompts(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=prompts.listed())

    async def get_prompt(
        _ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        return await asyncio.to_thread(prompts.get, params.name, params.arguments)

    return {
        "on_list_resources": _answered(list_resources),
        "on_list_resource_templates": _answered(list_templates),
        "on_read_resource": _answered(read_resource),
        "on_list_prompts": _answered(list_prompts),
        "on_get_prompt": _answered(get_prompt),
    }


def build_server(
    settings: Settings, market: MarketData | None = None, runs: Runs | None = None
) -> Server[Any]:
    """The MCP server over every catalogue tool, the run tools, the recorded runs and the
    prompts, with ``market`` (default: the settings'); the run tools' runs execute in ``runs``
    (default: this process)."""
    if market is None:
        from alphadesk.data import build_provider

        market = build_provider(settings)
    guards = Guards(settings)
    models = ", ".join(guards.models.names)
    return Server(
        "alphadesk",
        version=__version__,
        instructions=f"{_INSTRUCTIONS} A run tool's call may name a model among: {models}.",
        **_tool_handlers(settings, market, guards, runs or InProcess(settings, market)),
        **_resource_handlers(settings, market),
    )


def _pool(settings: Settings, workers: int | None) -> WorkerPool | None:
    """``workers`` processes for the run tools' runs, or None: this process runs them."""
    if workers is None:
        return None
    return WorkerPool(settings, workers, max_runs=settings.server.worker_max_runs)


@asynccontextmanager
async def _running(pool: WorkerPool | None) -> AsyncIterator[None]:
    """``pool`` started (its pids said on stderr) for as long as the server serves."""
    if pool is None:
        yield
        return
    await pool.start()
    pids = ", ".join(str(pid) for pid in pool.pids)
    print(f"alphadesk MCP: runs go to {pool.size} worker process"
          f"{'es' if pool.size > 1 else ''} (pid {pids})", file=sys.stderr, flush=True)  # fmt: skip
    try:
        yield
    finally:
        await pool.close()


async def serve_stdio(settings: Settings, workers: int | None = None) -> None:
    """Serve one client on this process's stdin and stdout until it closes them, the
    run tools' runs in ``workers`` processes (None: this one)."""
    from mcp.server.stdio import stdio_server

    pool = _pool(settings, workers)
    server = build_server(settings, runs=pool)
    async with _running(pool), stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http(
    settings: Settings,
    host: str,
    port: int,
    api_key: str | None,
    workers: int | None = None,
    proxies: Sequence[str] = (),
) -> None:
    """Serve streamable HTTP at ``/mcp`` behind the servers' guard (the key off loopback,
    Host names, rate and body limits) on their HTTP server (connection cap, header
    timeout, ``X-Forwarded-For`` only from ``proxies``), the run tools' runs in ``workers``
    processes (None: this one), started and stopped with the server."""
    from alphadesk.serving.guard import Guard
    from alphadesk.serving.http import http_server

    limits = settings.server
    config = ServerConfig(host=host, api_key=api_key, proxies=tuple(proxies),
                          header_timeout_s=limits.header_timeout_s,
                          max_connections=limits.max_connections,
                          max_connections_per_client=limits.max_connections_per_client)  # fmt: skip
    config.check()
    pool = _pool(settings, workers)
    mcp_app = build_server(settings, runs=pool).streamable_http_app(host=host)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            return await mcp_app(scope, receive, send)
        async with _running(pool):  # the workers live as long as the server
            await mcp_app(scope, receive, send)

    http_server(Guard(app, config), config, port).run()
