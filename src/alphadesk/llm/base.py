"""The model protocol and the errors every adapter raises."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec

__all__ = [
    "REJECTION_KINDS",
    "AuthenticationFailed",
    "CacheMiss",
    "EndpointUnreachable",
    "Model",
    "ModelError",
    "ModelUnavailable",
    "ProviderConnectionError",
    "ProviderServerError",
    "ProviderTimeout",
    "RateLimited",
    "RequestRejected",
    "StreamItem",
    "StreamingModel",
    "chunk_text",
    "stream_response",
]

StreamItem = str | ModelResponse
"""What a stream yields: text deltas as they arrive, then the whole response once."""


@runtime_checkable
class Model(Protocol):
    """Anything that answers a conversation: a real provider, the rules engine, a test double."""

    @property
    def name(self) -> str:
        """The model string recorded in ledgers and results (``openai/gpt-4o``, ``rules``...)."""
        ...

    def supports(self, capability: str) -> bool:
        """Whether the model handles ``tools``, ``vision`` or ``json_schema`` natively."""
        ...

    async def request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
    ) -> ModelResponse:
        """Send the conversation and return the next assistant message."""
        ...


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A model that can also answer token by token."""

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
    ) -> AsyncIterator[StreamItem]:
        """Yield the answer's text deltas as they arrive, then the full ModelResponse."""
        ...


async def stream_response(
    model: Model,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    settings: RequestSettings,
) -> AsyncIterator[StreamItem]:
    """Text deltas, then the response: streamed when ``model`` can, else in one piece."""
    if isinstance(model, StreamingModel):
        async for item in model.stream(messages, tools, settings):
            yield item
        return
    response = await model.request(messages, tools, settings)
    if response.message.content:
        yield response.message.content
    yield response


def chunk_text(text: str | None, words: int = 3) -> list[str]:
    """``text`` in pieces of a few words (spaces kept), for models that simulate a stream."""
    if not text:
        return []
    pieces = text.split(" ")
    return [
        " ".join(pieces[i : i + words]) + (" " if i + words < len(pieces) else "")
        for i in range(0, len(pieces), words)
    ]


class ModelError(Exception):
    """A model could not answer. ``retryable`` says whether trying again might help."""

    retryable: bool = False

    def __init__(self, message: str, *, model: str | None = None) -> None:
        super().__init__(message)
        self.model = model


class ModelUnavailable(ModelError):
    """Rate limit, timeout, connection failure or server error, after retries and fallbacks."""

    retryable = True


class RateLimited(ModelUnavailable):
    """The provider said 429: too many requests (``retry_after_s`` when it said how long)."""

    def __init__(
        self, message: str, *, model: str | None = None, retry_after_s: float | None = None
    ) -> None:
        super().__init__(message, model=model)
        self.retry_after_s = retry_after_s


class ProviderTimeout(ModelUnavailable):
    """No answer within the request timeout. ``phase`` says which deadline passed:
    ``first_token`` (nothing came back) or ``total`` (the answer took too long; retrying
    would cost the same again, so the adapter does not)."""

    def __init__(self, message: str, *, model: str | None = None, phase: str = "total") -> None:
        super().__init__(message, model=model)
        self.phase = phase


class ProviderServerError(ModelUnavailable):
    """The provider failed on its side (5xx, overloaded)."""


class ProviderConnectionError(ModelUnavailable):
    """The connection failed or was reset before an answer arrived."""


class AuthenticationFailed(ModelError):
    """The provider rejected the credentials. Never retried; the message names the key."""


class EndpointUnreachable(ModelError):
    """Nothing usable answers at the configured address (refused connection, unknown host,
    HTTP 404 on the path). Never retried: only the user can start the server or fix
    ``api_base``; the message names the address."""

    def __init__(self, message: str, *, model: str | None = None, address: str = "") -> None:
        super().__init__(message, model=model)
        self.address = address


class RequestRejected(ModelError):
    """The server refused this request and will refuse it again unchanged (a 4xx, a context
    overflow, a tool call in the history it cannot parse). Not retried by the adapter.

    ``kind`` is one of ``REJECTION_KINDS``. The agent loop may send the turn back to the
    model once with ``reason`` (after removing what caused it), then fail typed.
    """

    def __init__(self, reason: str, *, kind: str = "bad_request", model: str | None = None) -> None:
        super().__init__(reason, model=model)
        self.reason, self.kind = reason, kind


REJECTION_KINDS = ("bad_request", "context_overflow", "invalid_tool_call", "unsupported")


class CacheMiss(ModelError):
    """Replay-only cache mode and this request was never recorded."""
