"""Web search: an online provider behind a small protocol.

The web shows today's pages, so a search is only point-in-time for an ``as_of`` close to
now; callers refuse it for historical instants. The provider is Tavily's search API
(``TAVILY_API_KEY``), over plain HTTP with httpx. With no key, or no network, a search
raises a typed :class:`~alphadesk.data.errors.DataError` saying so; nothing is invented.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from .errors import MalformedResponse, NotConfigured, ProviderUnavailable, RateLimited

if TYPE_CHECKING:
    import httpx

__all__ = ["TAVILY_KEY_ENV", "TavilySearch", "WebResult", "WebResults", "WebSearch", "web_search"]

TAVILY_KEY_ENV = "TAVILY_API_KEY"
_TAVILY_URL = "https://api.tavily.com"
_SNIPPET_CHARS = 600


class WebResult(BaseModel):
    title: str
    url: str
    snippet: str
    published: str | None = Field(None, description="As the page gives it, when it does.")


class WebResults(BaseModel):
    query: str
    provider: str
    retrieved_at: datetime
    results: list[WebResult]


@runtime_checkable
class WebSearch(Protocol):
    """Anything that searches the web."""

    name: str

    def search(self, query: str, *, limit: int = 5) -> WebResults: ...


class TavilySearch:
    """Tavily's search API (``POST /search``), authenticated with ``TAVILY_API_KEY``."""

    name = "tavily"

    def __init__(
        self, api_key: str | None = None, *, base_url: str = _TAVILY_URL, timeout_s: float = 15
    ) -> None:
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s

    def search(self, query: str, *, limit: int = 5) -> WebResults:
        if not self.api_key:
            raise NotConfigured(
                f"web search needs a Tavily key: set {TAVILY_KEY_ENV}", provider=self.name
            )
        import httpx  # a search's own import: an assistant that never searches skips it

        try:
            response = httpx.post(
                f"{self.base_url}/search",
                json={"query": query, "max_results": limit},
                headers={"Authorization": f"Bearer {self.api_key}"},
                timeout=self.timeout_s,
            )
        except httpx.HTTPError as exc:
            raise ProviderUnavailable(
                f"web search is unavailable ({type(exc).__name__}: {exc}); check the network",
                provider=self.name,
            ) from exc
        return self._parse(query, response)

    def _parse(self, query: str, response: httpx.Response) -> WebResults:
        if response.status_code in (401, 403):
            raise NotConfigured(
                f"Tavily rejected the key (HTTP {response.status_code}): check {TAVILY_KEY_ENV}",
                provider=self.name,
            )
        if response.status_code == 429:
            raise RateLimited("Tavily rate limit reached; try again later", provider=self.name)
        if response.status_code >= 400:
            raise ProviderUnavailable(
                f"Tavily answered HTTP {response.status_code}", provider=self.name
            )
        try:
            items = response.json()["results"]
            results = [
                WebResult(
                    title=str(item.get("title") or item["url"]),
                    url=str(item["url"]),
                    snippet=str(item.get("content") or "")[:_SNIPPET_CHARS],
                    published=item.get("published_date"),
                )
                for item in items
            ]
        except (ValueError, KeyError, TypeError) as exc:
            raise MalformedResponse(
                f"Tavily's answer was not understood ({exc})", provider=self.name
            ) from exc
        return WebResults(
            query=query, provider=self.name, retrieved_at=datetime.now(UTC), results=results
        )


def web_search() -> WebSearch:
    """The configured web search: Tavily with the key from the environment (if any)."""
    return TavilySearch(os.environ.get(TAVILY_KEY_ENV))
