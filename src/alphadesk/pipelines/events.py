"""Pipeline-level events, alongside the engine's agent events."""

from __future__ import annotations

from typing import Literal

from alphadesk.agent.events import BaseEvent

__all__ = ["StepFinished", "StepStarted"]


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
