"""Pipeline-level events, alongside the engine's agent events."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError

from alphadesk.agent import events as agent_events
from alphadesk.agent.events import BaseEvent

__all__ = [
    "DebateMessage",
    "GateDecided",
    "ReflectionWritten",
    "StepFinished",
    "StepStarted",
    "parse_event",
]


class StepStarted(BaseEvent):
    """A pipeline step (one agent) started for a symbol."""

    kind: Literal["step_started"] = "step_started"
    symbol: str
    model: str


class StepFinished(BaseEvent):
    """A pipeline step ended: completed, rejected, failed or cancelled."""

    kind: Literal["step_finished"] = "step_finished"
    symbol: str
    status: Literal["completed", "rejected", "failed", "cancelled"]
    reason: str | None = None


class DebateMessage(BaseEvent):
    """One turn of a debate, sent as soon as it is spoken (``agent`` is the speaker)."""

    kind: Literal["debate_message"] = "debate_message"
    symbol: str
    debate: Literal["investment", "risk"]
    round: int = Field(description="The round of the debate the turn belongs to.")
    part: Literal["argument", "rebuttal"] = Field(
        "argument", description="The speaker's case, or its answer to the others' case."
    )
    text: str
    conviction: float | None = Field(None, description="A researcher's conviction.")
    size: float | None = Field(None, description="A risk analyst's recommended size.")


class ReflectionWritten(BaseEvent):
    """A past decision looked back on after its horizon, and the lesson stored in memory.

    Emitted in the run that reflected, and recorded on the decision's own run (``run_id``)
    as the mark that it was reflected on."""

    kind: Literal["reflection_written"] = "reflection_written"
    symbol: str
    decision_run: str
    decided_at: datetime
    written_at: datetime
    action: str
    return_pct: float | None
    lesson: str
    memory_id: str


class GateDecided(BaseEvent):
    """The strategy lab's quality gate decided on one iteration (``agent`` is the gate)."""

    kind: Literal["gate_decided"] = "gate_decided"
    symbol: str
    iteration: int
    decision: str
    best_variant: str | None
    best_score: float
    reasoning: str


_ANY_EVENT: TypeAdapter[BaseEvent] = TypeAdapter(
    Annotated[
        agent_events.Event
        | StepStarted
        | StepFinished
        | DebateMessage
        | ReflectionWritten
        | GateDecided,
        Field(discriminator="kind"),
    ]
)


def parse_event(body: dict[str, Any]) -> BaseEvent | None:
    """A stored event back as its model (what a run's recorder wrote); None for a kind this
    version does not know."""
    try:
        return _ANY_EVENT.validate_python(body)
    except ValidationError:
        return None
