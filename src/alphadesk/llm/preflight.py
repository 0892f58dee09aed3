"""A quick check that a model server answers before a run spends minutes on it.

One GET of the model list (``/models`` under an OpenAI-compatible ``api_base``, ``/api/tags``
on Ollama), a few seconds at most. A refused connection, an unknown host, a timeout or a
404 raise ``EndpointUnreachable`` naming the address; anything else that answers HTTP is
taken as a live server (the request itself will say more). Success is remembered for the
process, failure is not (the user may start the server and ask again).
"""

from __future__ import annotations

import httpx

from alphadesk.llm.base import EndpointUnreachable

__all__ = ["OLLAMA_DEFAULT_BASE", "check_endpoint", "forget_checks", "listing_url"]

OLLAMA_DEFAULT_BASE = "http://localhost:11434"
_checked: set[str] = set()  # concurrent first checks may both run: harmless


def listing_url(api_base: str, provider: str) -> str:
    """Where the server lists its models."""
    base = api_base.rstrip("/")
    if provider in {"ollama", "ollama_chat"} and not base.endswith("/v1"):
        return f"{base}/api/tags"
    return f"{base}/models"


def forget_checks() -> None:
    """Check every address again on next use."""
    _checked.clear()


async def check_endpoint(
    api_base: str, provider: str, *, api_key: str | None = None, timeout_s: float = 5.0
) -> None:
    """Raise ``EndpointUnreachable`` unless a server answers at ``api_base``."""
    url = listing_url(api_base, provider)
    if url in _checked:
        return
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            response = await client.get(url, headers=headers)
    except httpx.TimeoutException:
        raise EndpointUnreachable(
            f"the model server at {api_base} did not answer within {timeout_s:g} s: "
            "is it running and reachable?",
            address=api_base,
        ) from None
    except httpx.HTTPError as exc:
        raise EndpointUnreachable(
            f"cannot connect to the model server at {api_base} ({type(exc).__name__}: "
            f"{exc}): is the server running? Start it, or point api_base at where it "
            "listens.",
            address=api_base,
        ) from None
    if response.status_code == 404:
        raise EndpointUnreachable(
            f"the server at {api_base} answered HTTP 404 for {url}: is api_base right "
            "(OpenAI-compatible servers usually end in /v1) and is the model server "
            "running there?",
            address=api_base,
        )
    _checked.add(url)
