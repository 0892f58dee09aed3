"""A run's own record of its model calls, so a resumed run never pays for a call twice.

Checkpoints restart a pipeline at the step that was running when it was interrupted; that
step's model calls made before the interruption are in the run's journal (request key ->
response, written as each call completes). ``JournaledModel`` answers a request the journal
already holds from it (free, ``cached=True``), and records every new answer. A step redone
after a crash therefore replays its completed calls and continues from the first one that
never completed.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence

from alphadesk.llm.base import Model, StreamItem, stream_response
from alphadesk.llm.cache import cache_key
from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec, Usage
from alphadesk.llm.wrapper import ModelWrapper

__all__ = ["Journal", "JournaledModel"]

Record = Callable[[str, ModelResponse], None]


class Journal:
    """The responses a run recorded, by request key, each answered once and in order; and
    where new responses are recorded."""

    def __init__(self, recorded: Iterable[tuple[str, str]], record: Record) -> None:
        self._record = record
        self._pending: dict[str, deque[ModelResponse]] = defaultdict(deque)
        for key, body in recorded:
            self._pending[key].append(ModelResponse.model_validate_json(body))
        self.replayed = 0

    def __len__(self) -> int:
        return sum(len(queue) for queue in self._pending.values())

    def take(self, key: str) -> ModelResponse | None:
        """The recorded response to this request, once; None when there is none left."""
        queue = self._pending.get(key)
        if not queue:
            return None
        self.replayed += 1
        return _free(queue.popleft())

    def record(self, key: str, response: ModelResponse) -> None:
        self._record(key, response)

    def wrap(self, model: Model) -> Model:
        return JournaledModel(model, self)


class JournaledModel(ModelWrapper):
    """``inner``, answering from ``journal`` first and recording every new answer there."""

    def __init__(self, inner: Model, journal: Journal) -> None:
        super().__init__(inner)
        self.journal = journal

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        key = cache_key(self.name, messages, tools, settings)
        replayed = self.journal.take(key)
        if replayed is not None:
            return replayed
        response = await self.inner.request(messages, tools, settings)
        self.journal.record(key, response)
        return response

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> AsyncIterator[StreamItem]:
        key = cache_key(self.name, messages, tools, settings)
        replayed = self.journal.take(key)
        if replayed is not None:
            if replayed.message.content:
                yield replayed.message.content
            yield replayed
            return
        async for item in stream_response(self.inner, messages, tools, settings):
            if isinstance(item, ModelResponse):
                self.journal.record(key, item)
            yield item


def _free(response: ModelResponse) -> ModelResponse:
    """A replayed answer: already paid for, so no request and no cost."""
    usage = Usage(
        requests=0,
        input_tokens=response.usage.input_tokens,
        output_tokens=response.usage.output_tokens,
        cost_usd=0.0,
    )
    return response.model_copy(update={"cached": True, "usage": usage, "latency_s": 0.0})
