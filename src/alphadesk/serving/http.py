"""The HTTP server both front ends run on: uvicorn, with the connection guard
(:mod:`.connections`), proxy headers only from the configured proxies, and alphadesk's
logging (access log and library warnings through the redacting filter)."""

from __future__ import annotations

import copy
from typing import Any

import uvicorn
from uvicorn.config import LOGGING_CONFIG

from alphadesk.serving.access import ACCESS_LOGGER
from alphadesk.serving.config import ServerConfig
from alphadesk.serving.connections import guarded_protocol

__all__ = ["http_server", "log_config"]


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


def http_server(
    app: Any,
    config: ServerConfig,
    port: int,
    *,
    log_level: str = "info",
    logging: bool = True,
) -> uvicorn.Server:
    """A uvicorn server for ``app`` on ``config.host:port`` (0: a free port), not yet
    started.

    ``X-Forwarded-For`` names the client only on a connection from one of
    ``config.proxies`` (uvicorn believes it from loopback by default: any local process,
    or a web page's request relayed by one, would choose its own rate-limit bucket and
    the access log's client). ``logging=False`` leaves the process's logging as it is
    (an embedding application's, the tests').

    Raises:
        ApiKeyRequired: off loopback without a key, or a key too short.
    """
    config.check()
    return uvicorn.Server(
        uvicorn.Config(
            app,
            host=config.host,
            port=port,
            log_level=log_level,
            log_config=log_config(log_level) if logging else None,
            access_log=False,
            http=guarded_protocol(config),
            proxy_headers=bool(config.proxies),
            forwarded_allow_ips=list(config.proxies) or None,
        )
    )
