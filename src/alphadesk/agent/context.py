"""What a tool receives besides its arguments."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, TypeVar

from alphadesk.agent.events import BaseEvent, EventSink
from alphadesk.agent.usage import UsageLedger

__all__ = ["RunContext"]

DepsT = TypeVar("DepsT")


def _discard(_event: BaseEvent) -> None:
    return None


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
        if self.as_of.tzinfo is None:
            raise ValueError(
                "RunContext.as_of must be timezone-aware (e.g. datetime(..., tzinfo=UTC))"
            )
