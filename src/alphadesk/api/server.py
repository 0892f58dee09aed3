"""Serving the API with uvicorn (``alphadesk serve``)."""

from __future__ import annotations

import copy
from typing import Any

import uvicorn
from uvicorn.config import LOGGING_CONFIG

from alphadesk.api.app import create_app
from alphadesk.api.config import ApiConfig
from alphadesk.api.middleware import ACCESS_LOGGER
from alphadesk.config import Settings

__all__ = ["build_server", "log_config", "serve"]


def log_config(log_level: str) -> dict[str, Any]:
    """uvicorn's logging, plus alphadesk's own loggers on stderr through the redacting
    filter: the access log at ``log_level``, the rest of the library from warnings up.
    (uvicorn's own access log is off: ours replaces it, without query secrets.)"""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["filters"] = {"redact": {"()": "alphadesk.store.redact.RedactingFilter"}}
    config["formatters"]["alphadesk"] = {
        "format": "%(asctime)s %(levelname)s %(name)s: %(message)s"
    }
    config["handlers"]["alphadesk"] = {
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
        "formatter": "alphadesk",
        "filters": ["redact"],
    }
    for handler in config["handlers"].values():
        handler.setdefault("filters", ["redact"])
    config["loggers"]["alphadesk"] = {
        "handlers": ["alphadesk"], "level": "WARNING", "propagate": False
    }  # fmt: skip
    config["loggers"][ACCESS_LOGGER] = {"level": log_level.upper()}
    return config


def build_server(
    settings: Settings, config: ApiConfig, port: int, *, log_level: str = "info"
) -> uvicorn.Server:
    """A uvicorn server for the API, not yet started. Refuses (ApiKeyRequired) to listen
    off loopback without a key."""
    app = create_app(settings, config)
    return uvicorn.Server(
        uvicorn.Config(
            app,
            host=config.host,
            port=port,
            log_level=log_level,
            log_config=log_config(log_level),
            access_log=False,
        )
    )


def serve(settings: Settings, config: ApiConfig, port: int, *, log_level: str = "info") -> None:
    build_server(settings, config, port, log_level=log_level).run()
