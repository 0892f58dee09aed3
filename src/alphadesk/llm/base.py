"""The model protocol and the errors every adapter raises."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec

__all__ = [
    "AuthenticationFailed",
    "CacheMiss",
    "Model",
    "ModelError",
    "ModelUnavailable",
]


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


class ModelError(Exception):
    """A model could not answer. ``retryable`` says whether trying again might help."""

    retryable: bool = False

    def __init__(self, message: str, *, model: str | None = None) -> None:
        super().__init__(message)
        self.model = model


class ModelUnavailable(ModelError):
    """Rate limit, timeout, connection failure or server error, after retries and fallbacks."""

    retryable = True


class AuthenticationFailed(ModelError):
    """The provider rejected the credentials. Never retried; the message names the key."""


class CacheMiss(ModelError):
    """Replay-only cache mode and this request was never recorded."""
