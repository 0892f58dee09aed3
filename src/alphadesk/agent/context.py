"""What a run shares with its agents and tools: the run's scope and each call's context."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, TypeVar

from alphadesk.agent.events import BaseEvent, EventSink
from alphadesk.agent.usage import UsageLedger, UsageLimits

__all__ = ["RunContext", "RunScope"]

DepsT = TypeVar("DepsT")


def _discard(_event: BaseEvent) -> None:
    return None


def _new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def _require_aware(owner: str, as_of: datetime) -> None:
    if as_of.tzinfo is None:
        raise ValueError(f"{owner}.as_of must be timezone-aware (e.g. datetime(..., tzinfo=UTC))")


@dataclass(frozen=True)
class RunScope:
    """The run an agent runs in: the same for every agent of one pipeline run.

    Attributes:
        as_of: The instant the run is about; tools must not use anything known after it.
        run_id: The run the agent's calls and events belong to (a new id by default).
        ledger: Every model call of the run, shared by its agents (a new one by default).
        limits: The run's hard budgets, checked against the ledger (none by default).
        on_event: Who watches the run's events (nobody by default).
    """

    as_of: datetime
    run_id: str = field(default_factory=_new_run_id)
    ledger: UsageLedger = field(default_factory=UsageLedger)
    limits: UsageLimits = field(default_factory=UsageLimits)
    on_event: EventSink | None = None

    def __post_init__(self) -> None:
        _require_aware("RunScope", self.as_of)


@dataclass(frozen=True)
class RunContext(Generic[DepsT]):
    """The dependencies of one run, handed to every tool as its first parameter.

    Attributes:
        deps: The caller's dependencies (a data provider, a run directory, ...).
        as_of: The instant the run is about; tools must not use anything known after it.
        run_id: The run this call belongs to.
        agent: The agent making the call.
        ledger: Every model call of the run so far.
        emit: Sends an event to whoever watches the run.
        tool_name: The tool being called, when inside a tool.
        retry: How many times this tool has already been retried in this run.
    """

    deps: DepsT
    as_of: datetime
    run_id: str
    agent: str
    ledger: UsageLedger = field(default_factory=UsageLedger)
    emit: EventSink = _discard
    tool_name: str | None = None
    tool_call_id: str | None = None
    retry: int = 0

    def __post_init__(self) -> None:
        _require_aware("RunContext", self.as_of)

    def subrun(self) -> RunScope:
        """The scope of an agent a tool runs: this run's instant, id, ledger and events,
        under budgets of its own."""
        return RunScope(
            as_of=self.as_of, run_id=self.run_id, ledger=self.ledger, on_event=self.emit
        )
