"""Test doubles shipped with the package: models that answer from a script or a function.

They run through exactly the same agent loop as a real provider, so a whole pipeline can be
exercised offline, deterministically and for free.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from alphadesk.llm.base import ModelError, StreamItem, chunk_text
from alphadesk.llm.chaos import ChaosModel, Injected
from alphadesk.llm.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    RequestSettings,
    ToolCall,
    ToolSpec,
    Usage,
    text_of,
)
from alphadesk.llm.rules import RulesModel

__all__ = [
    "ChaosModel",
    "FunctionModel",
    "Injected",
    "RecordedRequest",
    "ScriptExhausted",
    "ScriptedModel",
    "add_rules_latency",
    "answer",
    "json_answer",
    "tool_calls",
]

_CAPABILITIES = frozenset({"tools", "vision"})
_ids = itertools.count(1)


def answer(text: str) -> AssistantMessage:
    """A final text answer."""
    return AssistantMessage(content=text)


def json_answer(
    value: BaseModel | dict[str, Any] | list[Any], *, fenced: bool = True
) -> AssistantMessage:
    """A final answer holding ``value`` as JSON, fenced the way chat models usually write it."""
    body = value.model_dump_json(indent=1) if isinstance(value, BaseModel) else json.dumps(value)
    return AssistantMessage(content=f"```json\n{body}\n```" if fenced else body)


def tool_calls(
    *calls: tuple[str, dict[str, Any] | str], text: str | None = None
) -> AssistantMessage:
    """An assistant turn calling tools: ``tool_calls(("get_quote", {"symbol": "MSFT"}))``.

    A string instead of a dict is sent verbatim, to script malformed arguments.
    """
    return AssistantMessage(
        content=text,
        tool_calls=[
            ToolCall(
                id=f"call_{next(_ids)}",
                name=name,
                arguments=args if isinstance(args, str) else json.dumps(args),
            )
            for name, args in calls
        ],
    )


@dataclass(frozen=True)
class RecordedRequest:
    """One request a test double received."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    settings: RequestSettings

    @property
    def tool_names(self) -> list[str]:
        return [tool.name for tool in self.tools]

    @property
    def last_text(self) -> str:
        return text_of(self.messages[-1].content) if self.messages else ""


class ScriptExhausted(ModelError):
    """A ScriptedModel was asked for more responses than it was given."""


class _Recording:
    """Shared bookkeeping: a name, capabilities, recorded requests and simulated latency."""

    def __init__(
        self,
        name: str,
        capabilities: Iterable[str],
        latency_s: float,
        usage: Usage | None,
    ) -> None:
        self._name = name
        self._capabilities = frozenset(capabilities)
        self.latency_s = latency_s
        self.usage = usage or Usage(requests=1, input_tokens=10, output_tokens=5)
        self.requests: list[RecordedRequest] = []

    @property
    def name(self) -> str:
        return self._name

    def supports(self, capability: str) -> bool:
        return capability in self._capabilities

    async def _record(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> RecordedRequest:
        request = RecordedRequest(tuple(messages), tuple(tools), settings)
        self.requests.append(request)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return request

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        raise NotImplementedError

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> AsyncIterator[StreamItem]:
        """The answer's text a few words at a time, then the response (when ``streaming``)."""
        response = await self.request(messages, tools, settings)
        for piece in chunk_text(response.message.content):
            yield piece
        yield response

    def _response(self, message: AssistantMessage) -> ModelResponse:
        finish = "tool_calls" if message.tool_calls else "stop"
        return ModelResponse(
            message=message,
            model=self._name,
            usage=self.usage,
            finish_reason=finish,
            latency_s=self.latency_s,
        )


class ScriptedModel(_Recording):
    """Answers each request with the next scripted message, recording every request.

    Strings in the script are final text answers. ``assert_consumed()`` fails a test that
    left scripted responses unused.
    """

    def __init__(
        self,
        script: Iterable[AssistantMessage | str],
        *,
        name: str = "scripted",
        capabilities: Iterable[str] = _CAPABILITIES,
        latency_s: float = 0.0,
        usage: Usage | None = None,
    ) -> None:
        super().__init__(name, capabilities, latency_s, usage)
        self._script = [answer(item) if isinstance(item, str) else item for item in script]
        self._position = 0

    @property
    def remaining(self) -> int:
        return len(self._script) - self._position

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        await self._record(messages, tools, settings)
        if self._position >= len(self._script):
            raise ScriptExhausted(
                f"{self._name}: request {len(self.requests)} has no scripted response "
                f"(script had {len(self._script)})",
                model=self._name,
            )
        message = self._script[self._position]
        self._position += 1
        return self._response(message)

    def assert_consumed(self) -> None:
        if self.remaining:
            raise AssertionError(f"{self._name}: {self.remaining} scripted responses unused")


Responder = Callable[
    [Sequence[Message], Sequence[ToolSpec], RequestSettings],
    AssistantMessage | str | Awaitable[AssistantMessage | str],
]


class FunctionModel(_Recording):
    """Answers each request by calling ``responder(messages, tools, settings)``."""

    def __init__(
        self,
        responder: Responder,
        *,
        name: str = "function",
        capabilities: Iterable[str] = _CAPABILITIES,
        latency_s: float = 0.0,
        usage: Usage | None = None,
    ) -> None:
        super().__init__(name, capabilities, latency_s, usage)
        self._responder = responder

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        await self._record(messages, tools, settings)
        reply = self._responder(messages, tools, settings)
        if inspect.isawaitable(reply):
            reply = await reply
        return self._response(answer(reply) if isinstance(reply, str) else reply)


def add_rules_latency(latency_s: float) -> Callable[[], None]:
    """Make every ``rules`` call in this process take ``latency_s`` longer, as a remote
    model would: for benchmarks and tests of concurrency and durability, in worker
    processes too (a Ray worker's setup hook, a Temporal worker's start-up). Returns the
    function that takes the latency away again."""
    answer = RulesModel.request

    async def slowed(
        self: RulesModel,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
    ) -> ModelResponse:
        await asyncio.sleep(latency_s)
        return await answer(self, messages, tools, settings)

    RulesModel.request = slowed  # type: ignore[method-assign]

    def restore() -> None:
        RulesModel.request = answer  # type: ignore[method-assign]

    return restore
