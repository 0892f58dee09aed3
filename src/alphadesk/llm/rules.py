"""The ``rules`` model: an agent's deterministic policy, answering through the same loop.

A policy is a tool plan (turns of tool calls, each chosen from the results so far) and a
decision computed from the tool results. Running it as a model means the offline path
exercises exactly the engine a real LLM uses: schemas, validation, retries, events, ledger.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import NoneType
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from alphadesk.config import RULES_MODEL
from alphadesk.llm.base import ModelError, StreamItem, chunk_text
from alphadesk.llm.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    RequestSettings,
    ToolCall,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
    text_of,
)

__all__ = ["PlannedCall", "RulesModel", "RulesPolicy", "Transcript"]

PlannedCall = tuple[str, dict[str, Any]]
_ids = itertools.count(1)
TaskT = TypeVar("TaskT")


def _copied(value: Any) -> Any:
    """A deep copy of ``value``: JSON containers copied by hand (several times faster than
    ``copy.deepcopy``), anything else by ``copy.deepcopy``."""
    if isinstance(value, str | int | float | bool | NoneType | datetime):
        return value
    if type(value) is dict:
        return {key: _copied(item) for key, item in value.items()}
    if type(value) is list:
        return [_copied(item) for item in value]
    return copy.deepcopy(value)


@dataclass(frozen=True)
class Transcript:
    """What a policy can see: the task (its text, and the object it was rendered from when
    the caller gave one) and the parsed results of the tools called so far."""

    prompt: str
    results: dict[str, list[Any]]
    turn: int
    feedback: str | None = None
    task: Any = None

    @classmethod
    def of(cls, messages: Sequence[Message]) -> Transcript:
        first = next((m for m in messages if isinstance(m, UserMessage)), None)
        prompt = text_of(first.content) if first is not None else ""
        task = first.task if first is not None else None
        results: dict[str, list[Any]] = {}
        for message in messages:
            if isinstance(message, ToolMessage):
                results.setdefault(message.name, []).append(_parse(text_of(message.content)))
        turn = sum(1 for m in messages if isinstance(m, AssistantMessage) and m.tool_calls)
        last = messages[-1] if messages else None
        feedback = text_of(last.content) if isinstance(last, UserMessage) and turn else None
        return cls(prompt, results, turn, feedback, task)

    def task_as(self, kind: type[TaskT]) -> TaskT:
        """A copy of the task as a ``kind`` (a policy cannot alter its caller's data);
        ValueError saying what came instead (a plain-text task, or another agent's)."""
        if not isinstance(self.task, kind):
            given = "a plain-text prompt" if self.task is None else type(self.task).__name__
            raise ValueError(f"the policy needs a {kind.__name__} task, got {given}")
        task = self.task
        if dataclasses.is_dataclass(task) and not isinstance(task, type):  # JSON fields
            fields = [f.name for f in dataclasses.fields(task) if f.init]
            values = {name: _copied(getattr(task, name)) for name in fields}
            return cast(TaskT, dataclasses.replace(task, **values))
        return copy.deepcopy(task)

    def last(self, tool: str) -> Any:
        """The latest result of ``tool``; KeyError naming the tool when it was never called."""
        if tool not in self.results:
            raise KeyError(f"the policy needs a result of {tool!r}, which was not called")
        return self.results[tool][-1]

    def facts(self, tool: str) -> dict[str, Any]:
        """The latest result of ``tool`` as a JSON object; ValueError quoting the tool's
        answer when it returned an error instead."""
        result = self.last(tool)
        if not isinstance(result, dict):
            raise ValueError(f"{tool} returned no facts: {str(result)[:300]}")
        return result


@dataclass(frozen=True)
class RulesPolicy:
    """A deterministic agent: turns of planned tool calls, then a decision."""

    plan: Sequence[Callable[[Transcript], Sequence[PlannedCall]]]
    decide: Callable[[Transcript], BaseModel | dict[str, Any] | str]
    name: str = field(default="policy")


class RulesModel:
    """Answers as ``policy`` dictates. Free, instant and reproducible."""

    def __init__(self, policy: RulesPolicy) -> None:
        self.policy = policy

    @property
    def name(self) -> str:
        return RULES_MODEL

    def supports(self, capability: str) -> bool:
        return capability == "tools"

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        transcript = Transcript.of(messages)
        offered = {tool.name for tool in tools}
        try:
            calls = self._planned(transcript, offered)
            decision = None if calls else self.policy.decide(transcript)
        except (KeyError, LookupError, TypeError, ValueError) as exc:
            raise ModelError(
                f"rules policy {self.policy.name!r} could not answer: {exc}", model=RULES_MODEL
            ) from exc
        if calls:
            message = AssistantMessage(
                tool_calls=[
                    ToolCall(id=f"rules_{next(_ids)}", name=name, arguments=json.dumps(args))
                    for name, args in calls
                ]
            )
        else:
            message = AssistantMessage(content=_as_text(decision))
        return ModelResponse(
            message=message,
            model=RULES_MODEL,
            usage=Usage(requests=1),
            finish_reason="tool_calls" if calls else "stop",
        )

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> AsyncIterator[StreamItem]:
        """The decided answer a few words at a time, then the response (as a model would)."""
        response = await self.request(messages, tools, settings)
        for piece in chunk_text(response.message.content):
            yield piece
        yield response

    def _planned(self, transcript: Transcript, offered: set[str]) -> list[PlannedCall]:
        if transcript.turn >= len(self.policy.plan) or not offered:
            return []
        return [c for c in self.policy.plan[transcript.turn](transcript) if c[0] in offered]


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _as_text(decision: BaseModel | dict[str, Any] | str | None) -> str:
    if decision is None or isinstance(decision, str):
        return decision or ""
    if isinstance(decision, BaseModel):
        return decision.model_dump_json()
    return json.dumps(decision, default=str)
