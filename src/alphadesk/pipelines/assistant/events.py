"""The assistant's events, alongside the engine's (tool calls, text deltas, usage).

The CLI renders them; an HTTP endpoint streams them as server-sent events (one event per
``kind``, its JSON as the data) from the same generator, ``AssistantPipeline.run``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from alphadesk.agent.events import BaseEvent
from alphadesk.agents.assistant.models import Classification, RouterDecision
from alphadesk.pipelines.assistant.models import ChatResult, NumberCheck

__all__ = [
    "ChatFinished",
    "Classified",
    "ContextResolved",
    "NumbersChecked",
    "Routed",
    "State",
    "StateChanged",
    "sse_frame",
]

State = Literal["IDLE", "PLANNING", "EXECUTING", "RESPONDING", "ERROR"]


class StateChanged(BaseEvent):
    """The seed's state machine: IDLE, PLANNING, EXECUTING, RESPONDING, ERROR."""

    kind: Literal["state"] = "state"
    previous: State
    state: State
    reason: str | None = None


class ContextResolved(BaseEvent):
    """The instant the question is answered at, and why that one."""

    kind: Literal["context"] = "context"
    session_id: str
    as_of: datetime
    note: str | None = None


class Classified(BaseEvent):
    kind: Literal["classified"] = "classified"
    classification: Classification


class Routed(BaseEvent):
    kind: Literal["routed"] = "routed"
    decision: RouterDecision
    max_turns: int


class NumbersChecked(BaseEvent):
    kind: Literal["numbers_checked"] = "numbers_checked"
    check: NumberCheck


class ChatFinished(BaseEvent):
    kind: Literal["chat_finished"] = "chat_finished"
    result: ChatResult


def sse_frame(event: BaseEvent) -> str:
    """One event as a server-sent-events frame: its kind as the event name, JSON as data.

    An SSE endpoint is ``async for event in pipeline.run(request): yield sse_frame(event)``.
    """
    kind = getattr(event, "kind", type(event).__name__)
    return f"event: {kind}\ndata: {event.model_dump_json()}\n\n"
