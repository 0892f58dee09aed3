"""``ModelWrapper``: the base of every model that answers through another one.

A wrapper (retries, a cache, a run's journal, injected failures, a meter) changes one part
of answering and passes the rest to ``inner``: its name, what it supports and, unless it
overrides :meth:`ModelWrapper.request`, the request itself. A subclass overrides only what
it changes.

The base has no ``stream``: a wrapper that does not stream itself is not a
:class:`~alphadesk.llm.base.StreamingModel`, so a stream through it falls back to its own
``request`` (where its change applies) instead of bypassing it for ``inner``'s stream.
"""

from __future__ import annotations

from collections.abc import Sequence

from alphadesk.llm.base import Model
from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec

__all__ = ["ModelWrapper"]


class ModelWrapper:
    """``inner`` under another name: the same model string, capabilities and answers."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"

    @property
    def name(self) -> str:
        return self.inner.name

    def supports(self, capability: str) -> bool:
        return self.inner.supports(capability)

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        return await self.inner.request(messages, tools, settings)
