"""Serving the API (``alphadesk serve``) on the servers' HTTP server."""

from __future__ import annotations

import uvicorn

from alphadesk.api.app import create_app
from alphadesk.config import Settings
from alphadesk.serving import ServerConfig
from alphadesk.serving.http import http_server

__all__ = ["build_server", "serve"]


def build_server(
    settings: Settings, config: ServerConfig, port: int, *, log_level: str = "info"
) -> uvicorn.Server:
    """A uvicorn server for the API, not yet started. Refuses (ApiKeyRequired) to listen
    off loopback without a key, or with a key under 16 characters."""
    return http_server(create_app(settings, config), config, port, log_level=log_level)


def serve(settings: Settings, config: ServerConfig, port: int, *, log_level: str = "info") -> None:
    build_server(settings, config, port, log_level=log_level).run()
