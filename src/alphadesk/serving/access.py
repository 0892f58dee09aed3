"""The access log: one line per request (client, method, path, status, duration) through
``logging``, never a secret: headers are not logged, and the path and query string go
through the one redaction the stores use.

``alphadesk serve`` shows it on stderr at ``--log-level info``; it is the logger
``alphadesk.api.access``, so an embedding application routes it where it likes. The
record also carries the fields as attributes (``client``, ``method``, ``path``,
``status``, ``duration_ms``) for structured handlers. Connections cut before they were
requests (:mod:`.connections`: headers too slow, one over the cap) are warnings on the same
logger.
"""

from __future__ import annotations

import logging
import time
from urllib.parse import unquote_plus

from alphadesk.serving.guard import App, Message, Receive, Scope, Send
from alphadesk.store.redact import redact

__all__ = ["ACCESS_LOGGER", "AccessLog"]

ACCESS_LOGGER = "alphadesk.api.access"

logger = logging.getLogger(ACCESS_LOGGER)

_MAX_PATH = 256


class AccessLog:
    """Logs every HTTP request when its response has ended (a stream: when it closed)."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not logger.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), 500  # no answer sent: the server's 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            _log(scope, status, (time.perf_counter() - started) * 1000)


def _log(scope: Scope, status: int, duration_ms: float) -> None:
    host, port = scope.get("client") or ("-", 0)
    client = f"{host}:{port}"
    method = str(scope.get("method", "-"))
    path = redact(_target(scope))
    if len(path) > _MAX_PATH:  # a client's 10,000-character id is not worth a log line
        path = path[:_MAX_PATH] + "…"
    fields = {"client": client, "method": method, "path": path, "status": status,
              "duration_ms": round(duration_ms, 1)}  # fmt: skip
    logger.info("%s %s %s %d %.1f ms", client, method, path, status, duration_ms, extra=fields)


def _target(scope: Scope) -> str:
    """The path and the query string, decoded (as the routes read them)."""
    path = str(scope.get("path", ""))
    query = unquote_plus((scope.get("query_string") or b"").decode("latin-1"))
    return f"{path}?{query}" if query else path
