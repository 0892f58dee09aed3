"""The API on the servers' real HTTP server (uvicorn) in a thread, and a small
server-sent-events parser."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from alphadesk.api import create_app
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.pool import WorkerPool
from alphadesk.serving import ServerConfig
from alphadesk.serving.http import http_server

__all__ = ["LiveApi", "SseEvent", "parse_sse"]


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str

    def json(self) -> Any:
        return json.loads(self.data)


def parse_sse(lines: Iterable[str]) -> Iterator[SseEvent]:
    """Events from the lines of a text/event-stream body (per the WHATWG rules that matter
    here: ``event:``, multi-line ``data:``, comments, blank line dispatches)."""
    event, data = "message", []
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield SseEvent(event, "\n".join(data))
            event, data = "message", []
            continue
        if line.startswith(":"):
            continue  # a comment (sse-starlette's pings)
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if data:
        yield SseEvent(event, "\n".join(data))


class LiveApi:
    """``create_app(settings, config, market=..., pool=...)`` served as ``alphadesk serve``
    serves it (:func:`alphadesk.serving.http.http_server`) on a free port.

    Use as a context manager; ``url`` is the base address and ``client()`` an httpx client
    for it (a key set on the config is sent unless ``key`` says otherwise)."""

    def __init__(
        self,
        settings: Settings,
        config: ServerConfig | None = None,
        market: MarketData | None = None,
        pool: WorkerPool | None = None,
    ) -> None:
        self.settings = settings
        self.config = config or ServerConfig(rate_per_minute=1_000_000, max_runs=64)
        app = create_app(settings, self.config, market=market, pool=pool)
        self.server = http_server(app, self.config, 0, log_level="warning", logging=False)
        self._thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = ""

    def __enter__(self) -> LiveApi:
        self._thread.start()
        deadline = time.monotonic() + 180  # worker processes import every pipeline first
        while not self.server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the API server did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=30)

    def client(self, key: str | None = "default", **kwargs: Any) -> httpx.Client:
        headers = dict(kwargs.pop("headers", {}))
        key = self.config.api_key if key == "default" else key
        if key:
            headers["X-API-Key"] = key
        return httpx.Client(base_url=self.url, headers=headers, timeout=120, **kwargs)

    def stream(self, client: httpx.Client, path: str, body: dict[str, Any]) -> list[SseEvent]:
        """POST ``body`` and read the whole event stream."""
        with client.stream("POST", path, json=body) as response:
            assert response.status_code == 200, response.read()
            assert response.headers["content-type"].startswith("text/event-stream")
            return list(parse_sse(response.iter_lines()))
