"""What a LiteLLM failure means: retry it, or raise a typed error that says what to do.

Only failures that may go away by themselves are retried: rate limits, dropped or reset
connections, 5xx server errors, a first token that never came. A failure that will come
back unchanged is raised at once, typed:

- nothing listening at the address, or HTTP 404 there: ``EndpointUnreachable``, naming the
  address and asking whether the server runs (LiteLLM reports a refused connection as
  "HTTP 500 InternalServerError ... Connection error", which says neither);
- a context overflow, a tool call in the history the server cannot parse (llama.cpp answers
  HTTP 500 "Failed to parse tool call arguments as JSON" every time), any other 4xx:
  ``RequestRejected`` with a ``kind`` the agent loop can act on.
"""

from __future__ import annotations

import re
from typing import Any

from alphadesk.llm.base import (
    EndpointUnreachable,
    ModelError,
    ProviderConnectionError,
    ProviderServerError,
    ProviderTimeout,
    RateLimited,
    RequestRejected,
)
from alphadesk.llm.litellm_response import BadResponse, load_litellm

__all__ = ["TRANSIENT", "chain", "is_connection_refused", "rejection", "transient_error"]

TRANSIENT = "transient"

_CONTEXT_OVERFLOW = re.compile(
    r"context[ _](length|window|size)|maximum context|exceeds? the available context"
    r"|too many tokens|prompt is too long|exceed_context_size",
    re.IGNORECASE,
)
_INVALID_TOOL_CALL = re.compile(
    r"parse tool call arguments|tool call arguments as json|invalid tool call", re.IGNORECASE
)
_SCHEMA_REFUSED = re.compile(
    r"response_format|json_schema|structured output|grammar", re.IGNORECASE
)
_REFUSED = re.compile(
    r"connection refused|connect call failed|cannot connect|name or service not known"
    r"|nodename nor servname|no route to host|all connection attempts failed",
    re.IGNORECASE,
)


def chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from, outermost first."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def is_connection_refused(exc: BaseException) -> bool:
    """Nothing listens at the address (or the host does not resolve): not worth a retry."""
    for link in chain(exc):
        if isinstance(link, ConnectionRefusedError):
            return True
        if _REFUSED.search(str(link)):
            return True
    return False


def _is_connection_failure(exc: BaseException) -> bool:
    litellm = load_litellm()
    for link in chain(exc):
        if isinstance(link, ConnectionError | litellm.APIConnectionError):
            return True
        name = type(link).__name__
        if name in {"APIConnectionError", "ConnectError", "ClientConnectorError", "ReadError"}:
            return True
        if name in {"RemoteProtocolError", "ServerDisconnectedError"}:
            return True
    return "connection error" in str(exc).lower()


def _said(exc: BaseException) -> str:
    """The provider's words, on one line, without LiteLLM's class-name prefixes."""
    text = " ".join(str(exc).split())
    text = re.sub(r"^(litellm\.)?\w+(Error|Exception): (\w+Exception - )?", "", text)
    return text[:300] or type(exc).__name__


def rejection(
    exc: BaseException, model: str, address: str, *, schema_sent: bool
) -> ModelError | None:
    """The typed error for a failure that will not change on retry; None when it may."""
    status = getattr(exc, "status_code", None)
    said = _said(exc)
    if is_connection_refused(exc):
        root = chain(exc)[-1]  # the socket's own words, not the SDK's "Connection error"
        return EndpointUnreachable(
            f"cannot connect to the model server at {address} ({_said(root)}): is the server "
            "running? Start it, or point api_base at where it listens.",
            model=model,
            address=address,
        )
    if _INVALID_TOOL_CALL.search(said):
        return RequestRejected(
            f"{model} rejected a tool call in the conversation: {said}",
            kind="invalid_tool_call",
            model=model,
        )
    if _CONTEXT_OVERFLOW.search(said) or _is_context_error(exc):
        return RequestRejected(
            f"the conversation no longer fits {model}'s context: {said}",
            kind="context_overflow",
            model=model,
        )
    if status == 404:
        return EndpointUnreachable(
            f"nothing answers {model} at {address} (HTTP 404: {said}): is the server "
            "running there, is api_base right (OpenAI-compatible servers usually end in "
            "/v1), and does it serve this model?",
            model=model,
            address=address,
        )
    if isinstance(status, int) and 400 <= status < 500 and status not in (408, 409, 429):
        kind = "unsupported" if schema_sent and _SCHEMA_REFUSED.search(said) else "bad_request"
        return RequestRejected(
            f"{model} rejected the request (HTTP {status}): {said}", kind=kind, model=model
        )
    return None


def _is_context_error(exc: BaseException) -> bool:
    return isinstance(exc, load_litellm().ContextWindowExceededError)


def transient_error(exc: BaseException, model: str, address: str) -> ModelError | None:
    """The typed error a retryable failure becomes when no retry is left; None when the
    failure is not a known transient one (a bug, or an unknown client error)."""
    status = getattr(exc, "status_code", None)
    said = _said(exc)
    if isinstance(exc, BadResponse):
        return ProviderServerError(f"{model} answered with no usable completion: {said}")
    if status == 429:
        return RateLimited(f"{model} is rate limited at {address}: {said}", model=model)
    if _is_connection_failure(exc):
        return ProviderConnectionError(
            f"the connection to {address} failed ({said}): is the server running?", model=model
        )
    if status in (408, 409) or (isinstance(status, int) and status >= 500):
        return ProviderServerError(f"{model} failed at {address} (HTTP {status}): {said}")
    if isinstance(exc, load_litellm().Timeout):
        return ProviderTimeout(f"{model} timed out at {address}: {said}", model=model)
    return None


def describe(exc: Any) -> str:
    status = getattr(exc, "status_code", None)
    return f"HTTP {status}: {_said(exc)}" if status else f"{type(exc).__name__}: {_said(exc)}"
