"""Connections before they are requests: a server keeps at most ``max_connections`` open,
at most ``max_connections_per_client`` of them from one address (a configured proxy's
excepted: it carries many clients), and gives each ``header_timeout_s`` to send its
request's headers. uvicorn alone keeps a connection whose headers never end (or that
never sends any) open for good, and the guard (an ASGI middleware) only ever sees
requests whose headers have ended: a client could hold every socket of the server without
being counted once."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from uvicorn.protocols.http.auto import AutoHTTPProtocol

from alphadesk.serving.access import ACCESS_LOGGER
from alphadesk.serving.config import ServerConfig
from alphadesk.serving.errors import error_json

__all__ = ["guarded_protocol"]

logger = logging.getLogger(ACCESS_LOGGER)

_REASONS = {408: b"Request Timeout", 503: b"Service Unavailable"}


def _answer(transport: asyncio.Transport, status: int, type_: str, message: str,
            hint: str) -> None:  # fmt: skip
    """Write the typed JSON error and close: no request was read, so none is answered."""
    body = json.dumps(error_json(type_, message, hint), separators=(",", ":")).encode()
    head = (b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n") % (status, _REASONS[status], len(body))  # fmt: skip
    transport.write(head + body)
    transport.close()


_Base: Any = AutoHTTPProtocol  # httptools when installed, else h11


class _GuardedProtocol(_Base):
    """The base protocol, with a connection cap and a header-read timeout (set on the
    subclass :func:`guarded_protocol` makes)."""

    header_timeout_s: float = 10.0
    max_connections: int = 256
    max_connections_per_client: int = 32
    proxies: tuple[str, ...] = ()
    _timer: asyncio.TimerHandle | None = None
    _awaited: object = None  # the request cycle current when the wait began
    _begun = False  # bytes of the awaited request have come

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            logger.warning("%s refused: %d connections open", _peer(self), self.max_connections)
            _answer(transport, 503, "too_many_connections",
                    f"the server has its limit of {self.max_connections} connections open",
                    "retry in a moment")  # fmt: skip
            return
        host = self.client[0] if self.client else None
        if host is not None and "*" not in self.proxies and host not in self.proxies:
            mine = sum(1 for c in self.connections if c.client and c.client[0] == host)
            if mine > self.max_connections_per_client:
                logger.warning("%s refused: %d connections open from it", _peer(self),
                               self.max_connections_per_client)  # fmt: skip
                _answer(transport, 503, "too_many_connections",
                        f"this client has its limit of {self.max_connections_per_client} "
                        "connections open",
                        "close idle connections or retry in a moment")  # fmt: skip
                return
        self._await_headers()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._timer is None:
            return
        if self.cycle is not self._awaited:
            self._timer.cancel()  # a request's headers have ended
            self._timer = None
        else:
            self._begun = True

    def on_response_complete(self) -> None:
        super().on_response_complete()
        idle = self.cycle is None or self.cycle.response_complete  # no pipelined request
        if idle and not self.transport.is_closing():
            self._await_headers()  # the next request's headers, from now

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        super().connection_lost(exc)

    def _await_headers(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._awaited, self._begun = self.cycle, False
        self._timer = self.loop.call_later(self.header_timeout_s, self._headers_late)

    def _headers_late(self) -> None:
        self._timer = None
        if self.cycle is not self._awaited or self.transport.is_closing():
            return
        if not self._begun:  # an idle connection: closed as keep-alive closes it, unanswered
            self.transport.close()
            return
        logger.warning("%s closed: no request headers within %g s", _peer(self),
                       self.header_timeout_s)  # fmt: skip
        _answer(self.transport, 408, "header_timeout",
                f"the request's headers did not arrive within {self.header_timeout_s:g} s",
                "send the whole request at once")  # fmt: skip


def guarded_protocol(config: ServerConfig) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol with ``config``'s connection caps and header timeout, for
    ``uvicorn.Config(http=...)``."""
    limits = {
        "header_timeout_s": config.header_timeout_s,
        "max_connections": config.max_connections,
        "max_connections_per_client": config.max_connections_per_client,
        "proxies": config.proxies,
    }
    protocol: type[asyncio.Protocol] = type("GuardedProtocol", (_GuardedProtocol,), limits)
    return protocol


def _peer(protocol: Any) -> str:
    host, port = protocol.client or ("-", 0)
    return f"{host}:{port}"
