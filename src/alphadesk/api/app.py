"""The FastAPI application: the same pipelines as the CLI, over HTTP.

Build it with :func:`create_app` and serve it with :func:`alphadesk.api.server.serve`
(``alphadesk serve``, on the servers' HTTP server of :mod:`alphadesk.serving.http`).
Every route calls the pipeline functions the CLI calls; none holds pipeline logic.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request

from alphadesk import __version__
from alphadesk.api import docs, errors
from alphadesk.api.context import ApiContext
from alphadesk.api.models import Health
from alphadesk.api.routes import chat, evals, pipelines, portfolio, runs
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.pool import InProcess, WorkerPool
from alphadesk.serving import ServerConfig
from alphadesk.serving.access import AccessLog
from alphadesk.serving.guard import Guard

__all__ = ["create_app"]

_DESCRIPTION = """Teams of LLM agents that analyse markets. Offline by default: the `rules`
model and the bundled market data need no key and no network.

Errors are `{"error": {"type", "message", "hint"}}`. Streams are server-sent events whose
event name is the event's kind; closing a stream cancels its run."""


def create_app(
    settings: Settings,
    config: ServerConfig | None = None,
    *,
    market: MarketData | None = None,
    pool: WorkerPool | None = None,
) -> FastAPI:
    """The API over ``settings``.

    Args:
        settings: Models, data providers, where runs are stored.
        config: The server's key and limits (default: loopback, no key).
        market: The market data of the server's own process (default: built from the
            settings); the runs use it too when they run in this process.
        pool: The worker processes that run the pipelines (default: ``config.workers`` of
            them, or none: runs in this process). Started and stopped with the app.

    Raises:
        ApiKeyRequired: ``config.host`` is off loopback and there is no key, or the key
            is under 16 characters.
        ValueError: ``config`` asks for fewer than 1 worker.
    """
    config = config or ServerConfig()
    config.check()
    if market is None:
        from alphadesk.data import build_provider

        market = build_provider(settings)
    if pool is None and config.workers is not None:
        pool = WorkerPool(settings, config.workers, max_runs=config.worker_max_runs)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if pool is None:
            yield
            return
        await pool.start()
        try:
            yield
        finally:
            await pool.close()

    app = FastAPI(
        title="alphadesk", version=__version__, description=_DESCRIPTION, lifespan=lifespan,
        docs_url=None, redoc_url=None,
    )  # fmt: skip
    docs.install(app)
    app.state.ctx = ApiContext(
        settings=settings, config=config, market=market, runs=pool or InProcess(settings, market)
    )
    errors.install(app)
    for module in (pipelines, chat, runs, evals, portfolio):
        app.include_router(module.router)
    app.add_api_route("/health", health, methods=["GET"], response_model=Health, tags=["server"])
    app.add_middleware(Guard, config=config)
    app.add_middleware(AccessLog)  # outermost: the guard's refusals are logged too
    return app


async def health(request: Request) -> Any:
    """Version, data providers, the default model and the server's limits."""
    ctx: ApiContext = request.app.state.ctx
    return Health(
        version=__version__,
        providers=list(ctx.settings.data.providers),
        default_model=ctx.default_model,
        models=ctx.models.names,
        auth=ctx.config.api_key is not None,
        max_runs=ctx.config.max_runs,
        runs_active=ctx.slots.active,
        workers=ctx.runs.size if isinstance(ctx.runs, WorkerPool) else 0,
    )
