"""A model wrapper that counts the requests it answers (to prove a step was not redone)."""

from __future__ import annotations

from collections.abc import Sequence

from alphadesk.llm.base import Model
from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec


class Counted:
    """Answers as ``inner`` does, counting the requests."""

    def __init__(self, inner: Model) -> None:
        self.inner, self.calls = inner, 0

    @property
    def name(self) -> str:
        return self.inner.name

    def supports(self, capability: str) -> bool:
        return self.inner.supports(capability)

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        self.calls += 1
        return await self.inner.request(messages, tools, settings)
