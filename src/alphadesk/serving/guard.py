"""The server's guard, in front of every route: a per-client rate limit, the Host allow-list
of a keyless server, the API key and a request body size limit. A plain ASGI middleware,
so streams pass through untouched."""

from __future__ import annotations

import hmac
import json
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from alphadesk.serving.config import ServerConfig
from alphadesk.serving.errors import error_json

__all__ = ["Guard", "RateLimiter", "loopback_host"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

_MAX_CLIENTS = 10_000  # buckets kept before idle ones are dropped
# A keyless server answers only requests addressed to this machine by name: a web page the
# user visits can point its own domain at 127.0.0.1 (DNS rebinding), but its requests still
# carry that domain in Host.
_LOOPBACK_HOST = re.compile(rb"(localhost|127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?", re.IGNORECASE)


def loopback_host(header: bytes | None) -> bool:
    """Whether a Host header names this machine: localhost, 127.0.0.1 or [::1], with or
    without a port."""
    return header is not None and _LOOPBACK_HOST.fullmatch(header.strip()) is not None


class RateLimiter:
    """A token bucket per client: ``per_minute`` requests a minute, bursts up to that many."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity, self.rate = float(per_minute), per_minute / 60.0
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, updated)

    def allow(self, client: str) -> float:
        """0 when ``client`` may go on, else the seconds until it may."""
        now = self._clock()
        tokens, updated = self._buckets.get(client, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - updated) * self.rate)
        if len(self._buckets) > _MAX_CLIENTS:
            self._forget_idle(now)
        if tokens < 1.0:
            self._buckets[client] = (tokens, now)
            return (1.0 - tokens) / self.rate if self.rate else 60.0
        self._buckets[client] = (tokens - 1.0, now)
        return 0.0

    def _forget_idle(self, now: float) -> None:
        full = self.capacity / self.rate if self.rate else 0.0
        for client, (_, updated) in list(self._buckets.items()):
            if now - updated > full:
                del self._buckets[client]


class Guard:
    """Rate limit, then Host (keyless) or key, then body size; a refusal is the typed JSON
    error."""

    def __init__(self, app: App, config: ServerConfig) -> None:
        self.app, self.config = app, config
        self.limiter = RateLimiter(config.rate_per_minute)
        self._key = config.api_key.encode() if config.api_key else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("unknown", 0))[0]
        wait = self.limiter.allow(client)
        if wait:
            retry = max(1, round(wait))
            await _refuse(send, 429, "rate_limited",
                          f"more than {self.config.rate_per_minute} requests a minute",
                          f"retry in {retry} s", {"retry-after": str(retry)})  # fmt: skip
            return
        if self._key is None and not loopback_host(_header(scope, b"host")):
            await _refuse(send, 421, "host_not_allowed",
                          "this server has no API key, so it only answers requests addressed "
                          "to localhost, 127.0.0.1 or [::1] (the Host header was "
                          f"{_shown(_header(scope, b'host'))})",
                          "use http://127.0.0.1:<port>, or start the server with an API key "
                          "(ALPHADESK_API_KEY) to serve other host names")  # fmt: skip
            return
        if self._key is not None and not self._authorised(scope):
            await _refuse(send, 401, "unauthorized", "a valid API key is required",
                          "send it as X-API-Key or Authorization: Bearer <key>",
                          {"www-authenticate": "Bearer"})  # fmt: skip
            return
        await self._bounded(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        headers = dict(scope.get("headers") or [])
        given = headers.get(b"x-api-key")
        if given is None:
            scheme, _, token = headers.get(b"authorization", b"").partition(b" ")
            given = token.strip() if scheme.lower() == b"bearer" else b""
        assert self._key is not None
        return hmac.compare_digest(given, self._key)

    async def _bounded(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read the body first (it is small by definition) and refuse one over the limit."""
        limit = self.config.max_body_bytes
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        too_big = (413, "body_too_large", f"the request body is over {limit} bytes",
                   "send a smaller body")  # fmt: skip
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _refuse(send, *too_big)
            return
        if scope.get("method") in ("GET", "HEAD", "DELETE", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client left before sending it all
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > limit:
                await _refuse(send, *too_big)
                return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()  # afterwards: the disconnect a stream waits for

        await self.app(scope, replay, send)


def _header(scope: Scope, name: bytes) -> bytes | None:
    return next((v for k, v in scope.get("headers") or [] if k == name), None)


def _shown(value: bytes | None) -> str:
    return "missing" if value is None else repr(value.decode("latin-1"))


async def _refuse(
    send: Send,
    status: int,
    type_: str,
    message: str,
    hint: str | None = None,
    headers: dict[str, str] | None = None,
) -> None:
    payload = json.dumps(error_json(type_, message, hint), separators=(",", ":")).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})
