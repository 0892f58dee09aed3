"""The UI's client of the HTTP API: JSON calls, and server-sent-event streams read event by
event. Plain httpx, so it is usable (and tested) outside Streamlit.

The UI server is the API's only client: its address and key are fixed where the server
starts (``alphadesk ui`` puts them in its environment), never sent to nor chosen by a
browser, so the key goes to that one address and nowhere else.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = ["DEFAULT_API", "ApiClient", "ApiFailure", "StreamEvent", "parse_sse"]

DEFAULT_API = "http://127.0.0.1:8000"


@dataclass(frozen=True)
class StreamEvent:
    """One server-sent event: its name (the event's kind) and its JSON."""

    event: str
    data: Any


class ApiFailure(RuntimeError):
    """An error answer of the API: its type, message and hint."""

    def __init__(self, status: int, kind: str, message: str, hint: str | None = None) -> None:
        super().__init__(f"{message} ({hint})" if hint else message)
        self.status, self.kind, self.message, self.hint = status, kind, message, hint


def parse_sse(lines: Iterable[str]) -> Iterator[StreamEvent]:
    """Events from the lines of a ``text/event-stream`` body."""
    name, data = "message", list[str]()
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield StreamEvent(name, json.loads("\n".join(data)))
            name, data = "message", []
        elif not line.startswith(":"):
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
    if data:
        yield StreamEvent(name, json.loads("\n".join(data)))


class ApiClient:
    """The alphadesk API at ``base_url`` (with ``api_key`` when the server asks for one)."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = 600) -> None:
        headers = {"X-API-Key": api_key} if api_key else {}
        self.http = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout)

    @classmethod
    def from_environment(cls) -> ApiClient:
        """The API the server was started with: ``ALPHADESK_API_URL`` and, when the API asks
        for one, ``ALPHADESK_API_KEY``."""
        url = os.environ.get("ALPHADESK_API_URL") or DEFAULT_API
        return cls(url, os.environ.get("ALPHADESK_API_KEY") or None)

    @property
    def url(self) -> str:
        return str(self.http.base_url)

    @property
    def has_key(self) -> bool:
        return "X-API-Key" in self.http.headers

    def close(self) -> None:
        self.http.close()

    def get(self, path: str, **params: Any) -> Any:
        response = self.http.get(path, params={k: v for k, v in params.items() if v is not None})
        return _json(response)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return _json(self.http.post(path, json=body))

    def raw(self, path: str) -> bytes | None:
        """An artifact's bytes (a report, a chart); None when the run has none."""
        response = self.http.get(path)
        if response.status_code == 404:
            return None
        _raise_for(response)
        return response.content

    def stream(self, path: str, body: dict[str, Any]) -> Iterator[StreamEvent]:
        """Every event of a streaming route, as it arrives. Closing the iterator closes the
        connection, which cancels the run on the server."""
        with self.http.stream("POST", path, json=body) as response:
            if response.status_code != 200:
                response.read()
                _raise_for(response)
            yield from parse_sse(response.iter_lines())


def _raise_for(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    try:
        error = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        raise ApiFailure(response.status_code, "http_error", response.text[:200]) from None
    raise ApiFailure(response.status_code, error["type"], error["message"], error.get("hint"))


def _json(response: httpx.Response) -> Any:
    _raise_for(response)
    return response.json()
