"""One question in flight, as one node of its graph sees it: the state machine, the
events, the tool calls.

Every event of a node goes through :meth:`Question.emit`: to the run (recorded, all but
the token deltas, and forwarded to the front end) and read for the tool calls the result
and the audit log list. When the answer starts streaming during a tool loop, the state
moves from EXECUTING to RESPONDING. What a node saw goes back into the graph's state
(:meth:`Question.update`), so the next node, a resumed run or a worker carries on from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from typing_extensions import TypedDict

from alphadesk.agent import events as ev
from alphadesk.pipelines.assistant.events import NumbersChecked, State, StateChanged
from alphadesk.pipelines.assistant.models import NumberCheck, ToolCallRecord
from alphadesk.pipelines.models import AgentReport

__all__ = ["CallRecord", "Question", "QuestionUpdate"]

_ANSWERING = "answer"


@dataclass
class CallRecord:
    """One tool call as the events told it: for the result and the audit log."""

    tool: str
    agent: str
    arguments: str
    ok: bool | None = None
    seconds: float | None = None
    detail: str = ""

    def as_result(self) -> ToolCallRecord:
        return ToolCallRecord(
            tool=self.tool,
            arguments=self.arguments,
            ok=bool(self.ok),
            seconds=self.seconds,
            error=None if self.ok else self.detail or "did not finish",
        )


class QuestionUpdate(TypedDict, total=False):
    """What one node's question adds to the graph's state (a part of ``ChatState``)."""

    phase: State
    calls: list[CallRecord]
    agents: list[AgentReport]
    error: str


@dataclass
class Question:
    """The state of one question while one node works on it."""

    run_id: str
    forward: ev.EventSink
    state: State = "IDLE"
    calls: dict[str, CallRecord] = field(default_factory=dict)
    reports: list[AgentReport] = field(default_factory=list)
    error: str | None = None

    @classmethod
    def at(cls, run_id: str, forward: ev.EventSink, graph_state: Mapping[str, Any]) -> Question:
        """The question where the graph's state left it."""
        phase: State = graph_state.get("phase", "IDLE")
        return cls(run_id, forward, state=phase)

    @property
    def ids(self) -> dict[str, str]:
        return {"run_id": self.run_id, "agent": "assistant"}

    def emit(self, event: ev.BaseEvent) -> None:
        if isinstance(event, ev.TextDelta):
            if event.agent == _ANSWERING and self.state == "EXECUTING":
                self.to("RESPONDING")
        else:
            self._track(event)
        self.forward(event)

    def _track(self, event: ev.BaseEvent) -> None:
        if isinstance(event, ev.ToolStarted):
            self.calls[event.call_id] = CallRecord(event.tool, event.agent, event.arguments)
        elif isinstance(event, ev.ToolFinished) and event.call_id in self.calls:
            call = self.calls[event.call_id]
            call.ok, call.seconds, call.detail = True, event.seconds, event.result
        elif isinstance(event, ev.ToolFailed) and event.call_id in self.calls:
            call = self.calls[event.call_id]
            call.ok, call.detail = False, event.error

    def to(self, state: State, reason: str | None = None) -> None:
        if state == self.state:
            return
        previous, self.state = self.state, state
        self.emit(StateChanged(**self.ids, previous=previous, state=state, reason=reason))

    def fail(self, reason: str) -> None:
        self.error = reason
        self.to("ERROR", reason)

    def check(self, numbers: NumberCheck) -> NumberCheck:
        """``numbers``, announced."""
        self.emit(NumbersChecked(**self.ids, check=numbers))
        return numbers

    def update(self) -> QuestionUpdate:
        """What this node adds to the graph's state: where the state machine is, the
        tool calls it made, how its agents ran, and its error if it failed."""
        update: QuestionUpdate = {
            "phase": self.state,
            "calls": list(self.calls.values()),
            "agents": list(self.reports),
        }
        if self.error:
            update["error"] = self.error
        return update
