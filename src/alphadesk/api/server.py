"""Serving the API with uvicorn (``alphadesk serve``)."""

from __future__ import annotations

import uvicorn

from alphadesk.api.app import create_app
from alphadesk.api.config import ApiConfig
from alphadesk.config import Settings

__all__ = ["build_server", "serve"]


def build_server(
    settings: Settings, config: ApiConfig, port: int, *, log_level: str = "info"
) -> uvicorn.Server:
    """A uvicorn server for the API, not yet started. Refuses (ApiKeyRequired) to listen
    off loopback without a key."""
    app = create_app(settings, config)
    return uvicorn.Server(
        uvicorn.Config(app, host=config.host, port=port, log_level=log_level, access_log=False)
    )


def serve(settings: Settings, config: ApiConfig, port: int, *, log_level: str = "info") -> None:
    build_server(settings, config, port, log_level=log_level).run()
