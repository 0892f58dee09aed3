"""A model wrapper that counts the requests it answers (to prove a step was not redone)."""

from __future__ import annotations

from collections.abc import Sequence

from alphadesk.llm.base import Model
from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec
from alphadesk.llm.wrapper import ModelWrapper


class Counted(ModelWrapper):
    """Answers as ``inner`` does, counting the requests."""

    def __init__(self, inner: Model) -> None:
        super().__init__(inner)
        self.calls = 0

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        self.calls += 1
        return await super().request(messages, tools, settings)
