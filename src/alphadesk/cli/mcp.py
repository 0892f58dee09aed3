"""``alphadesk mcp``: every tool and desk as a Model Context Protocol server."""

from __future__ import annotations

from typing import Literal

import typer

from alphadesk.cli.common import err_console, settings_from
from alphadesk.cli.serve import PROXY, WORKERS, proxies, refuse_unguarded, worker_count

__all__ = ["mcp"]


def mcp(
    ctx: typer.Context,
    transport: Literal["stdio", "http"] = typer.Option(
        "stdio", help="stdio (a client starts this command) or streamable HTTP."
    ),
    host: str = typer.Option("127.0.0.1", help="HTTP bind address; off loopback needs a key."),
    port: int = typer.Option(8765, min=1, max=65535, help="HTTP port."),
    allow_model: list[str] = typer.Option(
        [],
        "--allow-model",
        metavar="MODEL",
        help="A model string a client may ask a desk to run with (repeatable); rules and "
        "the configured models always are.",
    ),
    workers: int | None = WORKERS,
    proxy: list[str] = PROXY,
) -> None:
    """Serve every tool and desk over MCP (stdio by default). Offline by default: model `rules`."""
    from alphadesk.mcp_server import serve_http, serve_stdio

    settings = settings_from(ctx)
    count = worker_count(workers, settings)
    if allow_model:
        allowed = settings.mcp.model_copy(update={"models": [*settings.mcp.models, *allow_model]})
        settings = settings.model_copy(update={"mcp": allowed})
    if transport == "stdio":
        import anyio

        anyio.run(serve_stdio, settings, count)
        return
    key = settings.api_key.get_secret_value() if settings.api_key else None
    refuse_unguarded(host, key)
    auth = "API key required" if key else "no API key (loopback only)"
    err_console.print(f"[dim]alphadesk MCP on http://{host}:{port}/mcp ({auth})[/]")
    serve_http(settings, host, port, key or None, count, proxies(proxy, settings))
