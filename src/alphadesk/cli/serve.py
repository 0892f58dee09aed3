"""``alphadesk serve``: the HTTP API on uvicorn."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from alphadesk.cli.common import err_console, fail, settings_from

if TYPE_CHECKING:
    from alphadesk.config import Settings

__all__ = ["PROXY", "WORKERS", "proxies", "refuse_unguarded", "serve", "worker_count"]

WORKERS = typer.Option(
    None,
    "--workers",
    help="Worker processes that run the pipelines, off the server's event loop "
    "(default: \\[server] workers, else one per core).",
)

PROXY = typer.Option(
    [],
    "--proxy",
    metavar="ADDRESS",
    help="A reverse proxy's address ('*': any) whose X-Forwarded-For names the client "
    "(repeatable; default \\[server] proxies, else none: the header is ignored).",
)


def proxies(given: list[str], settings: Settings) -> tuple[str, ...]:
    """The proxies a server believes: ``--proxy``, else ``[server] proxies``."""
    return tuple(given or settings.server.proxies)


def worker_count(workers: int | None, settings: Settings) -> int:
    """How many worker processes a server starts: ``--workers``, else ``[server] workers``,
    else one per core; exit (2) when ``--workers`` is below 1."""
    from alphadesk.pool import default_workers

    if workers is not None and workers < 1:
        raise fail(f"--workers must be at least 1, not {workers}",
                   "e.g. --workers 2, or leave it out for one worker per core", 2)  # fmt: skip
    return workers or settings.server.workers or default_workers()


def refuse_unguarded(host: str, key: str | None) -> None:
    """Exit (2) before binding ``host`` off loopback without an API key, or with a key
    under 16 characters: the API, and the web UI that calls it with the key, must not be
    open to the network."""
    from alphadesk.serving import ApiKeyRequired, ServerConfig

    try:
        ServerConfig(host=host, api_key=key).check()
    except ApiKeyRequired as exc:
        raise fail(str(exc), "e.g. export ALPHADESK_API_KEY=$(openssl rand -hex 32)", 2) from None


def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", help="Bind address; off loopback needs an API key."),
    port: int = typer.Option(8000, min=1, max=65535, help="TCP port."),
    max_runs: int = typer.Option(8, min=1, help="Runs at the same time; one more gets 429."),
    rate: int = typer.Option(120, min=1, help="Requests per client per minute."),
    max_body: int = typer.Option(64 * 1024, min=1024, help="Largest request body, in bytes."),
    allow_model: list[str] = typer.Option(
        [], "--allow-model", help="A model string requests may ask for (repeatable)."
    ),
    workers: int | None = WORKERS,
    proxy: list[str] = PROXY,
    log_level: str = typer.Option("info", help="uvicorn's log level."),
    temporal: str | None = typer.Option(
        None,
        "--temporal",
        metavar="ADDRESS",
        help="Send desk runs to the workers of this Temporal server (they outlive the API).",
    ),
) -> None:
    """Serve the HTTP API (OpenAPI page at /docs). Offline by default: model `rules`."""
    from alphadesk.api.server import serve as run
    from alphadesk.serving import ServerConfig

    settings = settings_from(ctx)
    workers = worker_count(workers, settings)
    key = settings.api_key.get_secret_value() if settings.api_key else None
    refuse_unguarded(host, key)
    config = ServerConfig(host=host, api_key=key or None, max_body_bytes=max_body,
                          rate_per_minute=rate, max_runs=max_runs,
                          models=frozenset(allow_model), temporal=temporal, workers=workers,
                          worker_max_runs=settings.server.worker_max_runs,
                          proxies=proxies(proxy, settings),
                          header_timeout_s=settings.server.header_timeout_s,
                          max_connections=settings.server.max_connections,
                          max_connections_per_client=(
                              settings.server.max_connections_per_client))  # fmt: skip
    if temporal is not None:
        try:
            import temporalio  # noqa: F401 - checked now, used by the first desk run
        except ImportError:
            raise fail("Temporal is not installed", "pip install 'alphadesk[temporal]'") from None
    auth = "API key required" if key else "no API key (loopback only)"
    err_console.print(f"[dim]alphadesk API on http://{host}:{port} ({auth}, {workers} worker "
                      f"process{'es' if workers > 1 else ''}); docs at /docs[/]")  # fmt: skip
    run(settings, config, port, log_level=log_level)
