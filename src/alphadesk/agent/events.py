"""The typed events a run emits. Front ends render them; the run store persists them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from alphadesk.llm.messages import Usage

__all__ = [
    "BaseEvent",
    "Event",
    "EventSink",
    "FinalOutput",
    "ModelRequested",
    "ModelResponded",
    "OutputRetry",
    "RunFinished",
    "RunStarted",
    "TextDelta",
    "ToolFailed",
    "ToolFinished",
    "ToolStarted",
    "UsageUpdated",
]


def _now() -> datetime:
    return datetime.now(UTC)


class BaseEvent(BaseModel):
    """Common fields: which run and agent emitted it, and when. Pipelines may subclass it."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    agent: str
    at: datetime = Field(default_factory=_now)


class RunStarted(BaseEvent):
    kind: Literal["run_started"] = "run_started"
    model: str
    as_of: datetime
    tools: list[str]


class ModelRequested(BaseEvent):
    kind: Literal["model_request"] = "model_request"
    turn: int
    messages: int
    forced_final: bool = False


class ModelResponded(BaseEvent):
    kind: Literal["model_response"] = "model_response"
    turn: int
    model: str
    text: str | None
    tool_calls: list[str]
    usage: Usage
    latency_s: float
    cached: bool


class TextDelta(BaseEvent):
    """A piece of the model's answer as it streams in (agents that stream only)."""

    kind: Literal["text_delta"] = "text_delta"
    turn: int
    text: str


class ToolStarted(BaseEvent):
    kind: Literal["tool_started"] = "tool_started"
    call_id: str
    tool: str
    arguments: str


class ToolFinished(BaseEvent):
    kind: Literal["tool_finished"] = "tool_finished"
    call_id: str
    tool: str
    result: str = Field(description="the result as sent to the model, truncated for display")
    images: int = 0
    seconds: float


class ToolFailed(BaseEvent):
    kind: Literal["tool_failed"] = "tool_failed"
    call_id: str
    tool: str
    error: str
    retry: bool = Field(description="the error went back to the model for another try")


class OutputRetry(BaseEvent):
    kind: Literal["output_retry"] = "output_retry"
    attempt: int
    error: str


class FinalOutput(BaseEvent):
    kind: Literal["final_output"] = "final_output"
    output: Any


class UsageUpdated(BaseEvent):
    kind: Literal["usage"] = "usage"
    agent_usage: Usage
    run_usage: Usage


class RunFinished(BaseEvent):
    kind: Literal["run_finished"] = "run_finished"
    outcome: str
    reason: str | None = None


Event = Annotated[
    RunStarted
    | ModelRequested
    | ModelResponded
    | TextDelta
    | ToolStarted
    | ToolFinished
    | ToolFailed
    | OutputRetry
    | FinalOutput
    | UsageUpdated
    | RunFinished,
    Field(discriminator="kind"),
]

EventSink = Callable[[BaseEvent], None]
