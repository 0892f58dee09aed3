"""The rules policy taking a fixed time per call, like a remote model: a stand-in for a
paid provider's latency, in this process or in a worker process started for a test."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec
from alphadesk.llm.rules import RulesModel


def make_rules_slow(latency_s: float) -> None:
    """From now on, in this process, every rules call takes ``latency_s`` more."""
    answer = RulesModel.request

    async def slow(
        self: RulesModel,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
    ) -> ModelResponse:
        await asyncio.sleep(latency_s)
        return await answer(self, messages, tools, settings)

    RulesModel.request = slow  # type: ignore[method-assign]
